import type { CircuitState, ToolEffect } from "@retry-reflect/core";
import type { CallEnd, CallInfo, RetryReflectEvent } from "@retry-reflect/core/events";

/** A hand-made `CallInfo`, as the core passes to observers. */
export function makeCall(
  toolName: string,
  init: { callId?: string; scope?: string; effect?: ToolEffect; args?: unknown; description?: string; toolType?: string } = {},
): CallInfo {
  return {
    toolName,
    callId: init.callId,
    scope: init.scope ?? "run-1",
    effect: init.effect ?? "read",
    args: init.args ?? {},
    startTime: 0,
    description: init.description,
    toolType: init.toolType,
  };
}

/** A hand-made `CallEnd`. */
export function makeEnd(init: Partial<CallEnd> & { status: CallEnd["status"] }): CallEnd {
  return {
    attempts: 1,
    attempt: 1,
    replayed: false,
    durationMs: 0,
    circuitState: "closed" as CircuitState,
    ...init,
  };
}

type EventInit<E extends RetryReflectEvent> = { call?: CallInfo; time?: number; fields: E["fields"] };

/** Builds an event of the given type with the documented level and message. */
export function makeEvent<T extends RetryReflectEvent["type"]>(
  type: T,
  init: EventInit<Extract<RetryReflectEvent, { type: T }>>,
): Extract<RetryReflectEvent, { type: T }> {
  const table = {
    retry: ["WARN", "tool call failed, retrying"],
    retry_succeeded: ["INFO", "retry succeeded"],
    circuit_opened: ["WARN", "circuit breaker opened"],
    circuit_half_opened: ["INFO", "circuit breaker half-open"],
    circuit_closed: ["INFO", "circuit breaker closed"],
    call_rejected: ["WARN", "call rejected, circuit open"],
    retries_exhausted: ["WARN", "retries exhausted"],
    idempotent_replay: ["INFO", "idempotent replay"],
    idempotency_conflict: ["WARN", "idempotency conflict"],
    store_error: ["WARN", "store error"],
    waiting_before_retry: ["INFO", "waiting before retry"],
    waiting_for_recovery: ["INFO", "waiting for recovery"],
    attempt_timed_out: ["WARN", "attempt timed out"],
    fallback_used: ["WARN", "fallback used"],
    call_refused: ["WARN", "call refused"],
    retry_budget_spent: ["WARN", "retry budget spent"],
  } as const;
  const [level, message] = table[type];
  return {
    type,
    level,
    message,
    toolName: init.fields.tool_name,
    time: init.time ?? 0,
    call: init.call,
    fields: init.fields,
  } as unknown as Extract<RetryReflectEvent, { type: T }>;
}
