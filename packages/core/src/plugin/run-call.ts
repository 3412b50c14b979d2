import { RetriesExhaustedError } from "../errors/retries-exhausted-error.js";
import type { CallEndFields } from "../events/notifier.js";
import type { CallRun, Engine } from "./call-run.js";
import type { ExecuteOutcome } from "./outcome.js";

// The ends of a logical call: what observers are told when it ends, and `onExhausted: "throw"`.

/** `onExhausted: "throw"` turns an exhausted outcome into a `RetriesExhaustedError`. */
export function finish<T>(engine: Engine, outcome: ExecuteOutcome<T>, toolName: string): ExecuteOutcome<T> {
  if (outcome.status === "failed" && outcome.reason === "exhausted" && engine.options.onExhausted === "throw") {
    throw new RetriesExhaustedError({ toolName, attempts: outcome.attempt, error: outcome.error });
  }
  return outcome;
}

/** Tells the observers how the call ended: an outcome, or what was thrown out of `execute`. */
export function endCall(engine: Engine, run: CallRun, outcome: ExecuteOutcome<unknown> | undefined, thrown?: unknown): void {
  const info = run.info;
  if (info === undefined) return;
  const circuitState = engine.breaker.state(run.breakerKey);
  let fields: CallEndFields;
  if (outcome === undefined) {
    const status = run.signal?.aborted ? "aborted" : passesThrough(run, thrown) ? "interrupted" : "error";
    fields = { status, attempts: run.attempts, attempt: run.attempt, replayed: false, circuitState, thrown };
  } else if (outcome.status === "success") {
    fields = { status: "success", attempts: run.attempts, attempt: run.attempt, replayed: outcome.replayed, circuitState, value: outcome.value };
  } else {
    const reason = outcome.status === "failed" ? outcome.reason : undefined;
    fields = { status: outcome.status, attempts: run.attempts, attempt: run.attempt, replayed: false, circuitState, error: outcome.error, reason };
  }
  engine.notifier.callEnd(info, fields);
}

function passesThrough(run: CallRun, thrown: unknown): boolean {
  try {
    return run.call.passThrough?.(thrown) === true;
  } catch {
    return false;
  }
}
