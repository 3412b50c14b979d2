import type { ToolContext } from "../config/options.js";
import { ErrorCodes } from "../errors/error-codes.js";
import { createToolError, type ToolError } from "../errors/tool-error.js";
import type { CallInfo } from "../events/events.js";
import { attemptTimeoutMessage, DEFAULT_SUGGESTED_ACTIONS, WRITE_TIMEOUT_ACTION, writeTimeoutMessage } from "../texts/model-texts.js";
import type { ToolFunction } from "./call-state.js";
import type { Engine } from "./engine.js";

// What every kind of attempt shares: the tool called once, and the timeout of an attempt cut off
// at its limit (with the tool's promise, still running, kept for a write's late result).

/** A timeout error of this engine → the tool's own promise, still running after the time limit. */
const LATE_ATTEMPTS = new WeakMap<object, Promise<unknown>>();

/** The tool's promise after its attempt timed out (a write's result still has to reach the store), if `failure` is that timeout. */
export function lateOf(failure: unknown): Promise<unknown> | undefined {
  // A WeakMap, not a property read: what a tool threw may be a Proxy whose traps throw.
  return typeof failure === "object" && failure !== null ? LATE_ATTEMPTS.get(failure) : undefined;
}

/** The `TIMEOUT` of an attempt cut off at its limit; `write`: a guarded write, which may still take effect. */
function timeoutError(toolName: string, write: boolean, timeoutMs: number, late: Promise<unknown>): ToolError {
  // A guarded write cut off may still take effect: it is not retried in place (its key stays held until it ends).
  const error = createToolError({
    code: ErrorCodes.TIMEOUT,
    message: write ? writeTimeoutMessage(toolName, timeoutMs) : attemptTimeoutMessage(toolName, timeoutMs),
    recoverable: true,
    suggestedAction: write ? WRITE_TIMEOUT_ACTION : DEFAULT_SUGGESTED_ACTIONS.TIMEOUT,
    kind: "transient",
    details: { timeout_ms: timeoutMs },
  });
  LATE_ATTEMPTS.set(error, late);
  return error;
}

const noop = (): void => {};

/**
 * An attempt cut off at its limit: its `TIMEOUT`, with
 * which `abort` aborts the attempt's own signal, then the tool's late failure swallowed (nobody's
 * rejection) and the `attempt_timed_out` event. The caller settles the attempt with the error.
 */
export function cutOff(
  engine: Engine,
  toolName: string,
  attempt: number,
  info: CallInfo | undefined,
  timeoutMs: number,
  write: boolean,
  tool: Promise<unknown>,
  abort: (error: ToolError) => void,
): ToolError {
  const error = timeoutError(toolName, write, timeoutMs, tool);
  abort(error);
  tool.catch(noop);
  engine.notifier.emit("attempt_timed_out", toolName, info, { tool_name: toolName, attempt, timeout_ms: timeoutMs });
  return error;
}

/** The tool, once: a host adapter's call is its `this` (its `run` method). */
export function callTool<T>(fn: ToolFunction<unknown, T>, self: unknown, args: unknown, context: ToolContext): Promise<T> {
  try {
    return Promise.resolve(fn.call(self, args, context));
  } catch (error) {
    return Promise.reject(error);
  }
}
