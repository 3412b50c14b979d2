import { abortReason } from "../clock.js";
import type { ExecuteOutcome, FailedOutcome, ReflectOutcome } from "../outcome.js";
import { nextAttempt, releaseInRow, releaseSlot, reserveInRow, roomInRow, type TrackedAttempts, takeSlot } from "../state/counters.js";
import { admitRow, atOpenCircuit, openCircuitOutcome, overloaded, refuse, resetIfDue, stopExhausted } from "./admit.js";
import { runAttempt } from "./attempt.js";
import { type CallRun, type Engine, type EngineCall, isInScope, newRun, setupOf, type ToolCall, type ToolFunction } from "./call.js";
import { endCall, ended } from "./outcome.js";
import { afterFailure, readAttempt, returnedFailure } from "./read-failure.js";

// The one entry of a call (`execute`'s, and a host adapter's) and its one async loop.

/** `plugin.execute` (its call checked by plugin.ts). */
export async function runCall<Args, T>(engine: Engine, call: ToolCall<Args>, fn: ToolFunction<Args, T>): Promise<ExecuteOutcome<T>> {
  if (!isInScope(engine.options, call.toolName)) {
    // An out-of-scope tool: one plain call, its error untouched.
    const value = await fn(call.args, { attempt: 1, signal: call.signal, toolName: call.toolName, callId: call.callId });
    return { status: "success", value, attempt: 1, replayed: false };
  }
  return dispatch(engine, call as EngineCall, fn as ToolFunction<unknown, T>, undefined);
}

/** A host adapter's call of an in-scope tool (`runToolCall`): `fn` is its `run`, called with the call as `this`. */
export function runHostCall<T>(engine: Engine, call: EngineCall, fn: ToolFunction<unknown, T>): Promise<ExecuteOutcome<T>> {
  return dispatch(engine, call, fn, call);
}

async function dispatch<T>(
  engine: Engine,
  call: EngineCall,
  fn: ToolFunction<unknown, T>,
  host: EngineCall | undefined,
): Promise<ExecuteOutcome<T>> {
  const setup = setupOf(engine, call.toolName);
  // A logical call counts towards its tool's retry budget, healthy or not.
  const budget = setup.policy.retryBudget;
  if (budget !== undefined) engine.budgets.recordCall(call.toolName, budget, engine.options.clock.now());
  const run = newRun(engine, call, host, setup);
  if (engine.notifier.callHooks) engine.notifier.tell((observer) => observer.onCallStart?.(run.info));
  let outcome: ExecuteOutcome<T>;
  try {
    outcome = await guarded(engine, run, fn);
  } catch (error) {
    endCall(engine, run, undefined, error);
    throw error;
  }
  return ended(engine, run, outcome);
}

/**
 * Before the first attempt and after every wait: a spent budget stops the call (this beats an open
 * circuit), a repeated exact call is refused, an open circuit turns the call away unless it is due
 * within the call's patience. Reading only: the circuit moves when an attempt acquires its permit.
 */
function admission(engine: Engine, run: CallRun): ReflectOutcome | FailedOutcome | undefined {
  const tracked = engine.tracker.get(run.counterKey, run.toolName);
  const stop = tracked === undefined ? undefined : admitRow(engine, run, tracked);
  if (stop !== undefined) return stop;
  const openFor = run.breaker.peek(run.breakerKey);
  if (openFor === undefined) return undefined;
  return openCircuitOutcome(engine, run, openFor, run.breaker.state(run.breakerKey) === "half-open");
}

/** Admission, the backoff gate, and the idempotency guard of a write around the attempts. */
async function guarded<T>(engine: Engine, run: CallRun, fn: ToolFunction<unknown, T>): Promise<ExecuteOutcome<T>> {
  throwIfAborted(run.signal);
  const stop = admission(engine, run);
  if (stop !== undefined) return stop;
  const tracked = engine.tracker.get(run.counterKey, run.toolName);
  const wait = tracked === undefined ? 0 : tracked.readyAt - engine.options.clock.now();
  if (wait > 0) {
    engine.notifier.emit("waiting_before_retry", run.toolName, run.info, { tool_name: run.toolName, wait_ms: Math.ceil(wait) });
    await engine.options.clock.sleep(wait, run.signal);
    const late = admission(engine, run); // the budget may have been spent, or the circuit opened, meanwhile
    if (late !== undefined) return late;
  }
  const prepared = run.effect === "write" ? engine.guard.prepare(run) : "unguarded";
  if (prepared === "unguarded") return attempts(engine, run, fn);
  if (prepared !== "guarded") return refuse(engine, run, prepared);
  const entered = await engine.guard.enter<T>(run);
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
    result = await attempts(engine, run, fn);
    return result;
  } finally {
    entered.flight.finish(result);
  }
}

/** One attempt after another while failures are transient and safe to repeat; a guarded write takes the store's lock for each. */
async function attempts<T>(engine: Engine, run: CallRun, fn: ToolFunction<unknown, T>): Promise<ExecuteOutcome<T>> {
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
      nextAttempt(run, tracked); // provisional: the number this attempt's failure would take
      // In memory at once (the tool starts a microtask after `execute`); a shared store may answer later.
      const admitted = await breaker.acquire(run.breakerKey, run.info);
      if (!admitted.admitted) {
        // A call waiting for its circuit holds no place in the row (nor a slot, nor budget).
        if (reserved !== undefined) releaseInRow(reserved);
        reserved = undefined;
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
        if (run.storeKey !== undefined) {
          const lock = await guard.lock(run);
          if (!("token" in lock)) {
            breaker.onNeutral(run.breakerKey, permit);
            if ("refusal" in lock) return refuse(engine, run, lock);
            tracker.clearUnlessExhausted(run.counterKey);
            notifier.emit("idempotent_replay", run.toolName, run.info, { tool_name: run.toolName });
            return { status: "success", value: lock.replay as T, attempt: run.attempt, replayed: true };
          }
          token = lock.token;
          // The lease is renewed while the tool runs, also past its attempt's end (`settleLate` stops it then).
          stopLease = guard.keepLease(run, token);
        }
        run.attempts++;
        const result = await runAttempt(engine, run, fn, (tool) => (late = tool));
        if (late === undefined) stopLease?.();
        read = await readAttempt(run, result);
      } finally {
        // Freed when the attempt ends, or at its timeout even if the tool ignores its signal.
        if (limit !== undefined) releaseSlot(engine.running, run.toolName);
      }
      if (read.kind === "success") {
        await breaker.onSuccess(run.breakerKey, permit, run.info);
        // The write ran: a store fault now loses only the replay, never the result.
        if (token !== undefined) await guard.complete(run, token, read.value);
        tracker.succeeded(run.counterKey, run.toolName, engine.options.clock.now());
        throwIfAborted(run.signal); // the caller's abort wins, even over a late success (stored above)
        if (run.attempt > 1) notifier.emit("retry_succeeded", run.toolName, run.info, { tool_name: run.toolName, attempt: run.attempt });
        return { status: "success", value: read.value, attempt: run.attempt, replayed: false };
      }
      if (token !== undefined) {
        // A write cut off, or left by its caller, may still take effect: its key stays locked until it ends.
        if (late === undefined) await guard.release(run, token);
        else settleLate(engine, run, token, late, stopLease);
      }
      next = await afterFailure(engine, run, permit, read);
    } finally {
      // Settled (its failure recorded, or the row ended): the calls waiting for a place check again.
      if (reserved !== undefined) releaseInRow(reserved);
    }
    if (next.status !== "retry") return next;
    run.inPlace++;
    if (next.delayMs > 0) await engine.options.clock.sleep(next.delayMs, run.signal);
    else throwIfAborted(run.signal);
  }
}

/** A write whose tool outlived its attempt: when the tool ends, its result is stored (a retry replays it) or its key released. */
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
