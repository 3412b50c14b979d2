import type { RetryReflectPlugin } from "../plugin.js";
import { valueOrToolError } from "./retry-reflect-tool-error.js";
import { type HostToolCall, runToolCall } from "./run-tool-call.js";

/**
 * Wraps a host's tools by name (the AI SDK's `ToolSet`, Mastra's tools): `bind` reads, once per
 * tool, what its calls share (undefined: the tool is kept as given), and each wrapped tool is a
 * copy of the original whose `execute(input, context)` runs `callOf(binding, input, context)` under
 * the plugin: it resolves to the tool's value, or rejects with a `RetryReflectToolError` carrying
 * the model's text. A copy keeps the host's prototype and every own property, so that the host
 * still knows it for what it is, and keeps its original under `key`: wrapping wrapped tools again
 * wraps the originals, never stacks. The originals are left as they were.
 */
export function wrapTools<B>(
  plugin: RetryReflectPlugin,
  tools: Readonly<Record<string, unknown>>,
  key: symbol,
  bind: (toolName: string, tool: Record<string, unknown>) => B | undefined,
  callOf: (binding: B, input: unknown, context: never) => HostToolCall<unknown>,
): Record<string, unknown> {
  const wrapped: Record<string, unknown> = {};
  for (const [toolName, given] of Object.entries(tools)) {
    const tool = ((given as { [key]?: Record<string, unknown> })[key] ?? given) as Record<string, unknown>;
    const binding = bind(toolName, tool);
    if (binding === undefined) {
      wrapped[toolName] = given;
      continue;
    }
    const execute = (input: unknown, context: never): Promise<unknown> =>
      runToolCall(plugin, callOf(binding, input, context), valueOrToolError);
    wrapped[toolName] = withExecute(tool, execute, key);
  }
  return wrapped;
}

function withExecute(tool: object, execute: (...args: never[]) => unknown, key: symbol): object {
  const descriptors: PropertyDescriptorMap = Object.getOwnPropertyDescriptors(tool);
  descriptors.execute = { value: execute, writable: true, enumerable: true, configurable: true };
  descriptors[key] = { value: tool };
  return Object.create(Object.getPrototypeOf(tool) as object | null, descriptors) as object;
}
