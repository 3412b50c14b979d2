import type { ToolExecutionContext } from "@mastra/core/tools";
import { annotatedBinding, type ToolSetWrapper, toolSetWrapper } from "@retry-reflect/core/adapter";
import { isRecord } from "@retry-reflect/core/adapter/options";
import { checkTools, type ToolCallInput, type WithRetryReflectOptions } from "./adapter-options.js";
import { type Execute, MastraToolCall, settleSuspension, type ToolBinding } from "./mastra-tool-call.js";

/** The tool a wrapped tool was made from: wrapping wrapped tools again wraps the originals, never stacks. */
const ORIGINAL = Symbol.for("retry-reflect.mastra.original-tool");

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
 * - a transient failure that outlasts the call's patience, or an open circuit, tells the model the
 *   tool is temporarily unavailable and when to call it again (a call due at the circuit's probe
 *   within its patience waits for it);
 * - a non-recoverable failure, spent corrections, or a tool that has kept failing for `giveUpMs`
 *   tells the model to stop;
 * - a `write` is replayed from the idempotency store, never run twice.
 *
 * Each wrapped tool is a copy of the original (a Mastra `Tool`, its id, schemas,
 * `requireApproval`, suspend/resume schemas and hooks kept); approvals happen around `execute` and
 * pass untouched, and a call that suspends inside `execute` (`context.agent.suspend()`) is neither
 * a success nor a failure: nothing is stored or counted, and it runs on resume. Attempts are
 * counted per run (the run id Mastra gives the tool) and write results replayed per namespace
 * (default: the run; a call without a run id replays nothing). AI SDK tools are refused: wrap them
 * with `@retry-reflect/ai-sdk`, whose tools a Mastra agent runs as they are.
 *
 * @param tools Mastra tools by name (the name the model calls).
 * @param pluginOrOptions A plugin (share one across calls: its circuits and stores), or its options.
 * @throws InvalidOptionError for a bad argument, naming it and the value.
 */
export const withRetryReflect: ToolSetWrapper<Record<string, object>, WithRetryReflectOptions> = toolSetWrapper<
  Record<string, object>,
  WithRetryReflectOptions,
  ToolBinding,
  ToolExecutionContext | undefined,
  (call: ToolCallInput) => string
>({
  key: ORIGINAL,
  scopePrefix: "mastra",
  checkTools,
  bind: (toolName, tool, { plugin, options, fallbackScope }): ToolBinding => ({
    // A tool of an MCP server carries its annotations in `mcp.annotations`.
    ...annotatedBinding(plugin, options, toolName, tool, isRecord(tool.mcp) ? tool.mcp.annotations : undefined),
    tool,
    execute: tool.execute as Execute,
    scope: options.scope,
    fallbackScope,
  }),
  callOf: (binding: ToolBinding, input, context: ToolExecutionContext | undefined) => new MastraToolCall(binding, input, context),
  settle: settleSuspension,
});
