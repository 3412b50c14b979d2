import { abortReason } from "../clock.js";
import type { ToolContext } from "../config/options.js";
import { callTool, cutOff } from "./attempt-parts.js";
import type { CallRun, ToolFunction } from "./call-state.js";
import { AttemptContext, coarseAttempt } from "./coarse-attempt.js";
import type { Engine } from "./engine.js";

export { callTool, lateOf } from "./attempt-parts.js";

const TIMED_OUT: unique symbol = Symbol("timed out");
const noop = (): void => {};

/**
 * Runs the tool once, inside every observer's context: always a promise (a synchronous throw
 * becomes a rejection), so that observers wrapping it see one shape. Not an async function: the
 * caller awaits the tool's own promise, one frame fewer per attempt. Telling a returned failure
 * from a value is the caller's. With `attemptTimeoutMs`, the attempt has its own signal and timer.
 */
export function runAttempt<T>(engine: Engine, run: CallRun, fn: ToolFunction<unknown, T>): Promise<T> {
  const timeoutMs = run.policy.attemptTimeoutMs;
  if (timeoutMs !== undefined) return timedAttempt(engine, run, fn, timeoutMs);
  if (run.policy.defaultLimit) {
    const context = new AttemptContext(run.attempt, run.signal, run.toolName, run.call.callId, run.idempotencyKey);
    const write = run.storeKey !== undefined;
    // No closure unless observers wrap the attempt in their context.
    if (run.info === undefined) return coarseAttempt(engine, fn, run.host, run.call.args, context, write, undefined);
    return engine.notifier.inContext(run.info, () => coarseAttempt(engine, fn, run.host, run.call.args, context, write, run.info));
  }
  const context = contextOf(run, run.signal);
  if (run.info === undefined) return callTool(fn, run.host, run.call.args, context);
  return engine.notifier.inContext(run.info, () => callTool(fn, run.host, run.call.args, context));
}

/**
 * One attempt with a time limit: the tool gets a signal of its own (aborted by the caller's, and at
 * the limit); past the limit the attempt fails with `TIMEOUT` (transient) whether or not the tool
 * stops, and the caller's abort rejects at once. The timer and the listener are gone when it ends.
 */
function timedAttempt<T>(engine: Engine, run: CallRun, fn: ToolFunction<unknown, T>, timeoutMs: number): Promise<T> {
  // The race runs inside the observers' context: a span per attempt ends with the attempt, at the limit.
  return run.info === undefined
    ? race(engine, run, fn, timeoutMs)
    : engine.notifier.inContext(run.info, () => race(engine, run, fn, timeoutMs));
}

async function race<T>(engine: Engine, run: CallRun, fn: ToolFunction<unknown, T>, timeoutMs: number): Promise<T> {
  const own = new AbortController();
  const outer = run.signal;
  let onOuterAbort: (() => void) | undefined;
  const aborted =
    outer === undefined
      ? undefined
      : new Promise<never>((_resolve, reject) => {
          onOuterAbort = () => {
            own.abort(abortReason(outer));
            reject(abortReason(outer));
          };
          if (outer.aborted) onOuterAbort();
          else outer.addEventListener("abort", onOuterAbort, { once: true });
        });
  aborted?.catch(noop);
  const tool = callTool(fn, run.host, run.call.args, contextOf(run, own.signal));
  const stopTimer = new AbortController();
  const timer = engine.options.clock.sleep(timeoutMs, stopTimer.signal).then(
    () => TIMED_OUT,
    () => new Promise<never>(noop),
  );
  let winner: T | typeof TIMED_OUT;
  try {
    winner = (await Promise.race(aborted === undefined ? [tool, timer] : [tool, timer, aborted])) as T | typeof TIMED_OUT;
  } finally {
    stopTimer.abort();
    if (onOuterAbort !== undefined) outer?.removeEventListener("abort", onOuterAbort);
  }
  if (winner !== TIMED_OUT) return winner;
  throw cutOff(engine, run.toolName, run.attempt, run.info, timeoutMs, run.storeKey !== undefined, tool, (error) => own.abort(error));
}

function contextOf(run: CallRun, signal: AbortSignal | undefined): ToolContext {
  return run.idempotencyKey === undefined
    ? { attempt: run.attempt, signal, toolName: run.toolName, callId: run.call.callId }
    : { attempt: run.attempt, signal, toolName: run.toolName, callId: run.call.callId, idempotencyKey: run.idempotencyKey };
}
