import type { FailedOutcome, ReflectOutcome } from "../outcome.js";
import type { TrackedAttempts } from "./attempt-tracker.js";
import { exhaustedError, failedOutcome } from "./build-outcome.js";
import type { CallRun } from "./call-state.js";
import type { Engine } from "./engine.js";
import { refuse } from "./failure.js";
import { openCircuitOutcome } from "./recovery.js";
import { repeatedCall } from "./repeated-calls.js";

// Admission, checked before a call's first attempt and again after every wait: a scope whose
// budget is spent stops the call (this beats an open circuit), then an open circuit turns it away
// unless it is due to let the call through within the call's patience (see recovery.ts).
// Synchronous, and reading only: the circuit moves when an attempt acquires its permit.

/** The call's stop before it runs (or its refusal, as an exact call that keeps failing), or undefined when it may go on. */
export function admission(engine: Engine, run: CallRun): ReflectOutcome | FailedOutcome | undefined {
  const tracked = engine.tracker.get(run.counterKey, run.toolName);
  if (tracked?.exhausted && !resetIfDue(engine, run, tracked)) return stopExhausted(engine, run, tracked);
  const repeated = repeatedCall(run, tracked);
  if (repeated !== undefined) return refuse(engine, run, repeated);
  const openFor = run.breaker.peek(run.breakerKey);
  // A circuit due to let the call through within its patience, or probing: the attempt loop waits for it.
  if (openFor === undefined) return undefined;
  return openCircuitOutcome(engine, run, openFor, run.breaker.state(run.breakerKey) === "half-open");
}

/**
 * A spent budget ends `exhaustedResetMs` after the failure that spent it: the row starts afresh
 * (the exact calls that failed are still remembered) and this call goes on. False while it holds.
 */
export function resetIfDue(engine: Engine, run: CallRun, tracked: TrackedAttempts): boolean {
  const resetMs = run.policy.exhaustedResetMs;
  const mark = tracked.exhausted;
  if (mark === undefined || resetMs === 0 || engine.options.clock.now() - mark.at < resetMs) return false;
  engine.tracker.clear(run.counterKey, run.toolName);
  return true;
}

/** A call of a tool whose budget is spent in this scope: stopped without running. */
export function stopExhausted(engine: Engine, run: CallRun, tracked: TrackedAttempts): FailedOutcome {
  run.attempt = tracked.failures;
  return failedOutcome(engine, run, exhaustedError(run, tracked.exhausted as NonNullable<TrackedAttempts["exhausted"]>), "exhausted");
}
