import type { ToolError } from "../errors/tool-error.js";
import type { CircuitState, FailureReason, ToolEffect } from "../outcome.js";

export type EventLevel = "WARN" | "INFO";

/** One logical tool call (in-place attempts included), as observers see it. Same object from start to end. */
export interface CallInfo {
  readonly toolName: string;
  readonly callId: string | undefined;
  /** The attempt-tracking scope (an agent run, or `"global"`). */
  readonly scope: string;
  readonly effect: ToolEffect;
  /**
   * The tool's arguments (for a `write` tool, without its `idempotency.keyField` member).
   * Telemetry must not record them unless the user opts in.
   */
  readonly args: unknown;
  /** `clock.now()` when the call started. */
  readonly startTime: number;
  /** The tool's description, when the caller gave one (`call.description`). */
  readonly description: string | undefined;
  /** The tool's GenAI type (`"function"`, ...), when the caller gave one (`call.toolType`). */
  readonly toolType: string | undefined;
}

/**
 * `aborted`: the caller's signal aborted; `interrupted`: a `passThrough` (control-flow) error was
 * rethrown; `error`: anything else thrown out of `execute` (a programmer error, `RetriesExhaustedError`).
 */
export type CallOutcomeStatus = "success" | "reflect" | "failed" | "aborted" | "interrupted" | "error";

/** How a logical call ended. */
export interface CallEnd {
  readonly status: CallOutcomeStatus;
  /** Attempts made inside this logical call (in-place retries included). */
  readonly attempts: number;
  /** The attempt number in its scope when it ended (counts reflections too). */
  readonly attempt: number;
  readonly replayed: boolean;
  /** For `success`: true when the value is the policy's `fallback`, standing in for a final failure. */
  readonly fallback?: boolean;
  readonly durationMs: number;
  readonly circuitState: CircuitState;
  /** For `reflect`/`failed`: the structured error. */
  readonly error?: ToolError;
  /** For `failed`: why it stopped. */
  readonly reason?: FailureReason;
  /** For `success`: the tool's result. Telemetry must not record it unless the user opts in. */
  readonly value?: unknown;
  /** For `aborted`/`interrupted`/`error`: what was thrown out of `execute`. */
  readonly thrown?: unknown;
}

export type FieldValue = string | number | boolean;

interface EventOf<T extends keyof typeof EVENT_MESSAGES, F> {
  readonly type: T;
  readonly level: (typeof EVENT_MESSAGES)[T]["level"];
  /** The verbatim log message. */
  readonly message: (typeof EVENT_MESSAGES)[T]["message"];
  readonly toolName: string;
  /** `clock.now()` when it happened. */
  readonly time: number;
  /** The logical call it belongs to; undefined for breaker moves seen outside a call. */
  readonly call: CallInfo | undefined;
  /** The documented fields, snake_case, in documented order. */
  readonly fields: F;
}

export type RetryEvent = EventOf<
  "retry",
  { tool_name: string; attempt: number; max: number; backoff_ms: number; error: string; error_code: string; mode: "in_place" | "reflect" }
>;
export type RetrySucceededEvent = EventOf<"retry_succeeded", { tool_name: string; attempt: number }>;
export type CircuitOpenedEvent = EventOf<"circuit_opened", { tool_name: string; failures: number; reset_ms: number }>;
export type CircuitHalfOpenedEvent = EventOf<"circuit_half_opened", { tool_name: string }>;
export type CircuitClosedEvent = EventOf<"circuit_closed", { tool_name: string }>;
/** `retry_after_ms` is absent for an isolated circuit (`isolated: true`): it opens only on `reset()`. */
export type CallRejectedEvent = EventOf<"call_rejected", { tool_name: string; retry_after_ms?: number; isolated?: true }>;
export type RetriesExhaustedEvent = EventOf<
  "retries_exhausted",
  { tool_name: string; attempts: number; error: string; retry_after_ms?: number }
>;
/** A call waits at the backoff gate before it runs (after a reflection: the corrected call). */
export type WaitingBeforeRetryEvent = EventOf<"waiting_before_retry", { tool_name: string; wait_ms: number }>;
/**
 * A call met an open circuit due to close within its patience, or one whose probe is running: it
 * waits for the circuit's probe (`waitForRecovery`) instead of failing fast. `wait_ms`: until the
 * circuit lets its probe through, or the probe's lease ends.
 */
export type WaitingForRecoveryEvent = EventOf<"waiting_for_recovery", { tool_name: string; wait_ms: number }>;
/** An attempt ran past `attemptTimeoutMs`: its signal aborted, it failed with `TIMEOUT`. */
export type AttemptTimedOutEvent = EventOf<"attempt_timed_out", { tool_name: string; attempt: number; timeout_ms: number }>;
/** A final failure was replaced by the policy's `fallback` value. */
export type FallbackUsedEvent = EventOf<"fallback_used", { tool_name: string; error_code: string }>;
/** A call turned away before it ran: too many running (`maxConcurrent`), or an identical failed call repeated (`repeatedCallLimit`). */
export type CallRefusedEvent = EventOf<"call_refused", { tool_name: string; reason: "overloaded" | "repeated_call" }>;
/** A transient failure was not retried in place: the tool's retry budget (`retryBudget`) is spent in its window. */
export type RetryBudgetSpentEvent = EventOf<"retry_budget_spent", { tool_name: string; window_ms: number; retry_after_ms: number }>;
export type IdempotentReplayEvent = EventOf<"idempotent_replay", { tool_name: string }>;
export type IdempotencyConflictEvent = EventOf<
  "idempotency_conflict",
  { tool_name: string; reason: "key_required" | "key_reused" | "in_progress" | "in_doubt" }
>;

/** Where a store call failed; `acquire`/`record`/`budget` are the circuit-breaker store's (shared state; `budget`: `shareBudget`). */
export type StoreOperation = "begin" | "complete" | "release" | "acquire" | "record" | "budget";
/** A store call threw, rejected or answered nonsense. `error` is its cleaned message. */
export type StoreErrorEvent = EventOf<
  "store_error",
  { tool_name: string; operation: StoreOperation; error: string; reason?: StoreErrorReason }
>;

/**
 * Why a store operation was not done, when it was the guard's choice rather than a store fault:
 * `too_large` (a result over `idempotency.maxResultBytes`, not stored); `invalid_record` (`begin`
 * found a record the guard cannot use: it does not parse, or has the wrong shape; never replayed,
 * the write is in doubt).
 */
export type StoreErrorReason = "too_large" | "invalid_record";

export type RetryReflectEvent =
  | RetryEvent
  | RetrySucceededEvent
  | CircuitOpenedEvent
  | CircuitHalfOpenedEvent
  | CircuitClosedEvent
  | CallRejectedEvent
  | RetriesExhaustedEvent
  | IdempotentReplayEvent
  | IdempotencyConflictEvent
  | StoreErrorEvent
  | WaitingBeforeRetryEvent
  | WaitingForRecoveryEvent
  | AttemptTimedOutEvent
  | FallbackUsedEvent
  | CallRefusedEvent
  | RetryBudgetSpentEvent;

/** The verbatim message and level of each event type. */
export const EVENT_MESSAGES = {
  retry: { level: "WARN", message: "tool call failed, retrying" },
  retry_succeeded: { level: "INFO", message: "retry succeeded" },
  circuit_opened: { level: "WARN", message: "circuit breaker opened" },
  circuit_half_opened: { level: "INFO", message: "circuit breaker half-open" },
  circuit_closed: { level: "INFO", message: "circuit breaker closed" },
  call_rejected: { level: "WARN", message: "call rejected, circuit open" },
  retries_exhausted: { level: "WARN", message: "retries exhausted" },
  idempotent_replay: { level: "INFO", message: "idempotent replay" },
  idempotency_conflict: { level: "WARN", message: "idempotency conflict" },
  store_error: { level: "WARN", message: "store error" },
  waiting_before_retry: { level: "INFO", message: "waiting before retry" },
  waiting_for_recovery: { level: "INFO", message: "waiting for recovery" },
  attempt_timed_out: { level: "WARN", message: "attempt timed out" },
  fallback_used: { level: "WARN", message: "fallback used" },
  call_refused: { level: "WARN", message: "call refused" },
  retry_budget_spent: { level: "WARN", message: "retry budget spent" },
} as const satisfies Record<string, { level: EventLevel; message: string }>;

/**
 * Subscribes to what the engine decides. Every hook is optional. A hook that throws, or returns a
 * promise that rejects, is ignored: it never breaks a tool call, never changes its outcome, and
 * never becomes an unhandled rejection. With no observer, no event object is built.
 */
export interface RetryReflectObserver {
  /** Every event of the table in the README (`retry`, `retry_succeeded`, `circuit_opened`, ...). */
  onEvent?(event: RetryReflectEvent): void;
  /** A logical call of an in-scope tool starts (before the breaker check). */
  onCallStart?(call: CallInfo): void;
  /**
   * Wraps each run of the tool (each attempt), so that the tool runs inside a context this
   * observer controls (OpenTelemetry: the call's span is active while the tool runs). Should call
   * `run` once and return its result. The tool's own result is the attempt's result whatever this
   * hook returns or throws: `run` runs the tool at most once, and a hook that never calls it
   * gets the tool run without its context.
   */
  runInContext?<T>(call: CallInfo, run: () => T): T;
  /** The logical call ended (any outcome, including a thrown abort). */
  onCallEnd?(call: CallInfo, end: CallEnd): void;
}
