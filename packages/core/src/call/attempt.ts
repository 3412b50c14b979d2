import { abortReason } from "../clock.js";
import { ErrorCodes } from "../errors/error-codes.js";
import { createToolError, type ToolError } from "../errors/tool-error.js";
import { attemptTimeoutMessage, DEFAULT_SUGGESTED_ACTIONS, WRITE_TIMEOUT_ACTION, writeTimeoutMessage } from "../texts/model-texts.js";
import type { CallRun, Engine, ToolContext, ToolFunction } from "./call.js";

/** What one attempt did: `returned` a value (which may still report a failure), or `threw`. */
export type AttemptResult<T> = { readonly kind: "returned"; readonly value: T } | { readonly kind: "threw"; readonly error: unknown };

/** A timeout error of this engine → the tool's own promise, still running after the time limit (a WeakMap: a thrown Proxy's traps never run). */
const LATE_ATTEMPTS = new WeakMap<object, Promise<unknown>>();

/** The tool's promise after its attempt timed out (a write's result still has to reach the store), if `failure` is that timeout. */
export function lateOf(failure: unknown): Promise<unknown> | undefined {
  return typeof failure === "object" && failure !== null ? LATE_ATTEMPTS.get(failure) : undefined;
}

/**
 * The tool run once, inside every observer's context. `onLate` is told of the tool's promise when
 * the attempt ends before it (its limit, the caller's abort): a write may still take effect.
 */
export async function runAttempt<T>(
  engine: Engine,
  run: CallRun,
  fn: ToolFunction<unknown, T>,
  onLate: (tool: Promise<unknown>) => void,
): Promise<AttemptResult<T>> {
  try {
    const value = await engine.notifier.inContext(run.info, () => attemptOnce(engine, run, fn, onLate));
    return { kind: "returned", value };
  } catch (error) {
    return { kind: "threw", error };
  }
}

/**
 * Settles with the tool; or fails with `TIMEOUT` (transient) at the limit, or at once with the
 * caller's abort reason, whether or not the tool stops. Its timer and listener are gone when it ends.
 */
function attemptOnce<T>(engine: Engine, run: CallRun, fn: ToolFunction<unknown, T>, onLate: (tool: Promise<unknown>) => void): Promise<T> {
  const caller = run.signal;
  if (caller?.aborted) return Promise.reject(abortReason(caller));
  // The attempt's own limit in its failing row (the last one for every later attempt), if any.
  const limits = run.policy.attemptTimeoutsMs;
  const limitMs = limits.length === 0 ? undefined : limits[Math.min(Math.max(run.attempt, 1), limits.length) - 1];
  const attempt = run.attempt;
  return new Promise<T>((resolve, reject) => {
    // The attempt's one signal (the tool's) and, with a limit, its one timer.
    const own = new AbortController();
    let stopTimer: (() => void) | undefined;
    let settled = false;
    const end = (): boolean => {
      if (settled) return false;
      settled = true;
      caller?.removeEventListener("abort", onAbort);
      stopTimer?.();
      return true;
    };
    const onAbort = (): void => {
      if (!end()) return;
      const reason = abortReason(caller as AbortSignal);
      own.abort(reason);
      onLate(tool);
      reject(reason);
    };
    const key = run.idempotencyKey === undefined ? {} : { idempotencyKey: run.idempotencyKey };
    const context: ToolContext = { attempt, signal: own.signal, toolName: run.toolName, callId: run.call.callId, ...key };
    const tool = callTool(fn, run.host, run.call.args, context);
    caller?.addEventListener("abort", onAbort, { once: true });
    if (caller?.aborted) onAbort(); // aborted by the tool's own synchronous code
    tool.then(
      (value) => {
        if (end()) resolve(value);
      },
      (error: unknown) => {
        if (end()) reject(error);
      },
    );
    if (limitMs === undefined || settled) return;
    // The default limit is a watchdog: a test clock does not jump to it.
    stopTimer = engine.options.clock.timer(
      limitMs,
      () => {
        if (!end()) return;
        onLate(tool);
        const error = timeoutError(run.toolName, run.storeKey !== undefined, limitMs, tool);
        own.abort(error);
        engine.notifier.emit("attempt_timed_out", run.toolName, run.info, { tool_name: run.toolName, attempt, timeout_ms: limitMs });
        reject(error);
      },
      run.policy.defaultLimit,
    );
  });
}

/** The `TIMEOUT` of an attempt cut off at its limit; `write`: a guarded write, which may still take effect. */
function timeoutError(toolName: string, write: boolean, timeoutMs: number, late: Promise<unknown>): ToolError {
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

/** The tool, once: a host adapter's call is its `this` (its `run` method). */
function callTool<T>(fn: ToolFunction<unknown, T>, self: unknown, args: unknown, context: ToolContext): Promise<T> {
  try {
    return Promise.resolve(fn.call(self, args, context));
  } catch (error) {
    return Promise.reject(error);
  }
}
