import { ErrorCodes } from "../errors/error-codes.js";
import { RetriesExhaustedError } from "../errors/retries-exhausted-error.js";
import type { ExecuteOutcome } from "../outcome.js";
import type { CallRun } from "./call-state.js";
import type { Engine } from "./engine.js";
import { passesThrough } from "./read-failure.js";

// The end of a logical call: a fallback replaces a final failure, observers are told how the call
// ended, then `onExhausted: "throw"`.

/** The codes of a tool told as temporarily unavailable (its circuit open, its retry budget spent). */
const UNAVAILABLE: ReadonlySet<string> = new Set<string>([ErrorCodes.CIRCUIT_OPEN, ErrorCodes.RETRY_BUDGET_SPENT]);

/** A call's end: the fallback, the observers told, then `onExhausted`. */
export async function ended<T>(engine: Engine, run: CallRun, outcome: ExecuteOutcome<T>): Promise<ExecuteOutcome<T>> {
  const last = await withFallback(engine, run, outcome);
  endCall(engine, run, last);
  if (last.status === "failed" && last.reason === "exhausted" && engine.options.onExhausted === "throw") {
    throw new RetriesExhaustedError({ toolName: run.toolName, attempts: last.attempt, error: last.error });
  }
  return last;
}

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
 * rejects, or gives `undefined`, keeps the failure.
 */
async function withFallback<T>(engine: Engine, run: CallRun, outcome: ExecuteOutcome<T>): Promise<ExecuteOutcome<T>> {
  const fallback = run.policy.fallback;
  if (fallback === undefined || outcome.status === "success" || !fails(run, outcome)) return outcome;
  let value: unknown;
  try {
    // Any thenable is awaited (a promise of another realm or library too), never returned as the value.
    value = await fallback(run.call, outcome.error);
  } catch {
    return outcome; // a throwing or rejecting fallback, or a thenable whose `then` getter throws
  }
  if (value === undefined) return outcome;
  engine.notifier.emit("fallback_used", run.toolName, run.info, { tool_name: run.toolName, error_code: outcome.error.code });
  return { status: "success", value: value as T, attempt: outcome.attempt, replayed: false, fallback: true };
}

/** Tells the observers how the call ended: an outcome, or what was thrown out of `execute`. */
export function endCall(engine: Engine, run: CallRun, outcome: ExecuteOutcome<unknown> | undefined, thrown?: unknown): void {
  if (!engine.notifier.callHooks) return;
  const info = run.info;
  const success = outcome?.status === "success" ? outcome : undefined;
  const failure = outcome !== undefined && outcome.status !== "success" ? outcome : undefined;
  engine.notifier.callEnd(info, {
    status: outcome !== undefined ? outcome.status : run.signal?.aborted ? "aborted" : passesThrough(run, thrown) ? "interrupted" : "error",
    attempts: run.attempts,
    attempt: outcome?.attempt ?? run.attempt,
    replayed: success?.replayed === true,
    fallback: success?.fallback === true,
    durationMs: engine.options.clock.now() - info.startTime,
    circuitState: run.breaker.state(run.breakerKey),
    error: failure?.error,
    reason: failure?.status === "failed" ? failure.reason : undefined,
    value: success?.value,
    thrown: outcome === undefined ? thrown : undefined,
  });
}
