import {
  type FunctionTool,
  type RunContext,
  type ToolInputParameters,
  type ToolOptions,
  type ToolOutputSchema,
  tool,
} from "@openai/agents";
import type { RetryReflectOptions, RetryReflectPlugin } from "@retry-reflect/core";
import { RetryReflectToolError, runToolCall, valueOrToolError } from "@retry-reflect/core/adapter";
import { declaresField, keyFieldOf, pluginOf, randomScope } from "@retry-reflect/core/adapter/options";
import { checkAdapterOptions, checkDefinitions, type WithRetryReflectOptions } from "./adapter-options.js";
import { type CallDetails, type Execute, OpenAiAgentsToolCall, type ToolBinding } from "./openai-agents-tool-call.js";
import { isRejectedInput, rejectedInputOutcome } from "./rejected-input.js";

/**
 * The text the SDK shows the model for a failure when a definition without an output schema has no
 * `errorFunction` of its own (`@openai/agents` 0.20: the default `errorFunction`, not exported). A
 * test checks it against the SDK's.
 */
export const SDK_DEFAULT_ERROR_TEXT = "An error occurred while running the tool. Please try again.";

/** A tool definition: what one passes to the SDK's `tool()`. */
export type ToolDefinition<Context = unknown> = ToolOptions<ToolInputParameters, Context, ToolOutputSchema | undefined>;

type ErrorFunction = (runContext: RunContext<unknown>, error: unknown, details?: object) => unknown;
type EnabledPredicate = (args: { runContext: RunContext<unknown>; agent: unknown }) => boolean | Promise<boolean>;

/**
 * Wraps OpenAI Agents SDK tool definitions (the objects one passes to `tool()`) so that each call
 * runs through retry-reflect, and returns the SDK function tools, built with `tool()`:
 *
 * ```ts
 * const tools = withRetryReflect([weatherDefinition, sendEmailDefinition], plugin);
 * const agent = new Agent({ name: "assistant", instructions, tools });
 * ```
 *
 * - a transient failure (network, 429, 5xx) is retried in place after a backoff, aborted by the
 *   run's signal;
 * - a failure the model can fix reaches it as the tool's output: the reflection prompt and the
 *   structured error (the SDK shows a tool's `errorFunction` text, which the wrapper makes the
 *   outcome's message);
 * - a transient failure that outlasts the call's patience, or an open circuit, tells the model the
 *   tool is temporarily unavailable and when to call it again (a call due at the circuit's probe
 *   within its patience waits for it); with `hideOpenCircuits` a tool is hidden from the model
 *   while its circuit is open;
 * - a non-recoverable failure, spent corrections, or a tool that has kept failing for `giveUpMs`
 *   tells the model to stop;
 * - a `write` is replayed from the idempotency store, never run twice.
 *
 * Everything else of a definition is kept: name, description, parameters, `strict`,
 * `needsApproval` (approvals happen before the call: untouched), timeouts, guardrails, and its own
 * `errorFunction` for the errors the plugin does not own (a tool outside its scope). Arguments the
 * SDK's parser rejects before `execute` reach the plugin as `INVALID_ARGUMENTS` (a reflection, the
 * attempt counted). A tool with an `outputSchema` shows the plugin's outcome
 * only through its own `errorFunction` (which receives the `RetryReflectToolError`): without one,
 * the SDK rethrows, as it does for any failure of such a tool.
 *
 * @param definitions The tool definitions, not built tools: a built tool's `invoke` turns every
 *   error of `execute` into its `errorFunction` text, so a wrapper around it never sees a failure.
 * @param pluginOrOptions A plugin (share one across calls: its circuits and stores), or its options.
 * @throws InvalidOptionError for a bad argument, naming it and the value.
 */
export function withRetryReflect<Context = unknown>(
  definitions: ReadonlyArray<ToolDefinition<Context>>,
  pluginOrOptions: RetryReflectPlugin | RetryReflectOptions,
  adapterOptions?: WithRetryReflectOptions<Context>,
): Array<FunctionTool<Context, ToolInputParameters, unknown>> {
  checkDefinitions(definitions);
  const options = checkAdapterOptions<unknown>(adapterOptions);
  const plugin = pluginOf(pluginOrOptions);
  const fallbackScope = randomScope("openai-agents");
  return definitions.map((given) => {
    const definition = given as unknown as Record<string, unknown> & { execute: Execute };
    const name = typeof definition.name === "string" && definition.name !== "" ? definition.name : definition.execute.name;
    const binding: ToolBinding = {
      toolName: name, // the SDK's own spelling, once `tool()` has made it
      execute: definition.execute,
      description: typeof definition.description === "string" ? definition.description : undefined,
      toolType: "function",
      effect: undefined,
      scope: options.scope,
      namespace: options.namespace,
      declaresKey: undefined,
      fallbackScope,
    };
    const execute = (input: unknown, runContext?: RunContext<unknown>, details?: CallDetails): Promise<unknown> =>
      runToolCall(plugin, new OpenAiAgentsToolCall(binding, input, runContext, details), valueOrToolError);
    const built = tool({
      ...definition,
      name,
      execute,
      errorFunction: errorFunctionOf(definition, plugin, binding),
      ...(options.hideOpenCircuits ? { isEnabled: enabledOf(plugin, binding, definition.isEnabled) } : {}),
    } as unknown as Parameters<typeof tool>[0]) as unknown as FunctionTool<Context, ToolInputParameters, unknown>;
    const toolName = built.name;
    Object.assign(binding, {
      toolName,
      effect: options.toolEffects[toolName],
      declaresKey: declaresField(definition.parameters, keyFieldOf(plugin, toolName)),
    });
    return built;
  });
}

/**
 * The wrapped tool's `errorFunction` (a tool without an output schema): the outcome's message for
 * the plugin's own error, and for arguments the SDK's parser rejected (the plugin's outcome of an
 * `INVALID_ARGUMENTS` attempt); the definition's own `errorFunction` (or the SDK's default) for
 * anything else, and for everything with an output schema.
 */
function errorFunctionOf(definition: Record<string, unknown>, plugin: RetryReflectPlugin, binding: ToolBinding): ErrorFunction {
  const own = definition.errorFunction as ErrorFunction | null | undefined;
  const hasOutputSchema = definition.outputSchema !== undefined;
  const fallback: ErrorFunction | null = own === undefined ? (hasOutputSchema ? null : () => SDK_DEFAULT_ERROR_TEXT) : own;
  const orFallback: ErrorFunction = (runContext, error, details) => {
    if (fallback === null) throw error;
    return fallback(runContext, error, details);
  };
  return (runContext, error, details) => {
    if (hasOutputSchema) return orFallback(runContext, error, details);
    if (RetryReflectToolError.isInstance(error)) return error.message;
    if (!isRejectedInput(error)) return orFallback(runContext, error, details);
    return rejectedInputOutcome(plugin, binding, error, runContext, details as CallDetails | undefined).then((outcome) =>
      outcome.owned ? outcome.output : orFallback(runContext, error, details),
    );
  };
}

/** The definition's `isEnabled` (a boolean or a predicate), and'ed with "its circuit is not open". */
function enabledOf(plugin: RetryReflectPlugin, binding: ToolBinding, own: unknown): EnabledPredicate {
  return (args) => {
    if (plugin.circuitState(binding.toolName) === "open") return false;
    if (typeof own === "function") return (own as EnabledPredicate)(args);
    return typeof own === "boolean" ? own : true;
  };
}
