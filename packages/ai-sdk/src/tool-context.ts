import type { ToolContext } from "@retry-reflect/core";

const CONTEXT = Symbol.for("retry-reflect.ai-sdk.tool-context");

/** The execution options a wrapped tool's original `execute` receives: the AI SDK's, with the attempt's signal and context. */
export function optionsWithContext<O extends object>(options: O, context: ToolContext): O {
  const signal = context.signal ?? (options as { abortSignal?: AbortSignal }).abortSignal;
  return { ...options, abortSignal: signal, [CONTEXT]: context };
}

/**
 * The core's `ToolContext` of this attempt (`{ attempt, signal, idempotencyKey?, toolName,
 * callId }`), read from the execution options a tool's `execute` was given under
 * `withRetryReflect`; `undefined` elsewhere. A `write` tool forwards `idempotencyKey` downstream
 * (an `Idempotency-Key` header).
 *
 * ```ts
 * execute: async (input, options) => {
 *   const key = getToolContext(options)?.idempotencyKey ?? input.idempotency_key;
 *   return mailer.send(input, { headers: { "Idempotency-Key": key }, signal: options.abortSignal });
 * }
 * ```
 */
export function getToolContext(options: unknown): ToolContext | undefined {
  if (typeof options !== "object" || options === null) return undefined;
  return (options as { [CONTEXT]?: ToolContext })[CONTEXT];
}
