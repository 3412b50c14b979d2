import type { RetryReflectOptions } from "../config/options.js";
import { isNonArrayObject } from "../errors/error-codes.js";
import { InvalidOptionError } from "../errors/invalid-option-error.js";
import type { RetryReflectPlugin } from "../plugin.js";
import { type HostToolCall, runToolCall } from "./host-call.js";
import {
  type AnnotatedToolOptions,
  type CheckedAnnotatedToolOptions,
  checkAnnotatedToolOptions,
  isPlugin,
  pluginOf,
  randomScope,
} from "./host-options.js";
import { valueOrToolError } from "./retry-reflect-tool-error.js";

/** What one wrap of a host's tools gives each tool's binding: the plugin, the adapter options (checked) and the wrap's random scope. */
export interface ToolSetWrap<Ask> {
  readonly plugin: RetryReflectPlugin;
  readonly options: CheckedAnnotatedToolOptions<Ask>;
  /** `randomScope(scopePrefix)`, made once per wrap: the default scope of calls that tell no run of their own. */
  readonly fallbackScope: string;
}

/** What an adapter of tools by name (the AI SDK's `ToolSet`, Mastra's tools) says once about its host. */
export interface ToolSetHost<B, C, Ask> {
  /** The key a wrapped tool keeps its original under (a `Symbol.for` of the adapter's own). */
  readonly key: symbol;
  /** The prefix of each wrap's random scope (`ai-sdk`: `ai-sdk/<uuid>`). */
  readonly scopePrefix: string;
  /** Throws `InvalidOptionError` unless `tools` is an object of the host's tools, naming the bad one. */
  readonly checkTools: (tools: unknown) => void;
  /** Reads, once per tool, what its calls share; undefined keeps the tool as given (a tool without `execute`). */
  readonly bind: (toolName: string, tool: Record<string, unknown>, wrap: ToolSetWrap<Ask>) => B | undefined;
  /** One call of a bound tool, as the seam (`runToolCall`) runs it. */
  readonly callOf: (binding: B, input: unknown, context: C) => HostToolCall<unknown>;
  /**
   * What a wrapped `execute` resolves to when its call rejects with the host's control flow (an
   * error its call's `readThrown` passed through): Mastra's suspension is the value its tool
   * returned, handed back to Mastra. It rethrows every error it does not own. @default none: a
   * rejection reaches the host as it is
   */
  readonly settle?: (error: unknown) => unknown;
}

/** An adapter's `withRetryReflect(tools, pluginOrOptions, adapterOptions?)`: the same tools, each `execute` run under the plugin. */
export type ToolSetWrapper<Tools extends object, Options> = <TOOLS extends Tools>(
  tools: TOOLS,
  pluginOrOptions: RetryReflectPlugin | RetryReflectOptions,
  adapterOptions?: Options,
) => TOOLS;

/**
 * Makes a host's `withRetryReflect` over tools by name. It checks its arguments, then returns a copy
 * of each tool whose `execute(input, context)` runs `host.callOf(binding, input, context)` under the
 * plugin: it resolves to the tool's value, or rejects with a `RetryReflectToolError` carrying the
 * model's text (or, with `host.settle`, resolves to what it makes of the host's control flow).
 * `host.bind` is asked once per tool. A copy keeps the host's prototype and every own property, and
 * its original under `host.key`: wrapping wrapped tools again wraps the originals, never stacks; the
 * originals are left as they were. The tools are copied by their own names as data properties, so
 * that a tool named `__proto__` or `constructor` (any MCP server may name its tools so) is a tool of
 * the copy like any other, never its prototype.
 */
export function toolSetWrapper<Tools extends object, Options extends AnnotatedToolOptions<Ask>, B, C, Ask>(
  host: ToolSetHost<B, C, Ask>,
): ToolSetWrapper<Tools, Options> {
  return <TOOLS extends Tools>(
    tools: TOOLS,
    pluginOrOptions: RetryReflectPlugin | RetryReflectOptions,
    adapterOptions?: Options,
  ): TOOLS => {
    host.checkTools(tools);
    const options = checkAnnotatedToolOptions<Ask>(adapterOptions);
    const plugin = pluginOf(pluginOrOptions);
    const wrap: ToolSetWrap<Ask> = { plugin, options, fallbackScope: randomScope(host.scopePrefix) };
    const { key, settle } = host;
    const wrapped: Record<string, unknown> = {};
    for (const [toolName, given] of Object.entries(tools)) {
      const tool = ((given as { [key]?: Record<string, unknown> })[key] ?? given) as Record<string, unknown>;
      const binding = host.bind(toolName, tool, wrap);
      if (binding === undefined) {
        defineTool(wrapped, toolName, given);
        continue;
      }
      const execute = (input: unknown, context: C): Promise<unknown> => {
        const done = runToolCall(plugin, host.callOf(binding, input, context), valueOrToolError);
        return settle === undefined ? done : done.catch(settle);
      };
      defineTool(wrapped, toolName, withExecute(tool, execute, key));
    }
    return wrapped as TOOLS;
  };
}

/** `tools[toolName] = tool` as an own data property: assigning `__proto__` would set the copy's prototype instead. */
function defineTool(tools: Record<string, unknown>, toolName: string, tool: unknown): void {
  Object.defineProperty(tools, toolName, { value: tool, writable: true, enumerable: true, configurable: true });
}

function withExecute(tool: object, execute: (...args: never[]) => unknown, key: symbol): object {
  const descriptors: PropertyDescriptorMap = Object.getOwnPropertyDescriptors(tool);
  descriptors.execute = { value: execute, writable: true, enumerable: true, configurable: true };
  descriptors[key] = { value: tool };
  return Object.create(Object.getPrototypeOf(tool) as object | null, descriptors) as object;
}

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
  if (!isNonArrayObject(tools)) throw new InvalidOptionError("tools", tools, expected);
  return Object.keys(tools).filter((name) => plugin.circuitState(name) !== "open") as Array<Extract<keyof TOOLS, string>>;
}
