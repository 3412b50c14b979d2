import { abortReason } from "../clock.js";
import type { ExecuteOutcome, SuccessOutcome } from "../outcome.js";
import { admission, resetIfDue, stopExhausted } from "./admission.js";
import { runAttempt } from "./attempt.js";
import { readThrown, returnedFailure } from "./attempt-failure.js";
import type { TrackedAttempts } from "./attempt-tracker.js";
import { endCall, ended } from "./call-end.js";
import type { CallRun, ToolFunction } from "./call-state.js";
import { overloaded, releaseSlot, takeSlot } from "./concurrency-slots.js";
import type { Engine } from "./engine.js";
import { afterFailure, refuse } from "./failure.js";
import { failureContext } from "./failure-context.js";
import { atOpenCircuit } from "./recovery.js";
import { releaseInRow, reserveInRow, roomInRow } from "./row-reservation.js";
import { settleLate } from "./settle-late.js";

// The one async loop of a logical call: admission, the backoff gate (admission again after it),
// the idempotency guard for writes (join, then a lock per attempt), then attempt after attempt
// while failures are transient and safe to repeat, each taking a place in the tool's failing row
// when it has one (row-reservation.ts; admission again after a wait for room).

/** Every call that is not decided synchronously: observers, writes, tools with failures. */
export async function runGuarded<T>(engine: Engine, run: CallRun, fn: ToolFunction<unknown, T>): Promise<ExecuteOutcome<T>> {
  throwIfAborted(run.signal);
  const stop = admission(engine, run);
  if (stop !== undefined) return stop;
  const tracked = engine.tracker.get(run.counterKey, run.toolName);
  if (tracked !== undefined) {
    const clock = engine.options.clock;
    const wait = tracked.readyAt - clock.now();
    if (wait > 0) {
      // Visible in traces: the corrected call waits out the backoff of the failure before it.
      engine.notifier.emit("waiting_before_retry", run.toolName, run.info, { tool_name: run.toolName, wait_ms: Math.ceil(wait) });
      await clock.sleep(wait, run.signal);
      // The budget may have been spent, or the circuit opened, while this call waited.
      const late = admission(engine, run);
      if (late !== undefined) return late;
    }
  }
  // `return await`: a promise returned from an async function costs two more ticks than one awaited.
  if (run.effect !== "write") return await attempts(engine, run, fn, false);

  const { guard } = engine;
  const prepared = guard.prepare(run);
  if (prepared === "unguarded") return await attempts(engine, run, fn, false);
  if (prepared !== "guarded") return refuse(engine, run, prepared);
  const entered = await guard.enter<T>(run);
  if ("refusal" in entered) return refuse(engine, run, entered);
  if ("shared" in entered) {
    // Joined a call with the same key in flight here: its outcome is this call's too.
    const shared = entered.shared;
    if (shared.status !== "success") return shared;
    run.attempt = shared.attempt;
    engine.notifier.emit("idempotent_replay", run.toolName, run.info, { tool_name: run.toolName });
    return { status: "success", value: shared.value, attempt: shared.attempt, replayed: true };
  }
  let result: ExecuteOutcome<T> | undefined;
  try {
    result = await attempts(engine, run, fn, true);
    return result;
  } finally {
    entered.flight.finish(result);
  }
}

/** Every call that is not made directly, observed or not: the attempt loop, then the call's end. */
export async function observed<T>(engine: Engine, run: CallRun, fn: ToolFunction<unknown, T>): Promise<ExecuteOutcome<T>> {
  const { notifier } = engine;
  if (run.info !== undefined && notifier.callHooks) notifier.callStart(run.info);
  let outcome: ExecuteOutcome<T>;
  try {
    outcome = await runGuarded(engine, run, fn);
  } catch (error) {
    endCall(engine, run, undefined, error);
    throw error;
  }
  return ended(engine, run, outcome);
}

/** One attempt after another while failures are transient and safe to repeat. */
async function attempts<T>(engine: Engine, run: CallRun, fn: ToolFunction<unknown, T>, guarded: boolean): Promise<ExecuteOutcome<T>> {
  const { tracker, guard, notifier } = engine;
  const { breaker } = run;
  /** The circuit turned the last try away: for how long, and whether its probe was running (see recovery.ts). */
  let turnedAway: { readonly forMs: number; readonly probing: boolean } | undefined;
  for (;;) {
    if (turnedAway !== undefined) {
      // Outside the row's places: a call waiting for its circuit holds none (nor a slot, nor budget).
      const after = await atOpenCircuit(engine, run, turnedAway.forMs, turnedAway.probing);
      turnedAway = undefined;
      if (after !== "again") return after;
    }
    const tracked = tracker.get(run.counterKey, run.toolName);
    // No attempt, first or in place, starts once the budget is spent (by this call or a parallel one).
    if (tracked?.exhausted && !resetIfDue(engine, run, tracked)) return stopExhausted(engine, run, tracked);
    // A failing row reserves its budget: the attempt takes a place in it, or waits for one to settle.
    let reserved: TrackedAttempts | undefined;
    if (tracked !== undefined && tracked.failures > 0) {
      if (!reserveInRow(tracked, run.policy.maxRetries)) {
        await roomInRow(tracked, run.signal);
        const late = admission(engine, run); // spent, refused or rejected meanwhile; or the row ended
        if (late !== undefined) return late;
        continue;
      }
      reserved = tracked;
    }
    let next: ExecuteOutcome<T> | number;
    try {
      // Provisional: the number this attempt's failure would take, were it recorded next.
      run.attempt = (tracked?.failures ?? 0) + 1;
      let admitted = breaker.acquire(run.breakerKey, run.info);
      // A shared store's answer (only where its local view cannot answer: an open or half-open circuit).
      if (admitted instanceof Promise) admitted = await admitted;
      if (!admitted.admitted) {
        turnedAway = { forMs: admitted.retryAfterMs, probing: admitted.state === "half-open" };
        continue;
      }
      const permit = admitted.permit;

      // A `maxConcurrent` slot, held while the attempt runs (not during waits).
      const limit = run.policy.maxConcurrent;
      if (limit !== undefined && !takeSlot(engine, run.toolName, limit)) {
        breaker.onNeutral(run.breakerKey, permit);
        return refuse(engine, run, overloaded(run, limit));
      }

      let token: string | undefined;
      let stopLease: (() => void) | undefined;
      /** A write's tool still running after its attempt ended (cut off at its limit, or the caller's abort). */
      let late: Promise<unknown> | undefined;
      let value: T | undefined;
      let failure: unknown;
      let thrown: unknown;
      let failed = false;
      try {
        if (guarded) {
          const locked = await guard.lock(run);
          if (!("token" in locked)) {
            breaker.onNeutral(run.breakerKey, permit);
            if ("refusal" in locked) return refuse(engine, run, locked);
            tracker.clearUnlessExhausted(run.counterKey, run.toolName);
            notifier.emit("idempotent_replay", run.toolName, run.info, { tool_name: run.toolName });
            return { status: "success", value: locked.replay as T, attempt: run.attempt, replayed: true };
          }
          token = locked.token;
        }
        run.attempts++;
        // A guarded write keeps its lease while its tool runs (stores with `extend`): until it ends,
        // also when its attempt was cut off or left by its caller (`settleLate` stops it then).
        stopLease = token === undefined ? undefined : guard.keepLease(run, token);
        try {
          value = await runAttempt(engine, run, fn, token === undefined ? undefined : (tool) => (late = tool));
          failure = returnedFailure(run.policy, run.host, value, () => failureContext(run));
          failed = failure !== undefined;
          thrown = failure;
        } catch (error) {
          failed = true;
          thrown = failure = error;
          const host = run.host;
          if (host?.readThrown !== undefined) {
            run.reading = await readThrown(host, error, run.call.args);
            failure = run.reading.failure;
          }
        } finally {
          if (late === undefined) stopLease?.();
        }
      } finally {
        // Freed when the attempt ends, or at its timeout even if the tool ignores its signal.
        if (limit !== undefined) releaseSlot(engine, run.toolName);
      }
      if (!failed) {
        const recorded = breaker.onSuccess(run.breakerKey, permit, run.info);
        if (recorded !== undefined) await recorded; // a shared store told (after failures, or a probe)
        // The write ran: a store fault now loses only the replay, never the result.
        if (token !== undefined) await guard.complete(run, token, value);
        tracker.succeeded(run.counterKey, run.toolName, engine.options.clock.now());
        throwIfAborted(run.signal); // the caller's abort wins, even over a late success (stored above)
        if (run.attempt > 1) notifier.emit("retry_succeeded", run.toolName, run.info, { tool_name: run.toolName, attempt: run.attempt });
        return { status: "success", value: value as T, attempt: run.attempt, replayed: false } satisfies SuccessOutcome<T>;
      }
      if (token !== undefined) {
        // A write cut off at its limit, or left by its caller, may still take effect: its key stays
        // locked until it ends, then holds its result (a retry replays it) or is released.
        if (late === undefined) await guard.release(run, token);
        else settleLate(engine, run, token, late, stopLease);
      }
      const after = afterFailure(engine, run, permit, failure, thrown);
      next = after instanceof Promise ? await after : after; // the failure recorded in a shared store first
    } finally {
      // Settled: its failure recorded (or the row ended), the calls waiting for a place check again.
      if (reserved !== undefined) releaseInRow(reserved);
    }
    if (typeof next !== "number") return next;
    run.inPlace++;
    const waiting = backoff(engine, run, next);
    if (waiting !== undefined) await waiting;
  }
}

/** The wait before an in-place retry: abortable; a zero wait only checks the signal. */
function backoff(engine: Engine, run: CallRun, delayMs: number): Promise<void> | undefined {
  if (delayMs > 0) return engine.options.clock.sleep(delayMs, run.signal);
  throwIfAborted(run.signal);
  return undefined;
}

function throwIfAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw abortReason(signal);
}
