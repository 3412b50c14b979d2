import type { CallRun, Engine, ToolFunction } from "./call-run.js";
import type { ToolContext } from "./options.js";

/**
 * Runs the tool once, inside every observer's context: always a promise (a synchronous throw
 * becomes a rejection), so that observers wrapping it see one shape. Not an async function: the
 * caller awaits the tool's own promise, one frame fewer per attempt. Telling a returned failure
 * from a value (`isReturnedFailure`) is the caller's.
 */
export function runAttempt<T>(engine: Engine, run: CallRun, fn: ToolFunction<unknown, T>): Promise<T> {
  const context: ToolContext =
    run.idempotencyKey === undefined
      ? { attempt: run.attempt, signal: run.signal, toolName: run.toolName, callId: run.call.callId }
      : { attempt: run.attempt, signal: run.signal, toolName: run.toolName, callId: run.call.callId, idempotencyKey: run.idempotencyKey };
  if (run.info === undefined) return callTool(fn, run.call.args, context);
  return engine.notifier.inContext(run.info, () => callTool(fn, run.call.args, context));
}

function callTool<T>(fn: ToolFunction<unknown, T>, args: unknown, context: ToolContext): Promise<T> {
  try {
    return Promise.resolve(fn(args, context));
  } catch (error) {
    return Promise.reject(error);
  }
}
