import type { RetryBudgetSettings } from "../budget/retry-budget.js";
import { abortReason } from "../clock.js";
import { ErrorCodes } from "../errors/error-codes.js";
import { createToolError, ToolError } from "../errors/tool-error.js";
import { argumentsFingerprint } from "../idempotency/fingerprint.js";
import type { GuardRefusal } from "../idempotency/guarded-call.js";
import { omittedField } from "../idempotency/idempotency-guard.js";
import { refused } from "../idempotency/store-protocol.js";
import type { FailedOutcome, ReflectOutcome } from "../outcome.js";
import { lastAttempt, nextAttempt, recordRefusal, type TrackedAttempts } from "../state/counters.js";
import * as texts from "../texts/model-texts.js";
import { type CallRun, type Engine, orElse } from "./call.js";
import { decideRefusal } from "./decide.js";
import { applyDecision, circuitOpenOutcome, exhaustedError, failedOutcome, type Retry, reflectOutcome } from "./outcome.js";

// Every way a call is turned away; only a failing tool comes here.

/** A tool's failing row in the scope: the stop of a spent budget, or the refusal of a repeated exact call. */
export function admitRow(engine: Engine, run: CallRun, tracked: TrackedAttempts): ReflectOutcome | FailedOutcome | undefined {
  if (tracked.exhausted && !resetIfDue(engine, run, tracked)) return stopExhausted(engine, run, tracked);
  const repeated = repeatedCall(run, tracked);
  return repeated === undefined ? undefined : refuse(engine, run, repeated);
}

/** A spent budget ends `exhaustedResetMs` after the failure that spent it (the failed exact calls stay remembered). */
export function resetIfDue(engine: Engine, run: CallRun, tracked: TrackedAttempts): boolean {
  const resetMs = run.policy.exhaustedResetMs;
  const mark = tracked.exhausted;
  if (mark === undefined || resetMs === 0 || engine.options.clock.now() - mark.at < resetMs) return false;
  engine.tracker.clear(run.counterKey);
  return true;
}

export function stopExhausted(engine: Engine, run: CallRun, tracked: TrackedAttempts): FailedOutcome {
  lastAttempt(run, tracked);
  return failedOutcome(engine, run, exhaustedError(run, tracked.exhausted as NonNullable<TrackedAttempts["exhausted"]>), "exhausted");
}

export function overloaded(run: CallRun, limit: number): GuardRefusal {
  const message = texts.overloadedMessage(run.toolName, limit);
  const retryAfterMs = Math.max(1, run.policy.initialBackoffMs);
  return refused({ refused: "overloaded" }, ErrorCodes.OVERLOADED, message, texts.OVERLOADED_ACTION, { retryAfterMs });
}

/** The longest a waiting call sleeps before it looks at the circuit again (a probe elsewhere tells it nothing). */
const LOOK_AGAIN_MS = 1_000;

/**
 * A call turned away by its circuit (`Infinity`: isolated): undefined when it waits (a probe, or an
 * open circuit due within its patience or the wait the model was told), else how it ends now.
 */
export function openCircuitOutcome(
  engine: Engine,
  run: CallRun,
  retryAfterMs: number,
  probing: boolean,
): ReflectOutcome | FailedOutcome | undefined {
  const { policy, toolName } = run;
  if (retryAfterMs === Number.POSITIVE_INFINITY) {
    nextAttempt(run, engine.tracker.get(run.counterKey, toolName));
    engine.notifier.emit("call_rejected", toolName, run.info, { tool_name: toolName, isolated: true });
    return circuitOpenOutcome(engine, run);
  }
  const now = engine.options.clock.now();
  const wait = Math.max(1, Math.ceil(retryAfterMs));
  const toldUntil = engine.tracker.get(run.counterKey, toolName)?.readyAt ?? 0;
  // A running probe's lease may be long (a probe that hangs): it is waited for while the call is patient.
  const patient = probing ? now - run.startedAt <= policy.patienceMs : now - run.startedAt + wait <= policy.patienceMs;
  if (policy.waitForRecovery && (patient || now + wait <= toldUntil)) return undefined;
  const tracked = engine.tracker.entry(run.counterKey, toolName);
  nextAttempt(run, tracked);
  const error = createToolError({
    code: ErrorCodes.CIRCUIT_OPEN,
    message: texts.circuitOpenMessage(toolName),
    recoverable: true,
    suggestedAction: texts.temporaryAction(toolName),
    retryAfterMs: wait,
    kind: "other",
  });
  tracked.failingSince ??= now;
  if (now - tracked.failingSince >= policy.giveUpMs && !engine.tracker.succeededSince(toolName, tracked.failingSince)) {
    return applyDecision(engine, run, tracked, error, { kind: "stop", reason: "exhausted" }, "refusal") as FailedOutcome;
  }
  engine.notifier.emit("call_rejected", toolName, run.info, { tool_name: toolName, retry_after_ms: wait });
  tracked.readyAt = Math.max(tracked.readyAt, now + wait);
  return reflectOutcome(engine, run, error, true, "retry_later", wait);
}

/** The circuit turned the call away: it ends now, or waits (at most a second, less at a transition) and asks again. */
export async function atOpenCircuit(
  engine: Engine,
  run: CallRun,
  retryAfterMs: number,
  probing: boolean,
): Promise<"again" | ReflectOutcome | FailedOutcome> {
  const ends = openCircuitOutcome(engine, run, retryAfterMs, probing);
  if (ends !== undefined) return ends;
  const wait = Math.max(1, Math.ceil(retryAfterMs));
  if (!run.waitedForRecovery) {
    run.waitedForRecovery = true;
    engine.notifier.emit("waiting_for_recovery", run.toolName, run.info, { tool_name: run.toolName, wait_ms: wait });
  }
  await untilTransition(engine, run, Math.min(wait, LOOK_AGAIN_MS));
  return "again";
}

/** Waits `ms` on the clock, or less when the call's circuit changes state; rejects with the abort reason as soon as the caller aborts. */
function untilTransition(engine: Engine, run: CallRun, ms: number): Promise<void> {
  const { signal, breakerKey: key } = run;
  if (signal?.aborted) return Promise.reject(abortReason(signal));
  return new Promise<void>((resolve, reject) => {
    let stopTimer = (): void => {};
    const end = (): void => {
      stopTimer();
      signal?.removeEventListener("abort", onAbort);
      const set = engine.recovering.get(key);
      set?.delete(wake);
      if (set?.size === 0) engine.recovering.delete(key);
    };
    const wake = (): void => {
      end();
      resolve();
    };
    const onAbort = (): void => {
      end();
      reject(abortReason(signal as AbortSignal));
    };
    const waiting = engine.recovering.get(key) ?? new Set();
    engine.recovering.set(key, waiting);
    waiting.add(wake);
    signal?.addEventListener("abort", onAbort, { once: true });
    stopTimer = engine.options.clock.timer(ms, wake, false);
  });
}

/** A retry refused by a spent retry budget: `reflect` after a wait drawn from [`waitMs`, `waitMs` + the window] (no herd). */
export function budgetSpent(
  engine: Engine,
  run: CallRun,
  tracked: TrackedAttempts,
  error: ToolError,
  budget: RetryBudgetSettings,
  waitMs: number,
): ReflectOutcome | FailedOutcome | Retry {
  const delayMs = Math.ceil(waitMs) + Math.floor(engine.options.random() * budget.windowMs);
  const fields = { tool_name: run.toolName, window_ms: budget.windowMs, retry_after_ms: delayMs };
  engine.notifier.emit("retry_budget_spent", run.toolName, run.info, fields);
  const spent = new ToolError({
    code: ErrorCodes.RETRY_BUDGET_SPENT,
    message: error.message,
    recoverable: true,
    kind: "other",
    suggestedAction: texts.RETRY_BUDGET_SPENT_ACTION,
    retryAfterMs: delayMs,
    details: { last_error_code: error.code },
  });
  return applyDecision(engine, run, tracked, spent, { kind: "reflect", delayMs, text: "retry_later" }, "tool");
}

/** Refusals of a call that did not run or is still running: the same call later, not other arguments. */
const SAME_CALL_LATER: ReadonlySet<string> = new Set<string>([ErrorCodes.IN_PROGRESS, ErrorCodes.STORE_UNAVAILABLE, ErrorCodes.OVERLOADED]);

/** A call turned away before the tool ran: an attempt of the scope's budget only when it asks for other arguments. */
export function refuse(engine: Engine, run: CallRun, turnedAway: GuardRefusal): ReflectOutcome | FailedOutcome {
  const { notifier } = engine;
  if (turnedAway.conflict !== undefined)
    notifier.emit("idempotency_conflict", run.toolName, run.info, { tool_name: run.toolName, reason: turnedAway.conflict });
  if (turnedAway.refused !== undefined)
    notifier.emit("call_refused", run.toolName, run.info, { tool_name: run.toolName, reason: turnedAway.refused });
  const tracked = engine.tracker.entry(run.counterKey, run.toolName);
  const error = turnedAway.refusal;
  const sameCallLater = SAME_CALL_LATER.has(error.code);
  if (sameCallLater) nextAttempt(run, tracked);
  else recordRefusal(run, tracked);
  const { recoverable, retryAfterMs } = error;
  const budgetSpent = tracked.exhausted !== undefined;
  const decision = decideRefusal({ recoverable, budgetSpent, reflections: tracked.reflections, retryAfterMs, sameCallLater }, run.policy);
  // A refusal is never retried in place.
  return applyDecision(engine, run, tracked, error, decision, "refusal") as ReflectOutcome | FailedOutcome;
}

/** Exact calls remembered per (scope, tool): the least recently failed or refused is forgotten beyond it. */
const MAX_REMEMBERED_CALLS = 64;

/** The call's arguments as one text (a write's as its guard sees them, without the key); undefined past the depth limit. */
function callFingerprint(run: CallRun): string | undefined {
  const omit = run.effect === "write" ? omittedField(run.idempotency) : undefined;
  return run.fingerprint ?? orElse(() => argumentsFingerprint(run.call.args, omit), undefined);
}

/** With `repeatedCallLimit`: remembers a non-transient failure of an exact call as the most recent. */
export function rememberFailedCall(run: CallRun, tracked: TrackedAttempts): void {
  const fingerprint = callFingerprint(run);
  if (fingerprint === undefined) return;
  tracked.repeats ??= new Map();
  const failures = (tracked.repeats.get(fingerprint) ?? 0) + 1;
  tracked.repeats.delete(fingerprint);
  tracked.repeats.set(fingerprint, failures);
  if (tracked.repeats.size > MAX_REMEMBERED_CALLS) tracked.repeats.delete(tracked.repeats.keys().next().value as string);
}

/** The refusal of an exact call that already failed `repeatedCallLimit` times in its scope (a success elsewhere does not forget it). */
function repeatedCall(run: CallRun, tracked: TrackedAttempts): GuardRefusal | undefined {
  const limit = run.policy.repeatedCallLimit;
  if (limit === undefined || tracked.repeats === undefined) return undefined;
  const fingerprint = callFingerprint(run);
  const failures = fingerprint === undefined ? undefined : tracked.repeats.get(fingerprint);
  if (fingerprint === undefined || failures === undefined || failures < limit) return undefined;
  tracked.repeats.delete(fingerprint); // kept the most recent while the model repeats it
  tracked.repeats.set(fingerprint, failures);
  const message = texts.repeatedCallMessage(run.toolName, failures);
  return refused({ refused: "repeated_call" }, ErrorCodes.REPEATED_CALL, message, texts.REPEATED_CALL_ACTION);
}
