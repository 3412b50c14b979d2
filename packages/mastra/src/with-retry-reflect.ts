import type { ToolExecutionContext } from "@mastra/core/tools";
import type { RetryReflectOptions, RetryReflectPlugin, ToolEffect } from "@retry-reflect/core";
import {
  declaresField,
  type EffectHints,
  effectOfAnnotations,
  isRecord,
  keyFieldOf,
  pluginOf,
  randomScope,
  runToolCall,
  valueOrToolError,
} from "@retry-reflect/core/adapter";
import { type CheckedOptions, checkAdapterOptions, checkTools, type WithRetryReflectOptions } from "./adapter-options.js";
import { type Execute, MastraToolCall, type ToolBinding } from "./mastra-tool-call.js";

/** The tool a wrapped tool was made from: wrapping wrapped tools again wraps the originals, never stacks. */
const ORIGINAL = Symbol.for("retry-reflect.mastra.original-tool");

function originalOf(tool: Record<string, unknown>): Record<string, unknown> {
  return (tool as { [ORIGINAL]?: Record<string, unknown> })[ORIGINAL] ?? tool;
}

/**
 * Returns the same tools (Mastra tools, what `createTool` returns, by name) with each tool's
 * `execute` run under the plugin:
 *
 * ```ts
 * const plugin = RetryReflectPlugin.create({ maxRetries: 3 });
 * const agent = new Agent({
 *   name: "assistant",
 *   instructions,
 *   model,
 *   tools: withRetryReflect({ getWeather, sendEmail }, plugin, { toolEffects: { sendEmail: "write" } }),
 * });
 * ```
 *
 * - a transient failure (network, 429, 5xx) is retried in place after a backoff, aborted by the
 *   run's `abortSignal`;
 * - a failure the model can fix reaches it as the tool's error: the reflection prompt and the
 *   structured error (Mastra shows the model a thrown error's message);
 * - a non-recoverable or exhausted failure, or an open circuit, tells the model to stop;
 * - a `write` is replayed from the idempotency store, never run twice.
 *
 * Each wrapped tool is a copy of the original (a Mastra `Tool`, its id, schemas,
 * `requireApproval`, suspend/resume schemas and hooks kept); approvals and suspensions happen
 * around `execute` and pass untouched. Attempts are counted per run (the run id Mastra gives the
 * tool) and write results replayed per namespace (default: the scope). AI SDK tools are refused:
 * wrap them with `@retry-reflect/ai-sdk`, whose tools a Mastra agent runs as they are.
 *
 * @param tools Mastra tools by name (the name the model calls).
 * @param pluginOrOptions A plugin (share one across calls: its circuits and stores), or its options.
 * @throws InvalidOptionError for a bad argument, naming it and the value.
 */
export function withRetryReflect<TOOLS extends Record<string, object>>(
  tools: TOOLS,
  pluginOrOptions: RetryReflectPlugin | RetryReflectOptions,
  adapterOptions?: WithRetryReflectOptions,
): TOOLS {
  checkTools(tools);
  const options = checkAdapterOptions(adapterOptions);
  const plugin = pluginOf(pluginOrOptions);
  const fallbackScope = randomScope("mastra");
  const wrapped: Record<string, unknown> = {};
  for (const [toolName, given] of Object.entries(tools)) {
    const tool = originalOf(given);
    const binding: ToolBinding = {
      toolName,
      tool,
      execute: tool.execute as Execute,
      description: typeof tool.description === "string" ? tool.description : undefined,
      effect: effectOf(plugin, options, toolName, tool),
      scope: options.scope,
      namespace: options.namespace,
      declaresKey: declaresField(tool.inputSchema, keyFieldOf(plugin, toolName)),
      fallbackScope,
    };
    wrapped[toolName] = wrapTool(plugin, tool, binding);
  }
  return wrapped as TOOLS;
}

/** A copy of the tool (its prototype, Mastra's mark and every own property kept) whose `execute` runs through the plugin. */
function wrapTool(plugin: RetryReflectPlugin, tool: object, binding: ToolBinding): object {
  const execute = (input: unknown, context?: ToolExecutionContext): Promise<unknown> =>
    runToolCall(plugin, new MastraToolCall(binding, input, context), valueOrToolError);
  const descriptors: PropertyDescriptorMap = Object.getOwnPropertyDescriptors(tool);
  descriptors.execute = { value: execute, writable: true, enumerable: true, configurable: true };
  descriptors[ORIGINAL] = { value: tool };
  return Object.create(Object.getPrototypeOf(tool) as object | null, descriptors) as object;
}

/**
 * The adapter's effect for a tool, else (when the plugin names none and annotations are trusted) the
 * one its MCP annotations suggest (`mcp.annotations`); undefined lets the plugin decide.
 */
function effectOf(
  plugin: RetryReflectPlugin,
  options: CheckedOptions,
  toolName: string,
  tool: Record<string, unknown>,
): ToolEffect | undefined {
  const given = options.toolEffects[toolName];
  if (given !== undefined || !options.trustAnnotations || plugin.options.toolEffects[toolName] !== undefined) return given;
  const mcp = tool.mcp;
  return isRecord(mcp) ? effectOfAnnotations(mcp.annotations as EffectHints | undefined) : undefined;
}
