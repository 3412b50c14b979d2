import type { RunContext } from "@openai/agents";
import type { RetryReflectPlugin, ToolError } from "@retry-reflect/core";
import { RetryReflectToolError, runToolCall, valueOrToolError } from "@retry-reflect/core/adapter";
import { invalidArgumentsError, zodArgumentsError } from "@retry-reflect/core/adapter/failures";
import { type CallDetails, OpenAiAgentsToolCall, type ToolBinding } from "./openai-agents-tool-call.js";

// Arguments the SDK's own parser rejects never reach `execute`: the SDK throws an
// `InvalidToolInputError` ("Invalid JSON input for tool") and asks the tool's `errorFunction`. The
// wrapper hands that failure to the plugin as `INVALID_ARGUMENTS`, as the other adapters do for a
// schema failure, so that the model gets the reflection prompt and the attempt counts. The SDK
// withholds the parser's error (and the call's details) unless sensitive data logging is on
// (`setSensitiveDataLoggingEnabled(true)`, `OPENAI_AGENTS_DONT_LOG_TOOL_DATA=0`): then the fields are
// named; otherwise the model reads that its arguments do not match the tool's schema.

/** The message when the SDK withheld what its parser found. */
export const WITHHELD_INPUT_MESSAGE = "The arguments do not match the tool's parameters schema (the SDK withheld which fields).";

/** The SDK's error for arguments its parser rejected (`InvalidToolInputError`, not exported by `@openai/agents` 0.20). */
export function isRejectedInput(error: unknown): error is Error & { originalError?: unknown; toolInvocation?: { input?: unknown } } {
  return error instanceof Error && error.name === "InvalidToolInputError";
}

/** The model's arguments, when the SDK kept them (its raw JSON text); undefined otherwise. */
function argumentsOf(error: { toolInvocation?: { input?: unknown } }): unknown {
  const input = error.toolInvocation?.input;
  if (typeof input !== "string") return undefined;
  try {
    return JSON.parse(input) as unknown;
  } catch {
    return input;
  }
}

/** The `INVALID_ARGUMENTS` error of a rejected input: the fields, when the SDK kept its parser's (zod) error. */
function invalidInputError(error: { originalError?: unknown }, args: unknown): ToolError {
  const original = error.originalError;
  const message =
    original === undefined ? WITHHELD_INPUT_MESSAGE : original instanceof SyntaxError ? "The arguments are not valid JSON." : undefined;
  return zodArgumentsError(original, args) ?? invalidArgumentsError([], error, message);
}

/** What the plugin made of a rejected input: the tool's output, or nothing (the plugin leaves the tool out). */
export type RejectedInputOutcome = { readonly owned: true; readonly output: unknown } | { readonly owned: false };

/**
 * The plugin's outcome for a rejected input, run as a call of the tool whose attempt fails at once:
 * its text (a reflection, or a stop once the budget is spent), or a `fallback`'s value; not owned
 * when the plugin leaves the tool out (then the definition's own `errorFunction` words it).
 */
export async function rejectedInputOutcome(
  plugin: RetryReflectPlugin,
  binding: ToolBinding,
  error: Error & { originalError?: unknown; toolInvocation?: { input?: unknown } },
  runContext: RunContext<unknown> | undefined,
  details: CallDetails | undefined,
): Promise<RejectedInputOutcome> {
  const args = argumentsOf(error);
  const failure = invalidInputError(error, args);
  const rejected: ToolBinding = {
    ...binding,
    execute: () => {
      throw failure;
    },
  };
  try {
    const output = await runToolCall(plugin, new OpenAiAgentsToolCall(rejected, args, runContext, details), valueOrToolError);
    return { owned: true, output }; // the plugin's `fallback` gave a value
  } catch (thrown) {
    if (RetryReflectToolError.isInstance(thrown)) return { owned: true, output: thrown.message };
    if (thrown === failure) return { owned: false }; // out of the plugin's scope: the tool "ran" and threw
    throw thrown;
  }
}
