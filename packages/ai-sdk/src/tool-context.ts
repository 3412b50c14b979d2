import type { ToolContext } from "@retry-reflect/core";
import { getToolContext as contextOf } from "@retry-reflect/core/adapter";

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
  return contextOf(options);
}
