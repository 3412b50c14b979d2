import { isReturnedFailure } from "../classify/classify-error.js";
import type { ToolContext } from "./options.js";
import type { CallRun, Engine, ToolFunction } from "./call-run.js";

/** What one run of the tool gave: its value, or the failure it threw or returned. */
export type AttemptResult<T> = { readonly failed: false; readonly value: T } | { readonly failed: true; readonly failure: unknown };

/**
 * Runs the tool once, inside every observer's context, and tells a failure from a value: a thrown
 * error, or a returned `ToolError`, seed-shaped error or MCP `isError` result. Never throws.
 */
export async function runAttempt<T>(engine: Engine, run: CallRun, fn: ToolFunction<unknown, T>): Promise<AttemptResult<T>> {
  const context: ToolContext =
    run.idempotencyKey === undefined
      ? { attempt: run.attempt, signal: run.signal, toolName: run.toolName, callId: run.call.callId }
      : { attempt: run.attempt, signal: run.signal, toolName: run.toolName, callId: run.call.callId, idempotencyKey: run.idempotencyKey };
  // The tool's run is always a promise (a synchronous throw becomes a rejection), so that observers
  // wrapping it see one shape.
  const runTool = (): Promise<T> => {
    try {
      return Promise.resolve(fn(run.call.args, context));
    } catch (error) {
      return Promise.reject(error);
    }
  };
  try {
    const value = await (run.info === undefined ? runTool() : engine.notifier.inContext(run.info, runTool));
    return isReturnedFailure(value) ? { failed: true, failure: value } : { failed: false, value };
  } catch (error) {
    return { failed: true, failure: error };
  }
}
