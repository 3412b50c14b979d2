import { withRetryAfter } from "../backoff/backoff.js";
import type { ResolvedPolicy } from "../config/resolve.js";
import { ErrorCodes, type ErrorKind } from "../errors/error-codes.js";
import type { FailureReason, ToolEffect } from "../outcome.js";

/** What is known when a failure has been recorded. */
export interface FailureFacts {
  /** `tool`: the tool ran and failed; `refusal`: the call was turned away before it ran. */
  readonly origin: "tool" | "refusal";
  readonly recoverable: boolean;
  readonly kind: ErrorKind;
  /** The row's failures the model's arguments could fix (reflected, not transient), this one included if it is one. */
  readonly reflections: number;
  /** The scope's budget was already spent (a parallel call gave up). */
  readonly budgetSpent: boolean;
  /** Remaining open time when this failure left the circuit open; undefined when it is not. */
  readonly circuitOpenForMs: number | undefined;
  readonly effect: ToolEffect;
  /** A `write` behind an idempotency key (safe to repeat). */
  readonly guarded: boolean;
  /** The failed attempt may still be running (a write cut off by its timeout): never repeated in place. */
  readonly stillRunning?: boolean;
  /** A refusal that asks for the same call later (`IN_PROGRESS`, `STORE_UNAVAILABLE`, `OVERLOADED`). */
  readonly sameCallLater?: boolean;
  readonly backoffMs: number;
  readonly retryAfterMs: number | undefined;
  readonly inPlaceRetries: number;
  readonly sinceCallStartMs: number;
  /** From the first failure of the tool's failing row in the scope to this one. */
  readonly failingForMs: number;
  readonly failures: number;
  /** A call of the tool succeeded in another scope since this row began failing: the tool is not down. */
  readonly succeededElsewhere: boolean;
}

export type RefusalFacts = Pick<FailureFacts, "recoverable" | "budgetSpent" | "reflections" | "retryAfterMs" | "sameCallLater">;

export type DecisionPolicy = Pick<ResolvedPolicy, "maxRetries" | "maxBackoffMs" | "patienceMs" | "giveUpMs" | "waitForRecovery">;

/**
 * Whether a failure counts for the tool's circuit breaker: bad arguments only with
 * `circuitBreakerCountsInvalidArguments`; a permission denial as bad arguments are, or after another
 * one (then the tool, not one argument, is likely refused); every other failure counts.
 */
export function countsForBreaker(kind: ErrorKind, code: string, previous: string | undefined, countsInvalidArguments: boolean): boolean {
  if (kind === "invalid_arguments") return countsInvalidArguments;
  if (code === ErrorCodes.PERMISSION_DENIED) return countsInvalidArguments || previous === ErrorCodes.PERMISSION_DENIED;
  return true;
}

/** Which text a reflected failure gets: see {@link Decision}. */
export type ReflectText = "reflection" | "retry_later" | "unknown_outcome";

/**
 * - `retry`: run again in place, with the same arguments, after `delayMs`;
 * - `reflect`: hand the model the failure; the next attempt waits `delayMs` (the gate). `text`
 *   says what the model is asked: `reflection`, to correct its arguments (a failure they can fix);
 *   `retry_later`, the same call again after the wait (the tool is temporarily unavailable, or the
 *   call did not run, or is still running); `unknown_outcome`, a write without a key failed
 *   transiently, so it may have taken effect;
 * - `stop`: final for this tool in this task: not recoverable, or `exhausted` (the model's
 *   corrections are spent, or the tool has kept failing for `giveUpMs`).
 */
export type Decision =
  | { readonly kind: "retry"; readonly delayMs: number }
  | { readonly kind: "reflect"; readonly delayMs: number; readonly text: ReflectText }
  | { readonly kind: "stop"; readonly reason: FailureReason };

/**
 * A pure function of the facts and the policy; the order is the contract: not recoverable, a budget
 * spent by a parallel call, a refusal, the give-up time; then a transient failure is retried in place
 * while the next attempt starts within the call's patience (at least `maxRetries` times; an open
 * circuit's remaining time is waited only with `waitForRecovery`), else told as temporary; any other
 * failure is reflected until the model's corrections (`maxRetries`) are spent.
 */
export function decide(facts: FailureFacts, policy: DecisionPolicy): Decision {
  if (facts.origin === "refusal") return decideRefusal(facts, policy);
  if (!facts.recoverable) return { kind: "stop", reason: "not_recoverable" };
  if (facts.budgetSpent) return { kind: "stop", reason: "exhausted" };
  // The tool has kept failing in this scope for the give-up time, more than `maxRetries` times (two
  // attempts cut off at their limits are not yet a dead tool), and nowhere else has it succeeded
  // meanwhile (an overloaded tool is not a dead one): the stop is true now.
  const keptFailing = facts.failingForMs >= policy.giveUpMs && facts.failures > policy.maxRetries && !facts.succeededElsewhere;
  if (keptFailing) return { kind: "stop", reason: "exhausted" };
  const backoff = withRetryAfter(facts.backoffMs, facts.retryAfterMs, policy.maxBackoffMs);
  const openFor = facts.circuitOpenForMs;
  if (facts.kind !== "transient") {
    if (facts.reflections > policy.maxRetries) return { kind: "stop", reason: "exhausted" };
    // An open circuit turns the call away for its open time: the same call then.
    if (openFor !== undefined) return { kind: "reflect", delayMs: openFor, text: "retry_later" };
    return { kind: "reflect", delayMs: backoff, text: "reflection" };
  }
  const delayMs = openFor === undefined ? backoff : Math.max(backoff, openFor);
  const unguardedWrite = facts.effect === "write" && !facts.guarded;
  if (!unguardedWrite && facts.stillRunning !== true) {
    const patient = facts.sinceCallStartMs + delayMs <= policy.patienceMs && (openFor === undefined || policy.waitForRecovery);
    const floor = openFor === undefined && facts.inPlaceRetries < policy.maxRetries;
    if (patient || floor) return { kind: "retry", delayMs };
  }
  return { kind: "reflect", delayMs, text: unguardedWrite ? "unknown_outcome" : "retry_later" };
}

/** A call turned away before the tool ran: the model decides what to change; the wait is only what the refusal asks. */
export function decideRefusal(facts: RefusalFacts, policy: DecisionPolicy): Decision {
  if (!facts.recoverable) return { kind: "stop", reason: "not_recoverable" };
  if (facts.budgetSpent || facts.reflections > policy.maxRetries) return { kind: "stop", reason: "exhausted" };
  const wait = facts.retryAfterMs === undefined ? 0 : Math.min(facts.retryAfterMs, policy.maxBackoffMs);
  return { kind: "reflect", delayMs: wait, text: facts.sameCallLater === true ? "retry_later" : "reflection" };
}
