import { backoffDelay } from "../backoff/backoff.js";
import type { CircuitPermit } from "../breaker/circuit-breaker.js";
import { classifyError } from "../classify/classify-error.js";
import { sanitizeError, withText } from "../cleaning/clean-error.js";
import { abortReason } from "../clock.js";
import { ErrorCodes } from "../errors/error-codes.js";
import { ToolError } from "../errors/tool-error.js";
import type { GuardRefusal } from "../idempotency/guarded-call.js";
import type { FailedOutcome, ReflectOutcome } from "../outcome.js";
import { exhaustedAction } from "../texts/model-texts.js";
import { lateOf } from "./attempt.js";
import { type CallRun, passesThrough, readingOf } from "./call-state.js";
import { applyDecision, countsForBreaker, decide } from "./decision.js";
import type { Engine } from "./engine.js";
import { libraryView, retryAction } from "./library-view.js";
import { rememberFailedCall } from "./repeated-calls.js";
import { budgetSpent } from "./retry-budget-spent.js";

// After a failed attempt, synchronously: the caller's abort and control flow are rethrown; any
// other failure is classified, recorded (breaker, then the next attempt number of its scope),
// cleaned, decided (`decide`, pure) and applied (`applyDecision`).

/**
 * An outcome, or the delay before an in-place retry. Throws the abort reason, or a pass-through
 * error. `failure` is what gets classified; `thrown` what the tool threw or returned (they differ
 * for a host adapter's call, which reads a thrown error its own way): control flow and the host's
 * retryable mark are asked about `thrown`.
 */
export function afterFailure(
  engine: Engine,
  run: CallRun,
  permit: CircuitPermit,
  failure: unknown,
  thrown: unknown,
): ReflectOutcome | FailedOutcome | number | Promise<ReflectOutcome | FailedOutcome | number> {
  const { breaker, policy } = run;
  if (run.signal?.aborted) {
    // The caller's abort wins over whatever the tool did after it (a tool that ignores its signal).
    breaker.onNeutral(run.breakerKey, permit);
    throw abortReason(run.signal);
  }
  if (passesThrough(run, thrown)) {
    breaker.onNeutral(run.breakerKey, permit);
    throw thrown;
  }
  // Cleaned at once: every field of the tool's error read once, into a plain error nothing reads the tool's object through again.
  const classified = libraryView(run, sanitizeError(engine.cleaner, classify(run, failure), run.idempotencyKey));
  const previousCode =
    classified.code === ErrorCodes.PERMISSION_DENIED ? engine.tracker.get(run.counterKey, run.toolName)?.lastCode : undefined;
  if (!countsForBreaker(classified.kind, classified.code, previousCode, policy.circuitBreakerCountsInvalidArguments)) {
    breaker.onNeutral(run.breakerKey, permit);
  } else {
    const recorded = breaker.onFailure(run.breakerKey, permit, run.info);
    // A shared store answers first: whether this failure opened the circuit decides the outcome.
    if (recorded !== undefined) return recorded.then(() => decideFailure(engine, run, classified, failure, thrown));
  }
  return decideFailure(engine, run, classified, failure, thrown);
}

/** The failure recorded: its attempt number, the decision and its effects (`cleaned`: the classified error, sanitized). */
function decideFailure(
  engine: Engine,
  run: CallRun,
  cleaned: ToolError,
  failure: unknown,
  thrown: unknown,
): ReflectOutcome | FailedOutcome | number | Promise<ReflectOutcome | FailedOutcome | number> {
  const { breaker, policy } = run;
  const { tracker } = engine;
  // Each failure takes the next attempt number of its (scope, tool), in the order recorded.
  const tracked = tracker.entry(run.counterKey, run.toolName);
  const now = engine.options.clock.now();
  tracked.failures += 1;
  tracked.failingSince ??= now;
  tracked.lastCode = cleaned.code;
  run.attempt = tracked.failures;
  let error = cleaned;
  // `shouldRetry` (or the host's own mark) may override whether this failure may be retried at all.
  const verdict = retryVerdict(run, error, thrown);
  if (verdict !== undefined && verdict !== error.recoverable) {
    // The suggested action was written for the other verdict ("call the tool again" for a stop,
    // "do not call it again" for a retry): the model is told what this verdict means instead.
    error = withText(error, { recoverable: verdict, suggestedAction: verdict ? retryAction(error) : exhaustedAction(run.toolName) });
  }
  if (error.kind !== "transient") {
    rememberFailedCall(run, tracked);
    tracked.reflections += 1;
  }
  const decision = decide(
    {
      origin: "tool",
      recoverable: error.recoverable,
      kind: error.kind,
      reflections: tracked.reflections,
      budgetSpent: tracked.exhausted !== undefined,
      circuitOpenForMs: breaker.peek(run.breakerKey),
      effect: run.effect,
      guarded: run.storeKey !== undefined,
      // A write cut off by its timeout may still be running: reflected, never retried in place.
      stillRunning: run.storeKey !== undefined && stillRunning(failure),
      backoffMs: backoffDelay(run.attempt, policy, engine.options.random, tracked.lastDelayMs),
      retryAfterMs: error.retryAfterMs,
      inPlaceRetries: run.inPlace,
      sinceCallStartMs: now - run.startedAt,
      failingForMs: now - tracked.failingSince,
      failures: tracked.failures,
      succeededElsewhere: engine.tracker.succeededSince(run.toolName, tracked.failingSince),
    },
    policy,
  );
  const budget = policy.retryBudget;
  if (decision.kind === "retry" && budget !== undefined) {
    const taken = engine.budgets.takeRetry(run.toolName, budget, engine.options.clock.now());
    // A shared budget is asked of the store (failure path only: the healthy call never waits for it).
    if (taken instanceof Promise) {
      return taken.then((waitMs) =>
        waitMs > 0
          ? budgetSpent(engine, run, tracked, error, budget, waitMs)
          : applyDecision(engine, run, tracked, error, decision, "tool"),
      );
    }
    if (taken > 0) return budgetSpent(engine, run, tracked, error, budget, taken);
  }
  return applyDecision(engine, run, tracked, error, decision, "tool");
}

/** Refusals of a call that did not run or is still running: the model is asked for the same call later, not for other arguments. */
const SAME_CALL_LATER: ReadonlySet<string> = new Set<string>([ErrorCodes.IN_PROGRESS, ErrorCodes.STORE_UNAVAILABLE, ErrorCodes.OVERLOADED]);

/**
 * A call turned away before the tool ran (a conflict, bad arguments, the store): never a breaker
 * failure. A refusal that asks for other arguments is an attempt of the scope's budget; one that
 * asks for the same call later (`IN_PROGRESS`, `STORE_UNAVAILABLE`, `OVERLOADED`) is not: nothing
 * failed that the model could change, and obeying its text must not spend the budget (a write
 * still running elsewhere, or a store coming back, would else stop the tool in the scope).
 */
export function refuse(engine: Engine, run: CallRun, refused: GuardRefusal): ReflectOutcome | FailedOutcome {
  if (refused.conflict !== undefined) {
    engine.notifier.emit("idempotency_conflict", run.toolName, run.info, { tool_name: run.toolName, reason: refused.conflict });
  }
  if (refused.refused !== undefined)
    engine.notifier.emit("call_refused", run.toolName, run.info, { tool_name: run.toolName, reason: refused.refused });
  const tracked = engine.tracker.entry(run.counterKey, run.toolName);
  const error = refused.refusal;
  const sameCallLater = SAME_CALL_LATER.has(error.code);
  if (!sameCallLater) {
    tracked.failures += 1;
    tracked.reflections += 1;
  }
  // The outcome names the attempt the call would have been; the budget sees only the attempts used.
  run.attempt = sameCallLater ? tracked.failures + 1 : tracked.failures;
  const decision = decide(
    {
      origin: "refusal",
      recoverable: error.recoverable,
      kind: error.kind,
      reflections: tracked.reflections,
      budgetSpent: tracked.exhausted !== undefined,
      circuitOpenForMs: undefined,
      effect: run.effect,
      guarded: true,
      sameCallLater,
      backoffMs: 0,
      retryAfterMs: error.retryAfterMs,
      inPlaceRetries: run.inPlace,
      sinceCallStartMs: 0,
      failingForMs: 0,
      failures: tracked.failures,
      succeededElsewhere: false,
    },
    run.policy,
  );
  return applyDecision(engine, run, tracked, error, decision, "refusal") as ReflectOutcome | FailedOutcome;
}

/**
 * The policy's `shouldRetry`, else the host's mark (`call.retryable`); undefined: the default
 * decision. A hook that throws (or returns anything but a boolean) decides nothing: a throwing
 * `shouldRetry` leaves the decision to the mark, a throwing mark to the default.
 */
function retryVerdict(run: CallRun, error: ToolError, thrown: unknown): boolean | undefined {
  const shouldRetry = run.policy.shouldRetry;
  if (shouldRetry !== undefined) {
    try {
      const verdict = shouldRetry(error, { toolName: run.toolName, args: run.call.args, attempt: run.attempt, scope: run.scope });
      if (typeof verdict === "boolean") return verdict;
    } catch {
      // Decides nothing.
    }
  }
  // A host adapter's mark comes with its reading of what was thrown; `execute`'s with the call.
  const reading = readingOf(run, thrown);
  if (reading !== undefined) return reading.retryable;
  const retryable = run.call.retryable;
  if (retryable === undefined) return undefined;
  try {
    const mark = retryable(thrown);
    return typeof mark === "boolean" ? mark : undefined;
  } catch {
    return undefined;
  }
}

/** Whether the failure is a write's timeout whose attempt may still be running (read with care: the failure may be a hostile object). */
function stillRunning(failure: unknown): boolean {
  try {
    return lateOf(failure) !== undefined;
  } catch {
    return false;
  }
}

/** The user's classifier first (a throwing one falls back), then the built-in rules. */
function classify(run: CallRun, failure: unknown): ToolError {
  const custom = run.policy.classifyError;
  if (custom) {
    try {
      const classified = custom(failure, { toolName: run.toolName, args: run.call.args, attempt: run.attempt });
      if (classified !== undefined && ToolError.isInstance(classified)) return classified;
    } catch {
      // A throwing classifier falls back to the default classification.
    }
  }
  return classifyError(failure);
}
