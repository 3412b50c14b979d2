import { annotatedBinding, type ToolSetWrapper, toolSetWrapper } from "@retry-reflect/core/adapter";
import { isRecord } from "@retry-reflect/core/adapter/options";
import { checkTools, type ScopeInput, type WithRetryReflectOptions } from "./adapter-options.js";
import { AiSdkToolCall, type Execute, type ToolBinding } from "./ai-sdk-tool-call.js";
import type { ToolExecutionOptionsLike, ToolSetLike } from "./tool-types.js";

/** The tool a wrapped tool was made from: wrapping a wrapped `ToolSet` again wraps the originals, never stacks. */
const ORIGINAL = Symbol.for("retry-reflect.ai-sdk.original-tool");

/**
 * Returns the same `ToolSet` with each tool's `execute` run under the plugin: a transient failure is
 * retried in place after a backoff (no extra model step), any other failure goes back to the model
 * as a `tool-error` whose text is the reflection prompt (or the stop instruction) and the
 * structured error, a broken tool trips its circuit, a keyed write runs once. Tools without
 * `execute` (provider-executed, client-side) pass through unchanged.
 *
 * ```ts
 * const plugin = RetryReflectPlugin.create({ maxRetries: 3 });
 * const result = await generateText({
 *   model,
 *   tools: withRetryReflect({ getWeather, sendEmail }, plugin, { toolEffects: { sendEmail: "write" } }),
 *   stopWhen: stepCountIs(5),
 *   prompt,
 * });
 * ```
 *
 * Attempts are counted per scope, and write results replayed per namespace (default: the scope):
 * by default one random scope per `withRetryReflect` call, so pass `scope` (and `namespace`) as
 * functions of the call, or wrap the tools per agent run, for per-conversation budgets and replays. Circuits live in the plugin and are shared by every `ToolSet`
 * wrapped with it. Invalid arguments throw `InvalidOptionError`, naming the option and the value.
 */
export const withRetryReflect: ToolSetWrapper<ToolSetLike, WithRetryReflectOptions> = toolSetWrapper<
  ToolSetLike,
  WithRetryReflectOptions,
  ToolBinding,
  ToolExecutionOptionsLike,
  (call: ScopeInput) => string
>({
  key: ORIGINAL,
  scopePrefix: "ai-sdk",
  checkTools,
  bind: (toolName, tool, { plugin, options, fallbackScope }): ToolBinding | undefined =>
    typeof tool.execute !== "function"
      ? undefined
      : {
          // An `@ai-sdk/mcp` tool carries its server's annotations in `metadata.annotations`.
          ...annotatedBinding(plugin, options, toolName, tool, isRecord(tool.metadata) ? tool.metadata.annotations : undefined),
          tool,
          execute: tool.execute as Execute,
          toolType: tool.type === "provider" || tool.type === "provider-defined" ? "extension" : "function",
          scope: options.scope,
          fallbackScope,
        },
  callOf: (binding: ToolBinding, input, context: ToolExecutionOptionsLike) => new AiSdkToolCall(binding, input, context),
});
