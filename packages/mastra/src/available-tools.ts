import type { RetryReflectPlugin } from "@retry-reflect/core";
import { availableToolNames } from "@retry-reflect/core/adapter";

/**
 * The names of the tools whose circuit is not open (a half-open circuit counts as available: the
 * next call is its probe), in the tools' order. For the agent's `prepareStep`, so that the model
 * stops seeing a broken tool and sees it again once its circuit may be probed:
 *
 * ```ts
 * agent.generate(prompt, { prepareStep: () => ({ activeTools: availableTools(plugin, tools) }) })
 * ```
 */
export function availableTools<TOOLS extends Record<string, object>>(
  plugin: RetryReflectPlugin,
  tools: TOOLS,
): Array<Extract<keyof TOOLS, string>> {
  return availableToolNames(plugin, tools, "an object of Mastra tools, by name");
}
