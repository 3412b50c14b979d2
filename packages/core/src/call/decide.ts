import { withRetryAfter } from "../backoff/backoff.js";
import type { ErrorKind } from "../errors/error-codes.js";
import type { FailureReason, ToolEffect } from "../events/events.js";

/** What is known when a failure has been recorded. */
export interface FailureFacts {
  /** `tool`: the tool ran and failed; `refusal`: the call was turned away before it ran (a conflict, the store). */
  readonly origin: "tool" | "refusal";
  readonly recoverable: boolean;
  readonly kind: ErrorKind;
  /** The number this failure took in its (scope, tool). */
  readonly attempt: number;
  /** The scope's budget was already spent (by a parallel call). */
  readonly budgetSpent: boolean;
  /** Remaining open time when this failure left the circuit open; undefined when it is not. */
  readonly circuitOpenForMs: number | undefined;
  readonly effect: ToolEffect;
  /** A `write` behind an idempotency key (safe to repeat). */
  readonly guarded: boolean;
  /** The failed attempt may still be running (a write cut off by its timeout): never repeated in place. */
  readonly stillRunning?: boolean;
  /** `backoff(attempt)`, already jittered; for a refusal, unused. */
  readonly backoffMs: number;
  /** A `Retry-After` hint of the failure, in ms. */
  readonly retryAfterMs: number | undefined;
}

export interface DecisionPolicy {
  readonly maxRetries: number;
  readonly maxBackoffMs: number;
}

/**
 * - `retry`: run again in place, with the same arguments, after `delayMs`;
 * - `reflect`: hand the model the failure; the next attempt waits `delayMs` (the gate).
 *   `unknownOutcome`: a write without a key failed transiently, so it may have taken effect;
 * - `stop`: final for this tool in this task (or, `circuit_open`, for now).
 */
export type Decision =
  | { readonly kind: "retry"; readonly delayMs: number }
  | { readonly kind: "reflect"; readonly delayMs: number; readonly unknownOutcome: boolean }
  | { readonly kind: "stop"; readonly reason: FailureReason; readonly retryAfterMs?: number };

/**
 * The decision after a failure: a pure function of what is known and the policy. The order is
 * the contract: not recoverable, then the budget (the exhausted stop beats an open circuit), then
 * the circuit this failure left open, then in place (transient and safe to repeat) or reflect.
 */
export function decide(facts: FailureFacts, policy: DecisionPolicy): Decision {
  if (!facts.recoverable) return { kind: "stop", reason: "not_recoverable" };
  if (facts.budgetSpent || facts.attempt > policy.maxRetries) return { kind: "stop", reason: "exhausted" };
  if (facts.origin === "refusal") {
    // Nothing ran: the model decides what to change; wait only what the refusal asks.
    const wait = facts.retryAfterMs === undefined ? 0 : Math.min(facts.retryAfterMs, policy.maxBackoffMs);
    return { kind: "reflect", delayMs: wait, unknownOutcome: false };
  }
  if (facts.circuitOpenForMs !== undefined) return { kind: "stop", reason: "circuit_open", retryAfterMs: facts.circuitOpenForMs };
  const delayMs = withRetryAfter(facts.backoffMs, facts.retryAfterMs, policy.maxBackoffMs);
  const unguardedWrite = facts.effect === "write" && !facts.guarded;
  if (facts.kind === "transient" && !unguardedWrite && facts.stillRunning !== true) return { kind: "retry", delayMs };
  return { kind: "reflect", delayMs, unknownOutcome: unguardedWrite && facts.kind === "transient" };
}
