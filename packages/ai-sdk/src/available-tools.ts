import { InvalidOptionError, type RetryReflectPlugin } from "@retry-reflect/core";
import { isPlugin, isRecord } from "@retry-reflect/core/adapter";
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
  if (!isPlugin(plugin)) throw new InvalidOptionError("plugin", plugin, "a RetryReflectPlugin");
  if (!isRecord(tools) || Array.isArray(tools)) {
    throw new InvalidOptionError("tools", tools, "an object of AI SDK tools (a ToolSet)");
  }
  const names: Array<Extract<keyof TOOLS, string>> = [];
  for (const name of Object.keys(tools)) {
    if (plugin.circuitState(name) !== "open") names.push(name as Extract<keyof TOOLS, string>);
  }
  return names;
}
