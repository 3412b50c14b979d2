import { InvalidOptionError } from "../errors/invalid-option-error.js";
import type { RetryReflectPlugin } from "../plugin.js";
import { isRecord } from "./host-options.js";
import { isPlugin } from "./is-plugin.js";

/**
 * The names of the tools whose circuit is not open (a half-open circuit counts as available: the
 * next call is its probe), in the object's order: a host's `activeTools` for its next step, so that
 * the model stops seeing a broken tool and sees it again once its circuit may be probed.
 *
 * @param expected What `tools` should be, for the error a bad one throws ("an object of AI SDK tools").
 */
export function availableToolNames<TOOLS extends object>(
  plugin: RetryReflectPlugin,
  tools: TOOLS,
  expected: string,
): Array<Extract<keyof TOOLS, string>> {
  if (!isPlugin(plugin)) throw new InvalidOptionError("plugin", plugin, "a RetryReflectPlugin");
  if (!isRecord(tools) || Array.isArray(tools)) throw new InvalidOptionError("tools", tools, expected);
  const names: Array<Extract<keyof TOOLS, string>> = [];
  for (const name of Object.keys(tools)) {
    if (plugin.circuitState(name) !== "open") names.push(name as Extract<keyof TOOLS, string>);
  }
  return names;
}
