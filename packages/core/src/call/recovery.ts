import { abortReason } from "../clock.js";
import { ErrorCodes } from "../errors/error-codes.js";
import { createToolError } from "../errors/tool-error.js";
import type { FailedOutcome, ReflectOutcome } from "../outcome.js";
import { circuitOpenMessage, temporaryAction } from "../texts/model-texts.js";
import { circuitOpenOutcome, reflectOutcome } from "./build-outcome.js";
import type { CallRun } from "./call-state.js";
import { applyDecision } from "./decision.js";
import type { Engine } from "./engine.js";

// A call that meets an open circuit, or one whose probe is running (gRPC's wait-for-ready): it
// waits when the circuit is due to let it through within the call's patience (`waitForRecovery`),
// woken by the circuit's transitions and looking again at least every second (a probe on another
// replica); otherwise it ends now: the definitive stop once the tool has kept failing for
// `giveUpMs` in the scope, an isolated circuit's stop, or the temporary text with the circuit's
// remaining time, which the gate keeps for the model's next call of the tool in the scope.

/** The longest a waiting call sleeps before it looks at the circuit again (a probe elsewhere tells it nothing). */
const LOOK_AGAIN_MS = 1_000;

/**
 * A call turned away by its circuit (`retryAfterMs`: until the circuit lets a call through, or its
 * probe's lease ends; `Infinity` while isolated; `probing`: the circuit's probe is running): how it
 * ends now, or undefined when it waits: for a probe running (its result is the recovery) while the
 * call is within its patience, or for an open circuit due within the call's patience (or within the
 * wait the model was told, which the gate holds the call for anyway).
 */
export function openCircuitOutcome(
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
  run.attempt = tracked.failures + 1;
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
    stop.abort();
    slept.catch(() => {});
    signal?.removeEventListener("abort", onAbort);
    const set = engine.recovering.get(key);
    set?.delete(wake);
    if (set?.size === 0) engine.recovering.delete(key);
  });
}

/** A call turned away by an isolated circuit (an operator's): failed, no promised time. */
function rejected(engine: Engine, run: CallRun, retryAfterMs: number): FailedOutcome {
  run.attempt = (engine.tracker.get(run.counterKey, run.toolName)?.failures ?? 0) + 1;
  engine.notifier.emit("call_rejected", run.toolName, run.info, { tool_name: run.toolName, isolated: true });
  return circuitOpenOutcome(engine, run, retryAfterMs);
}
