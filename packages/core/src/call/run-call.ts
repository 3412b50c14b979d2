import { abortReason } from "../clock.js";
import type { ToolCall } from "../config/options.js";
import { effectOf, isInScope } from "../config/resolve.js";
import type { ExecuteOutcome } from "../outcome.js";
import { nextAttempt, type TrackedAttempts } from "../state/counters.js";
import { releaseInRow, releaseSlot, reserveInRow, roomInRow, takeSlot } from "../state/places.js";
import { admission, atOpenCircuit, overloaded, resetIfDue, stopExhausted } from "./admit.js";
import { runAttempt } from "./attempt.js";
import { endCall, ended } from "./call-end.js";
import { type CallRun, callInfo, newRun, resolvedCall, type ToolFunction, trackingScopeOf } from "./call-state.js";
import { type Engine, setupOf } from "./engine.js";
import { afterFailure, refuse } from "./failure.js";
import { readAttempt, returnedFailure } from "./read-failure.js";
import { checkCall, type EngineCall } from "./tool-call.js";

// The one entry of a call (`execute`'s, and a host adapter's) and its one async loop: the call
// resolved once and its run made; observers told of its start; admission, the backoff gate
// (admission again after it), the idempotency guard for writes (join, then a lock per attempt);
// then attempt after attempt while failures are transient and safe to repeat, each taking a place
// in the tool's failing row when it has one (admission again after a wait for room); the end.

/** What a host makes of an outcome (its tool message, its result), made once per adapter: it gets the call. */
export type Present<T, P> = (outcome: ExecuteOutcome<T>, call: EngineCall) => P;

/** `plugin.execute`: see its documentation. */
export async function runCall<Args, T>(engine: Engine, call: ToolCall<Args>, fn: ToolFunction<Args, T>): Promise<ExecuteOutcome<T>> {
  checkCall(call, fn);
  if (!isInScope(engine.options, call.toolName)) {
    // An out-of-scope tool: one plain call, its error untouched.
    const value = await fn(call.args, { attempt: 1, signal: call.signal, toolName: call.toolName, callId: call.callId });
    return { status: "success", value, attempt: 1, replayed: false };
  }
  return dispatch(engine, call as EngineCall, fn as ToolFunction<unknown, T>, undefined);
}

/**
 * A host adapter's call of an in-scope tool (`runToolCall`): `fn` is the host call's `run`, called
 * with the call as `this`; the call reads what its tool did (`failureOfResult`, `readThrown`).
 * Resolves to `present(outcome, call)`, or to the outcome without `present`.
 */
export async function runHostCall<T, P>(
  engine: Engine,
  call: EngineCall,
  fn: ToolFunction<unknown, T>,
  present?: Present<T, P>,
): Promise<ExecuteOutcome<T> | P> {
  const outcome = await dispatch(engine, call, fn, call);
  return present === undefined ? outcome : present(outcome, call);
}

/** Resolves the call (its scope, and its namespace for a write, asked for once), makes its run, runs it and ends it. */
async function dispatch<T>(
  engine: Engine,
  call: EngineCall,
  fn: ToolFunction<unknown, T>,
  host: EngineCall | undefined,
): Promise<ExecuteOutcome<T>> {
  const { options, notifier } = engine;
  const toolName = call.toolName;
  const setup = setupOf(engine, toolName);
  // A logical call counts towards its tool's retry budget, healthy or not.
  const budget = setup.policy.retryBudget;
  if (budget !== undefined) engine.budgets.recordCall(toolName, budget, options.clock.now());
  const effect = call.effect ?? effectOf(options, toolName);
  const resolved = resolvedCall(call, host, effect);
  const breakerKey = options.circuitBreakerKey === undefined ? toolName : String(options.circuitBreakerKey(resolved));
  const scope = trackingScopeOf(options, resolved);
  const info = callInfo(engine, resolved, scope, effect, setup);
  const run = newRun(resolved, host, scope, effect, breakerKey, setup, options.clock.now(), info);
  if (notifier.callHooks) notifier.callStart(info);
  let outcome: ExecuteOutcome<T>;
  try {
    outcome = await guarded(engine, run, fn);
  } catch (error) {
    endCall(engine, run, undefined, error);
    throw error;
  }
  return ended(engine, run, outcome);
}

/** Admission, the backoff gate, and the idempotency guard of a write around the attempts. */
async function guarded<T>(engine: Engine, run: CallRun, fn: ToolFunction<unknown, T>): Promise<ExecuteOutcome<T>> {
  throwIfAborted(run.signal);
  const stop = admission(engine, run);
  if (stop !== undefined) return stop;
  const tracked = engine.tracker.get(run.counterKey, run.toolName);
  const wait = tracked === undefined ? 0 : tracked.readyAt - engine.options.clock.now();
  if (wait > 0) {
    // Visible in traces: the corrected call waits out the backoff of the failure before it.
    engine.notifier.emit("waiting_before_retry", run.toolName, run.info, { tool_name: run.toolName, wait_ms: Math.ceil(wait) });
    await engine.options.clock.sleep(wait, run.signal);
    // The budget may have been spent, or the circuit opened, while this call waited.
    const late = admission(engine, run);
    if (late !== undefined) return late;
  }
  if (run.effect !== "write") return attempts(engine, run, fn, false);
  const { guard } = engine;
  const prepared = guard.prepare(run);
  if (prepared === "unguarded") return attempts(engine, run, fn, false);
  if (prepared !== "guarded") return refuse(engine, run, prepared);
  const entered = await guard.enter<T>(run);
  if ("refusal" in entered) return refuse(engine, run, entered);
  if ("shared" in entered) {
    // Joined a call with the same key in flight here: its outcome is this call's too.
    const shared = entered.shared;
    if (shared.status !== "success") return shared;
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

/** One attempt after another while failures are transient and safe to repeat. */
async function attempts<T>(engine: Engine, run: CallRun, fn: ToolFunction<unknown, T>, locked: boolean): Promise<ExecuteOutcome<T>> {
  const { tracker, guard, notifier } = engine;
  const { breaker } = run;
  for (;;) {
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
    let next: Awaited<ReturnType<typeof afterFailure>>;
    try {
      // Provisional: the number this attempt's failure would take, were it recorded next.
      nextAttempt(run, tracked);
      // The breaker answers at once from its view (the tool starts in the tick of `execute`: a caller
      // that aborts or settles right after it finds its tool running); a shared store answers later
      // where the local view cannot (an open or half-open circuit). The breaker's interface gives one
      // or the other: awaited only when it is a promise.
      const asked = breaker.acquire(run.breakerKey, run.info);
      const admitted = asked instanceof Promise ? await asked : asked;
      if (!admitted.admitted) {
        // Outside the row's places: a call waiting for its circuit holds none (nor a slot, nor budget).
        reserved = release(reserved);
        const after = await atOpenCircuit(engine, run, admitted.retryAfterMs, admitted.state === "half-open");
        if (after !== "again") return after;
        continue;
      }
      const permit = admitted.permit;
      // A `maxConcurrent` slot, held while the attempt runs (not during waits).
      const limit = run.policy.maxConcurrent;
      if (limit !== undefined && !takeSlot(engine.running, run.toolName, limit)) {
        breaker.onNeutral(run.breakerKey, permit);
        return refuse(engine, run, overloaded(run, limit));
      }
      let token: string | undefined;
      /** A write's tool still running after its attempt ended (cut off at its limit, or the caller's abort). */
      let late: Promise<unknown> | undefined;
      let stopLease: (() => void) | undefined;
      let read: Awaited<ReturnType<typeof readAttempt<T>>>;
      try {
        if (locked) {
          const lock = await guard.lock(run);
          if (!("token" in lock)) {
            breaker.onNeutral(run.breakerKey, permit);
            if ("refusal" in lock) return refuse(engine, run, lock);
            tracker.clearUnlessExhausted(run.counterKey, run.toolName);
            notifier.emit("idempotent_replay", run.toolName, run.info, { tool_name: run.toolName });
            return { status: "success", value: lock.replay as T, attempt: run.attempt, replayed: true };
          }
          token = lock.token;
          // A guarded write keeps its lease while its tool runs (stores with `extend`): until it ends,
          // also when its attempt was cut off or left by its caller (`settleLate` stops it then).
          stopLease = guard.keepLease(run, token);
        }
        run.attempts++;
        try {
          read = await readAttempt(run, await runAttempt(engine, run, fn, (tool) => (late = tool)));
        } finally {
          if (late === undefined) stopLease?.();
        }
      } finally {
        // Freed when the attempt ends, or at its timeout even if the tool ignores its signal.
        if (limit !== undefined) releaseSlot(engine.running, run.toolName);
      }
      if (read.kind === "success") {
        const recorded = breaker.onSuccess(run.breakerKey, permit, run.info);
        if (recorded !== undefined) await recorded; // a shared store told (after failures, or a probe)
        // The write ran: a store fault now loses only the replay, never the result.
        if (token !== undefined) await guard.complete(run, token, read.value);
        tracker.succeeded(run.counterKey, run.toolName, engine.options.clock.now());
        throwIfAborted(run.signal); // the caller's abort wins, even over a late success (stored above)
        if (run.attempt > 1) notifier.emit("retry_succeeded", run.toolName, run.info, { tool_name: run.toolName, attempt: run.attempt });
        return { status: "success", value: read.value, attempt: run.attempt, replayed: false };
      }
      if (token !== undefined) {
        // A write cut off at its limit, or left by its caller, may still take effect: its key stays
        // locked until it ends, then holds its result (a retry replays it) or is released.
        if (late === undefined) await guard.release(run, token);
        else settleLate(engine, run, token, late, stopLease);
      }
      next = await afterFailure(engine, run, permit, read); // the failure recorded in a shared store first
    } finally {
      // Settled: its failure recorded (or the row ended), the calls waiting for a place check again.
      release(reserved);
    }
    if (next.status !== "retry") return next;
    run.inPlace++;
    if (next.delayMs > 0) await engine.options.clock.sleep(next.delayMs, run.signal);
    else throwIfAborted(run.signal);
  }
}

/** Gives the row's place back, if one is held. */
function release(reserved: TrackedAttempts | undefined): undefined {
  if (reserved !== undefined) releaseInRow(reserved);
  return undefined;
}

/**
 * A write whose attempt ended before its tool (cut off at its limit, or left by its caller's abort):
 * its key stays locked, its lease renewed, until the tool ends; then its result is stored (a retry
 * replays it) or its key released, and the renewal stops (`stopLease`).
 */
function settleLate(engine: Engine, run: CallRun, token: string, late: Promise<unknown>, stopLease: (() => void) | undefined): void {
  late
    .then(
      (value) => (returnedFailure(run, value) === undefined ? engine.guard.complete(run, token, value) : engine.guard.release(run, token)),
      () => engine.guard.release(run, token),
    )
    // Nobody awaits this: whatever goes wrong here must not become an unhandled rejection.
    .catch(() => engine.guard.release(run, token))
    .finally(() => stopLease?.());
}

function throwIfAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw abortReason(signal);
}
