import { withRetryAfter } from "../backoff/backoff.js";
import { withText } from "../cleaning/clean-error.js";
import { ErrorCodes, type ErrorKind } from "../errors/error-codes.js";
import type { ToolError } from "../errors/tool-error.js";
import type { FailedOutcome, FailureReason, ReflectOutcome, ToolEffect } from "../outcome.js";
import { temporaryAction, UNKNOWN_OUTCOME_ACTION, WRITE_TIMEOUT_ACTION } from "../texts/model-texts.js";
import type { TrackedAttempts } from "./attempt-tracker.js";
import { exhaustedError, failedOutcome, reflectOutcome } from "./build-outcome.js";
import type { CallRun } from "./call-state.js";
import type { Engine } from "./engine.js";

// What to do about one recorded failure: `decide`, a pure function of the facts (tested from a
// table), and `applyDecision`, which carries the decision out.

/** What is known when a failure has been recorded. */
export interface FailureFacts {
  /** `tool`: the tool ran and failed; `refusal`: the call was turned away before it ran (a conflict, the store). */
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
  /** A refusal whose operation did not run or is still running (`IN_PROGRESS`, `STORE_UNAVAILABLE`, `OVERLOADED`): the same call, later. */
  readonly sameCallLater?: boolean;
  /** `backoff(attempt)`, already jittered; for a refusal, unused. */
  readonly backoffMs: number;
  /** A `Retry-After` hint of the failure, in ms. */
  readonly retryAfterMs: number | undefined;
  /** In-place retries this call has made already. */
  readonly inPlaceRetries: number;
  /** From the call's start to this failure. */
  readonly sinceCallStartMs: number;
  /** From the first failure of the tool's failing row in the scope to this failure (0 for the first). */
  readonly failingForMs: number;
  /** The failures of the row in the scope, this one included. */
  readonly failures: number;
  /** A call of the tool succeeded in another scope since this row began failing: the tool is not down (an overloaded or flaky one). */
  readonly succeededElsewhere: boolean;
}

export interface DecisionPolicy {
  readonly maxRetries: number;
  readonly maxBackoffMs: number;
  readonly patienceMs: number;
  readonly giveUpMs: number;
  readonly waitForRecovery: boolean;
}

/**
 * Whether a failure counts for the tool's circuit breaker (pure, tested from a table): bad arguments
 * only with `circuitBreakerCountsInvalidArguments`; a permission denial (`PERMISSION_DENIED`, about
 * what the arguments name) as bad arguments are, or when the row's previous failure was one too
 * (then the tool, not one argument, is likely refused); every other failure counts.
 */
export function countsForBreaker(
  kind: ErrorKind,
  code: string,
  previousCode: string | undefined,
  countsInvalidArguments: boolean,
): boolean {
  if (kind === "invalid_arguments") return countsInvalidArguments;
  if (code === ErrorCodes.PERMISSION_DENIED) return countsInvalidArguments || previousCode === ErrorCodes.PERMISSION_DENIED;
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
 * The decision after a failure: a pure function of what is known and the policy. The order is the
 * contract: not recoverable, then a budget spent by a parallel call, then a refusal (the same call
 * later, or other arguments), then the give-up time; then a transient failure is retried in place
 * while the next attempt starts within the call's patience (at least `maxRetries` times; an open
 * circuit's remaining time is waited only with `waitForRecovery`), else told as temporary; any
 * other failure is reflected until the model's corrections (`maxRetries`) are spent.
 */
export function decide(facts: FailureFacts, policy: DecisionPolicy): Decision {
  if (!facts.recoverable) return { kind: "stop", reason: "not_recoverable" };
  if (facts.budgetSpent) return { kind: "stop", reason: "exhausted" };
  if (facts.origin === "refusal") {
    if (facts.reflections > policy.maxRetries) return { kind: "stop", reason: "exhausted" };
    // Nothing ran: the model decides what to change; wait only what the refusal asks.
    const wait = facts.retryAfterMs === undefined ? 0 : Math.min(facts.retryAfterMs, policy.maxBackoffMs);
    return { kind: "reflect", delayMs: wait, text: facts.sameCallLater === true ? "retry_later" : "reflection" };
  }
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

/**
 * Carries a decision out: the events, the scope's counter (the gate time, the exhausted stop) and
 * the outcome; for an in-place retry, the delay to wait. `error` is already clean.
 */
export function applyDecision(
  engine: Engine,
  run: CallRun,
  tracked: TrackedAttempts,
  error: ToolError,
  decision: Decision,
  origin: "tool" | "refusal",
): ReflectOutcome | FailedOutcome | number {
  const { options, notifier, tracker } = engine;
  switch (decision.kind) {
    case "stop": {
      if (decision.reason === "not_recoverable") return failedOutcome(engine, run, error, "not_recoverable");
      // Exhausted: the scope stops using the tool (with global tracking there is no task to stop: the count starts again).
      const mark = { at: options.clock.now(), message: error.message, lastErrorCode: error.code, lastError: error };
      if (options.trackingScope === "global") tracker.clear(run.counterKey, run.toolName);
      else tracked.exhausted = mark;
      const resetMs = run.policy.exhaustedResetMs;
      notifier.emit(
        "retries_exhausted",
        run.toolName,
        run.info,
        options.trackingScope === "global" || resetMs === 0
          ? { tool_name: run.toolName, attempts: run.attempt, error: error.message }
          : { tool_name: run.toolName, attempts: run.attempt, error: error.message, retry_after_ms: resetMs },
      );
      return failedOutcome(engine, run, exhaustedError(run, mark), "exhausted");
    }
    case "retry":
    case "reflect": {
      const inPlace = decision.kind === "retry";
      if (origin === "tool") {
        tracked.lastDelayMs = decision.delayMs;
        notifier.emit("retry", run.toolName, run.info, {
          tool_name: run.toolName,
          attempt: run.attempt,
          max: run.policy.maxRetries,
          backoff_ms: decision.delayMs,
          error: error.message,
          error_code: error.code,
          mode: inPlace ? "in_place" : "reflect",
        });
      }
      if (inPlace) return decision.delayMs;
      // The gate: a refusal moves it only when it asks for a wait.
      if (origin === "tool" || error.retryAfterMs !== undefined) tracked.readyAt = options.clock.now() + decision.delayMs;
      let shown = error;
      if (decision.kind === "reflect" && decision.text === "unknown_outcome")
        shown = withText(error, { suggestedAction: UNKNOWN_OUTCOME_ACTION });
      // A failure of the tool told as temporary asks for the same call after the wait (a write cut
      // off at its limit, and a spent budget, keep their own action, which says why).
      const ownAction = error.suggestedAction === WRITE_TIMEOUT_ACTION || error.code === ErrorCodes.RETRY_BUDGET_SPENT;
      if (decision.kind === "reflect" && decision.text === "retry_later" && origin === "tool" && !ownAction) {
        shown = withText(error, { suggestedAction: temporaryAction(run.toolName) });
      }
      // The wait the model is told is the one the gate keeps (a server's Retry-After, capped); a
      // temporary failure always says it: the tool may work again after it.
      const told = decision.kind === "reflect" && decision.text === "retry_later";
      if ((told || shown.retryAfterMs !== undefined) && shown.retryAfterMs !== decision.delayMs) {
        shown = withText(shown, { retryAfterMs: decision.delayMs });
      }
      return reflectOutcome(
        engine,
        run,
        shown,
        origin === "refusal",
        decision.kind === "reflect" ? decision.text : "reflection",
        decision.delayMs,
      );
    }
  }
}
