import { backoffDelay } from "../backoff/backoff.js";
import type { CircuitPermit } from "../breaker/circuit-breaker.js";
import type { RetryBudgetSettings } from "../budget/retry-budget.js";
import { sanitizeError, withText } from "../cleaning/clean-error.js";
import { abortReason } from "../clock.js";
import { ErrorCodes } from "../errors/error-codes.js";
import { createToolError, ToolError } from "../errors/tool-error.js";
import { argumentsFingerprint } from "../idempotency/fingerprint.js";
import type { GuardRefusal } from "../idempotency/guarded-call.js";
import { omittedField } from "../idempotency/idempotency-guard.js";
import type { FailedOutcome, ReflectOutcome } from "../outcome.js";
import { nextAttempt, recordFailure, recordRefusal, type TrackedAttempts } from "../state/counters.js";
import { exhaustedAction, REPEATED_CALL_ACTION, RETRY_BUDGET_SPENT_ACTION, repeatedCallMessage } from "../texts/model-texts.js";
import type { CallRun } from "./call-state.js";
import { countsForBreaker, decide } from "./decide.js";
import type { Engine } from "./engine.js";
import { applyDecision, type Retry } from "./outcome.js";
import { classify, type FailedAttempt, libraryView, passesThrough, retryAction, retryVerdict, stillRunning } from "./read-failure.js";

// After a failed attempt: the caller's abort and control flow are rethrown; any other failure is
// classified, cleaned, recorded (breaker, then the next attempt number of its scope), decided
// (`decide`, pure) and carried out (`applyDecision`). Also the refusals of a call turned away.

/** The outcome of a failed attempt, or a retry in place. Throws the abort reason, or a pass-through error. */
export async function afterFailure(
  engine: Engine,
  run: CallRun,
  permit: CircuitPermit,
  { failure, thrown }: FailedAttempt,
): Promise<ReflectOutcome | FailedOutcome | Retry> {
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
  const cleaned = libraryView(run, sanitizeError(engine.cleaner, classify(run, failure), run.idempotencyKey));
  const previousCode =
    cleaned.code === ErrorCodes.PERMISSION_DENIED ? engine.tracker.get(run.counterKey, run.toolName)?.lastCode : undefined;
  if (!countsForBreaker(cleaned.kind, cleaned.code, previousCode, policy.circuitBreakerCountsInvalidArguments)) {
    breaker.onNeutral(run.breakerKey, permit);
  } else {
    // A shared store answers first: whether this failure opened the circuit decides the outcome.
    // The breaker in memory records it at once (calls failing together each see the circuit as
    // their own failure left it): awaited only when the breaker answers with a promise.
    const recorded = breaker.onFailure(run.breakerKey, permit, run.info);
    if (recorded !== undefined) await recorded;
  }
  // Each failure takes the next attempt number of its (scope, tool), in the order recorded.
  const tracked = engine.tracker.entry(run.counterKey, run.toolName);
  const now = engine.options.clock.now();
  recordFailure(run, tracked, now, cleaned.code);
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
      failingForMs: now - (tracked.failingSince as number),
      failures: tracked.failures,
      succeededElsewhere: engine.tracker.succeededSince(run.toolName, tracked.failingSince as number),
    },
    policy,
  );
  const budget = policy.retryBudget;
  if (decision.kind === "retry" && budget !== undefined) {
    // A shared budget is asked of the store (failure path only: the healthy call never waits for it).
    // A budget in memory answers at once (the decision is carried out in the same tick it was made).
    const taken = engine.budgets.takeRetry(run.toolName, budget, engine.options.clock.now());
    const waitMs = typeof taken === "number" ? taken : await taken;
    if (waitMs > 0) return budgetSpent(engine, run, tracked, error, budget, waitMs);
  }
  return applyDecision(engine, run, tracked, error, decision, "tool");
}

/**
 * A transient failure the policy would retry in place, while its tool's retry budget is spent: the
 * call ends `reflect` (`RETRY_BUDGET_SPENT`, recoverable, the temporary text): the same call again
 * after a wait drawn uniformly from [`waitMs` (until the window has room), `waitMs` + the window].
 * Calls turned away together (a fleet's, when its service is overloaded) so come back spread over a
 * window, not together as it slides: a herd that would meet the overloaded service, and the spent
 * budget, again.
 */
function budgetSpent(
  engine: Engine,
  run: CallRun,
  tracked: TrackedAttempts,
  error: ToolError,
  budget: RetryBudgetSettings,
  waitMs: number,
): ReflectOutcome | FailedOutcome | Retry {
  const delayMs = Math.ceil(waitMs) + Math.floor(engine.options.random() * budget.windowMs);
  engine.notifier.emit("retry_budget_spent", run.toolName, run.info, {
    tool_name: run.toolName,
    window_ms: budget.windowMs,
    retry_after_ms: delayMs,
  });
  const spent = new ToolError({
    code: ErrorCodes.RETRY_BUDGET_SPENT,
    message: error.message,
    recoverable: true,
    kind: "other",
    suggestedAction: RETRY_BUDGET_SPENT_ACTION,
    retryAfterMs: delayMs,
    details: { last_error_code: error.code },
  });
  return applyDecision(engine, run, tracked, spent, { kind: "reflect", delayMs, text: "retry_later" }, "tool");
}

/** Refusals of a call that did not run or is still running: the model is asked for the same call later, not for other arguments. */
const SAME_CALL_LATER: ReadonlySet<string> = new Set<string>([ErrorCodes.IN_PROGRESS, ErrorCodes.STORE_UNAVAILABLE, ErrorCodes.OVERLOADED]);

/**
 * A call turned away before the tool ran (a conflict, bad arguments, the store, every slot taken, a
 * repeated call): never a breaker failure. A refusal that asks for other arguments is an attempt
 * of the scope's budget; one that asks for the same call later (`IN_PROGRESS`, `STORE_UNAVAILABLE`,
 * `OVERLOADED`) is not: nothing failed that the model could change, and obeying its text must not
 * spend the budget (a write still running elsewhere, or a store coming back, would else stop the
 * tool in the scope).
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
  // The outcome names the attempt the call would have been; the budget sees only the attempts used.
  if (sameCallLater) nextAttempt(run, tracked);
  else recordRefusal(run, tracked);
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
  // A refusal is never retried in place (`decide` answers `reflect` or `stop`).
  return applyDecision(engine, run, tracked, error, decision, "refusal") as ReflectOutcome | FailedOutcome;
}

/** Exact calls remembered per (scope, tool): the least recently failed or refused is forgotten beyond it. */
const MAX_REMEMBERED_CALLS = 64;

/**
 * `repeatedCallLimit`: the call's arguments as one text that sees content; for a write, the
 * idempotency guard's own fingerprint (without the key argument, as the guard computes it), so that
 * a write re-issued with a new key is the same call before and after the guard has seen it.
 * Undefined past the depth limit.
 */
function callFingerprint(run: CallRun): string | undefined {
  if (run.fingerprint !== undefined) return run.fingerprint;
  try {
    return argumentsFingerprint(run.call.args, run.effect === "write" ? omittedField(run.idempotency) : undefined);
  } catch {
    return undefined;
  }
}

/** Remembers a failed exact call (a non-transient failure, with the limit set) as the most recent (a Map keeps insertion order). */
function rememberFailedCall(run: CallRun, tracked: TrackedAttempts): void {
  if (run.policy.repeatedCallLimit === undefined) return;
  const fingerprint = callFingerprint(run);
  if (fingerprint === undefined) return;
  tracked.repeats ??= new Map();
  const failures = (tracked.repeats.get(fingerprint) ?? 0) + 1;
  tracked.repeats.delete(fingerprint);
  tracked.repeats.set(fingerprint, failures);
  if (tracked.repeats.size > MAX_REMEMBERED_CALLS) tracked.repeats.delete(tracked.repeats.keys().next().value as string);
}

/**
 * The refusal of an exact call that already failed `repeatedCallLimit` times in its scope for a
 * non-transient reason, or undefined. A success of another call does not make it forgotten.
 */
export function repeatedCall(run: CallRun, tracked: TrackedAttempts | undefined): GuardRefusal | undefined {
  const limit = run.policy.repeatedCallLimit;
  if (limit === undefined || tracked?.repeats === undefined) return undefined;
  const fingerprint = callFingerprint(run);
  const failures = fingerprint === undefined ? undefined : tracked.repeats.get(fingerprint);
  if (fingerprint === undefined || failures === undefined || failures < limit) return undefined;
  // A call the model keeps repeating stays remembered while other calls come and go.
  tracked.repeats.delete(fingerprint);
  tracked.repeats.set(fingerprint, failures);
  return {
    refused: "repeated_call",
    refusal: createToolError({
      code: ErrorCodes.REPEATED_CALL,
      message: repeatedCallMessage(run.toolName, failures),
      recoverable: true,
      suggestedAction: REPEATED_CALL_ACTION,
    }),
  };
}
