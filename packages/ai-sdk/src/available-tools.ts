import type { RetryReflectPlugin } from "@retry-reflect/core";
import { availableToolNames } from "@retry-reflect/core/adapter";
import type { ToolSetLike } from "./tool-types.js";

/**
 * The names of the tools whose circuit is not open (a half-open circuit counts as available: the
 * next call is its probe), in the `ToolSet`'s order. For `prepareStep`, so that the model stops
 * seeing a broken tool and sees it again once its circuit may be probed:
 *
 * ```ts
 * prepareStep: () => ({ activeTools: availableTools(plugin, tools) })
 * ```
 */
export function availableTools<TOOLS extends ToolSetLike>(plugin: RetryReflectPlugin, tools: TOOLS): Array<Extract<keyof TOOLS, string>> {
  return availableToolNames(plugin, tools, "an object of AI SDK tools (a ToolSet)");
}
