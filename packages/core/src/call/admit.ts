import { abortReason, TIMER_STOPPED } from "../clock.js";
import { ErrorCodes } from "../errors/error-codes.js";
import { createToolError } from "../errors/tool-error.js";
import type { GuardRefusal } from "../idempotency/guarded-call.js";
import type { FailedOutcome, ReflectOutcome } from "../outcome.js";
import { lastAttempt, nextAttempt, type TrackedAttempts } from "../state/counters.js";
import { circuitOpenMessage, OVERLOADED_ACTION, overloadedMessage, temporaryAction } from "../texts/model-texts.js";
import type { CallRun } from "./call-state.js";
import type { Engine } from "./engine.js";
import { refuse, repeatedCall } from "./failure.js";
import { applyDecision, circuitOpenOutcome, exhaustedError, failedOutcome, reflectOutcome } from "./outcome.js";

// Admission, checked before a call's first attempt and again after every wait: a scope whose
// budget is spent stops the call (this beats an open circuit), an exact call that keeps failing is
// refused, then an open circuit turns the call away unless it is due to let it through within the
// call's patience. Reading only: the circuit moves when an attempt acquires its permit.
//
// A call that meets an open circuit, or one whose probe is running (gRPC's wait-for-ready), waits
// when the circuit is due to let it through within the call's patience (`waitForRecovery`), woken
// by the circuit's transitions and looking again at least every second (a probe on another
// replica); otherwise it ends now: the definitive stop once the tool has kept failing for
// `giveUpMs` in the scope, an isolated circuit's stop, or the temporary text with the circuit's
// remaining time, which the gate keeps for the model's next call of the tool in the scope.

/** The call's stop before it runs (or its refusal, as an exact call that keeps failing), or undefined when it may go on. */
export function admission(engine: Engine, run: CallRun): ReflectOutcome | FailedOutcome | undefined {
  const tracked = engine.tracker.get(run.counterKey, run.toolName);
  if (tracked?.exhausted && !resetIfDue(engine, run, tracked)) return stopExhausted(engine, run, tracked);
  const repeated = repeatedCall(run, tracked);
  if (repeated !== undefined) return refuse(engine, run, repeated);
  const openFor = run.breaker.peek(run.breakerKey);
  // A circuit due to let the call through within its patience, or probing: the attempt loop waits for it.
  if (openFor === undefined) return undefined;
  return openCircuitOutcome(engine, run, openFor, run.breaker.state(run.breakerKey) === "half-open");
}

/**
 * A spent budget ends `exhaustedResetMs` after the failure that spent it: the row starts afresh
 * (the exact calls that failed are still remembered) and this call goes on. False while it holds.
 */
export function resetIfDue(engine: Engine, run: CallRun, tracked: TrackedAttempts): boolean {
  const resetMs = run.policy.exhaustedResetMs;
  const mark = tracked.exhausted;
  if (mark === undefined || resetMs === 0 || engine.options.clock.now() - mark.at < resetMs) return false;
  engine.tracker.clear(run.counterKey, run.toolName);
  return true;
}

/** A call of a tool whose budget is spent in this scope: stopped without running. */
export function stopExhausted(engine: Engine, run: CallRun, tracked: TrackedAttempts): FailedOutcome {
  lastAttempt(run, tracked);
  return failedOutcome(engine, run, exhaustedError(run, tracked.exhausted as NonNullable<TrackedAttempts["exhausted"]>), "exhausted");
}

/** The refusal of a call that found every `maxConcurrent` slot of its tool taken. */
export function overloaded(run: CallRun, limit: number): GuardRefusal {
  return {
    refused: "overloaded",
    refusal: createToolError({
      code: ErrorCodes.OVERLOADED,
      message: overloadedMessage(run.toolName, limit),
      recoverable: true,
      suggestedAction: OVERLOADED_ACTION,
      retryAfterMs: Math.max(1, run.policy.initialBackoffMs),
    }),
  };
}

/** The longest a waiting call sleeps before it looks at the circuit again (a probe elsewhere tells it nothing). */
const LOOK_AGAIN_MS = 1_000;

/**
 * A call turned away by its circuit (`retryAfterMs`: until the circuit lets a call through, or its
 * probe's lease ends; `Infinity` while isolated; `probing`: the circuit's probe is running): how it
 * ends now, or undefined when it waits: for a probe running (its result is the recovery) while the
 * call is within its patience, or for an open circuit due within the call's patience (or within the
 * wait the model was told, which the gate holds the call for anyway).
 */
function openCircuitOutcome(
  engine: Engine,
  run: CallRun,
  retryAfterMs: number,
  probing: boolean,
): ReflectOutcome | FailedOutcome | undefined {
  if (retryAfterMs === Number.POSITIVE_INFINITY) return rejected(engine, run, retryAfterMs);
  const { policy } = run;
  const now = engine.options.clock.now();
  const wait = Math.max(1, Math.ceil(retryAfterMs));
  const toldUntil = engine.tracker.get(run.counterKey, run.toolName)?.readyAt ?? 0;
  // A running probe is waited for while the call is within its patience (its lease may be long:
  // a probe that hangs, or whose replica died, frees it only at the lease's end).
  const patient = probing ? now - run.startedAt <= policy.patienceMs : now - run.startedAt + wait <= policy.patienceMs;
  const due = patient || now + wait <= toldUntil;
  if (policy.waitForRecovery && due) return undefined;
  const tracked = engine.tracker.entry(run.counterKey, run.toolName);
  nextAttempt(run, tracked);
  const error = createToolError({
    code: ErrorCodes.CIRCUIT_OPEN,
    message: circuitOpenMessage(run.toolName),
    recoverable: true,
    suggestedAction: temporaryAction(run.toolName),
    retryAfterMs: wait,
    kind: "other",
  });
  // Unavailable in this scope since its first failure or refusal: past the give-up time, the stop is true.
  tracked.failingSince ??= now;
  if (now - tracked.failingSince >= policy.giveUpMs && !engine.tracker.succeededSince(run.toolName, tracked.failingSince)) {
    return applyDecision(engine, run, tracked, error, { kind: "stop", reason: "exhausted" }, "refusal") as FailedOutcome;
  }
  engine.notifier.emit("call_rejected", run.toolName, run.info, { tool_name: run.toolName, retry_after_ms: wait });
  // The model's next call of the tool in this scope waits out the circuit's time at the gate.
  tracked.readyAt = Math.max(tracked.readyAt, now + wait);
  return reflectOutcome(engine, run, error, true, "retry_later", wait);
}

/**
 * The circuit turned the call away: it waits (the event once per call) until the circuit's time
 * passes or one of its transitions, at most a second, then the caller asks again (`"again"`); or
 * the call ends now (`openCircuitOutcome`). The wait is the caller's abort's to end at once.
 */
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

/** Sleeps `ms`, or less when the call's circuit changes state; rejects with the abort reason as soon as the caller aborts. */
function untilTransition(engine: Engine, run: CallRun, ms: number): Promise<void> {
  const signal = run.signal;
  if (signal?.aborted) return Promise.reject(abortReason(signal));
  const stop = new AbortController();
  const key = run.breakerKey;
  let wake!: () => void;
  const changed = new Promise<void>((resolve) => (wake = resolve));
  let waiting = engine.recovering.get(key);
  if (waiting === undefined) {
    waiting = new Set();
    engine.recovering.set(key, waiting);
  }
  waiting.add(wake);
  const onAbort = () => stop.abort(abortReason(signal as AbortSignal));
  signal?.addEventListener("abort", onAbort, { once: true });
  const slept = engine.options.clock.sleep(ms, stop.signal);
  return Promise.race([slept, changed]).finally(() => {
    stop.abort(TIMER_STOPPED);
    slept.catch(() => {});
    signal?.removeEventListener("abort", onAbort);
    const set = engine.recovering.get(key);
    set?.delete(wake);
    if (set?.size === 0) engine.recovering.delete(key);
  });
}

/** A call turned away by an isolated circuit (an operator's): failed, no promised time. */
function rejected(engine: Engine, run: CallRun, retryAfterMs: number): FailedOutcome {
  nextAttempt(run, engine.tracker.get(run.counterKey, run.toolName));
  engine.notifier.emit("call_rejected", run.toolName, run.info, { tool_name: run.toolName, isolated: true });
  return circuitOpenOutcome(engine, run, retryAfterMs);
}
