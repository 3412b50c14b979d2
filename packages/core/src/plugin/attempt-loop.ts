import { CLOSED_PERMIT } from "../breaker/circuit-breaker.js";
import { isReturnedFailure } from "../classify/classify-error.js";
import { abortReason } from "../clock.js";
import { admission, rejected, stopExhausted } from "./admission.js";
import { afterFailure, refuse } from "./after-failure.js";
import type { CallRun, Engine, ToolFunction } from "./call-run.js";
import type { ExecuteOutcome, SuccessOutcome } from "./outcome.js";
import { runAttempt } from "./run-attempt.js";

// The one async loop of a logical call: admission, the backoff gate (admission again after it),
// the idempotency guard for writes (join, then a lock per attempt), then attempt after attempt
// while failures are transient and safe to repeat.

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

/**
 * A fast path's first attempt failed: decide on it, then go on as any call (the gate is behind it).
 * The decision is synchronous: an outcome comes back as it is, an in-place retry as a promise.
 */
export function continueAfterFailure<T>(
  engine: Engine,
  run: CallRun,
  fn: ToolFunction<unknown, T>,
  failure: unknown,
): ExecuteOutcome<T> | Promise<ExecuteOutcome<T>> {
  run.attempts = 1;
  const next = afterFailure(engine, run, CLOSED_PERMIT, failure);
  return typeof next === "number" ? attempts(engine, run, fn, false, next) : next;
}

/** One attempt after another while failures are transient and safe to repeat; `firstDelayMs`: an in-place retry's wait first. */
async function attempts<T>(
  engine: Engine,
  run: CallRun,
  fn: ToolFunction<unknown, T>,
  guarded: boolean,
  firstDelayMs?: number,
): Promise<ExecuteOutcome<T>> {
  const { breaker, tracker, guard, notifier } = engine;
  if (firstDelayMs !== undefined) {
    const waiting = backoff(engine, run, firstDelayMs);
    if (waiting !== undefined) await waiting;
  }
  for (;;) {
    const tracked = tracker.get(run.counterKey, run.toolName);
    // No attempt, first or in place, starts once the budget is spent (by this call or a parallel one).
    if (tracked?.exhausted) return stopExhausted(engine, run, tracked);
    // Provisional: the number this attempt's failure would take, were it recorded next.
    run.attempt = (tracked?.failures ?? 0) + 1;
    const admitted = breaker.acquire(run.breakerKey, run.info);
    if (!admitted.admitted) return rejected(engine, run, admitted.retryAfterMs);
    const permit = admitted.permit;

    let token: string | undefined;
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
    let value: T | undefined;
    let failure: unknown;
    let failed = false;
    try {
      value = await runAttempt(engine, run, fn);
      if (isReturnedFailure(value)) {
        failed = true;
        failure = value;
      }
    } catch (error) {
      failed = true;
      failure = error;
    }
    if (!failed) {
      breaker.onSuccess(run.breakerKey, permit, run.info);
      // The write ran: a store fault now loses only the replay, never the result.
      if (token !== undefined) await guard.complete(run, token, value);
      tracker.clearUnlessExhausted(run.counterKey, run.toolName);
      throwIfAborted(run.signal); // the caller's abort wins, even over a late success (stored above)
      if (run.attempt > 1) notifier.emit("retry_succeeded", run.toolName, run.info, { tool_name: run.toolName, attempt: run.attempt });
      return { status: "success", value: value as T, attempt: run.attempt, replayed: false } satisfies SuccessOutcome<T>;
    }
    if (token !== undefined) await guard.release(run, token);
    const next = afterFailure(engine, run, permit, failure);
    if (typeof next !== "number") return next;
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
