import { ErrorCodes } from "../errors/error-codes.js";
import { RetriesExhaustedError } from "../errors/retries-exhausted-error.js";
import type { CallEnd } from "../events/events.js";
import { isThenable } from "../internal/thenable.js";
import type { ExecuteOutcome } from "../outcome.js";
import { type CallRun, passesThrough } from "./call-state.js";
import type { Engine } from "./engine.js";

// The ends of a logical call: a fallback for a final failure, what observers are told when it
// ends, and `onExhausted: "throw"`.

/** The codes of a tool told as temporarily unavailable (its circuit open, its retry budget spent). */
const UNAVAILABLE: ReadonlySet<string> = new Set<string>([ErrorCodes.CIRCUIT_OPEN, ErrorCodes.RETRY_BUDGET_SPENT]);

/**
 * Would the call otherwise fail: a `failed` outcome, or the tool told as temporarily unavailable (a
 * transient failure past the call's patience, an open circuit, a spent budget) for a tool that is
 * not a write. A correction asked of the model (`reflect` for its arguments) is not a failure.
 */
function fails(run: CallRun, outcome: ExecuteOutcome<unknown>): boolean {
  if (outcome.status === "failed") return true;
  if (outcome.status !== "reflect" || run.effect === "write") return false;
  return UNAVAILABLE.has(outcome.error.code) || outcome.error.kind === "transient";
}

/**
 * An outcome that fails (`fails`) replaced by the policy's `fallback` value, when it gives one:
 * `success` with `fallback: true` (the failure was counted all the same). A fallback that throws,
 * or returns `undefined`, keeps the failure. Synchronous when there is nothing to do.
 */
export function withFallback<T>(engine: Engine, run: CallRun, outcome: ExecuteOutcome<T>): ExecuteOutcome<T> | Promise<ExecuteOutcome<T>> {
  const fallback = run.policy.fallback;
  if (fallback === undefined || outcome.status === "success" || !fails(run, outcome)) return outcome;
  const replace = (value: unknown): ExecuteOutcome<T> => {
    if (value === undefined) return outcome;
    engine.notifier.emit("fallback_used", run.toolName, run.info, { tool_name: run.toolName, error_code: outcome.error.code });
    return { status: "success", value: value as T, attempt: outcome.attempt, replayed: false, fallback: true };
  };
  try {
    const value = fallback(run.call, outcome.error);
    // Any thenable is awaited (a promise of another realm or library too), never returned as the value.
    return isThenable(value) ? Promise.resolve(value).then(replace, () => outcome) : replace(value);
  } catch {
    return outcome; // a throwing fallback, or a thenable whose `then` getter throws
  }
}

/** `onExhausted: "throw"` turns an exhausted outcome into a `RetriesExhaustedError`. */
export function throwIfExhausted<T>(engine: Engine, outcome: ExecuteOutcome<T>, toolName: string): ExecuteOutcome<T> {
  if (outcome.status === "failed" && outcome.reason === "exhausted" && engine.options.onExhausted === "throw") {
    throw new RetriesExhaustedError({ toolName, attempts: outcome.attempt, error: outcome.error });
  }
  return outcome;
}

/** The end of a call nobody observes: the fallback, then `onExhausted`. */
export function finish<T>(engine: Engine, run: CallRun, outcome: ExecuteOutcome<T>): ExecuteOutcome<T> | Promise<ExecuteOutcome<T>> {
  const next = withFallback(engine, run, outcome);
  return next instanceof Promise
    ? next.then((settled) => throwIfExhausted(engine, settled, run.toolName))
    : throwIfExhausted(engine, next, run.toolName);
}

/**
 * Tells the observers how the call ended: an outcome, or what was thrown out of `execute`. The
 * `CallEnd` is one object literal, every member in one order (no spread): one shape for every end.
 */
export function endCall(engine: Engine, run: CallRun, outcome: ExecuteOutcome<unknown> | undefined, thrown?: unknown): void {
  const info = run.info;
  if (info === undefined || !engine.notifier.callHooks) return;
  const durationMs = engine.options.clock.now() - info.startTime;
  const circuitState = run.breaker.state(run.breakerKey);
  const success = outcome?.status === "success" ? outcome : undefined;
  const failure = outcome !== undefined && outcome.status !== "success" ? outcome : undefined;
  const end: CallEnd = {
    status: outcome !== undefined ? outcome.status : run.signal?.aborted ? "aborted" : passesThrough(run, thrown) ? "interrupted" : "error",
    attempts: run.attempts,
    attempt: run.attempt,
    replayed: success?.replayed === true,
    fallback: success?.fallback === true,
    durationMs,
    circuitState,
    error: failure?.error,
    reason: failure?.status === "failed" ? failure.reason : undefined,
    value: success?.value,
    thrown: outcome === undefined ? thrown : undefined,
  };
  engine.notifier.callEnd(info, end);
}

/** A call's end: a fallback replaces a final failure before the observers are told how the call ended; then `onExhausted`. */
export function ended<T>(engine: Engine, run: CallRun, outcome: ExecuteOutcome<T>): ExecuteOutcome<T> | Promise<ExecuteOutcome<T>> {
  if (run.info === undefined || !engine.notifier.callHooks) return finish(engine, run, outcome);
  const settled = withFallback(engine, run, outcome);
  const tell = (last: ExecuteOutcome<T>): ExecuteOutcome<T> => {
    endCall(engine, run, last);
    return throwIfExhausted(engine, last, run.toolName);
  };
  if (!(settled instanceof Promise)) return tell(settled);
  return settled.then(tell, (error: unknown) => {
    endCall(engine, run, undefined, error);
    throw error;
  });
}
