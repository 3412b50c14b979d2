import { abortReason, watchdogSignal } from "../clock.js";
import type { ToolContext } from "../config/options.js";
import type { ResolvedPolicy } from "../config/policy.js";
import type { CallInfo } from "../events/events.js";
import { callTool, cutOff } from "./attempt-parts.js";
import type { CallRun, ToolFunction } from "./call-state.js";
import type { Engine } from "./engine.js";

export { callTool, lateOf } from "./attempt-parts.js";

const noop = (): void => {};

/** What one attempt is: the tool's context, the caller's signal, its time limit. */
export interface AttemptSpec {
  readonly toolName: string;
  readonly attempt: number;
  readonly callId: string | undefined;
  readonly idempotencyKey: string | undefined;
  /** The caller's signal: its abort ends the attempt at once. */
  readonly signal: AbortSignal | undefined;
  /** The policy's time limit, undefined for none (`attemptTimeoutMs: 0`). */
  readonly limitMs: number | undefined;
  /** Whether the limit is the default one (a test clock leaves its timer out of its pending sleeps). */
  readonly defaultLimit: boolean;
  /** A guarded write: cut off at its limit, it may still take effect. */
  readonly write: boolean;
  readonly info: CallInfo | undefined;
  /** Told of the tool's promise when the attempt ends before it (its limit, the caller's abort): a write may still take effect. */
  readonly onLate?: ((tool: Promise<unknown>) => void) | undefined;
}

/** The time limit of attempt `attempt` (1-based, in its failing row) under `policy`: its own limit, or the last one for every later attempt; undefined for none. */
export function limitOf(policy: ResolvedPolicy, attempt: number): number | undefined {
  const limits = policy.attemptTimeoutsMs;
  return limits.length === 0 ? undefined : limits[Math.min(Math.max(attempt, 1), limits.length) - 1];
}

/**
 * Runs the tool of a call's run once, inside every observer's context (a span per attempt ends
 * with the attempt, at the limit too).
 */
export function runAttempt<T>(
  engine: Engine,
  run: CallRun,
  fn: ToolFunction<unknown, T>,
  onLate?: (tool: Promise<unknown>) => void,
): Promise<T> {
  const spec: AttemptSpec = {
    toolName: run.toolName,
    attempt: run.attempt,
    callId: run.call.callId,
    idempotencyKey: run.idempotencyKey,
    signal: run.signal,
    limitMs: limitOf(run.policy, run.attempt),
    defaultLimit: run.policy.defaultLimit,
    write: run.storeKey !== undefined,
    info: run.info,
    onLate,
  };
  if (run.info === undefined) return attemptOnce(engine, fn, run.host, run.call.args, spec);
  return engine.notifier.inContext(run.info, () => attemptOnce(engine, fn, run.host, run.call.args, spec));
}

/**
 * One attempt: the tool called once with a signal of its own, which aborts with the caller's and at
 * the limit. It settles with the tool; or fails with `TIMEOUT` (transient) at the limit, whether or
 * not the tool stops; or rejects at once with the caller's abort reason, whether or not the tool
 * stops. Its timer and listener are gone when it ends; while it runs, its timer (on the system
 * clock) keeps the process alive, so a script awaiting the call ends when the call does.
 */
export function attemptOnce<T>(engine: Engine, fn: ToolFunction<unknown, T>, self: unknown, args: unknown, spec: AttemptSpec): Promise<T> {
  const caller = spec.signal;
  if (caller?.aborted) return Promise.reject(abortReason(caller));
  return new Promise<T>((resolve, reject) => {
    const own = new AbortController();
    const stopTimer = spec.limitMs === undefined ? undefined : new AbortController();
    let settled = false;
    const end = (): boolean => {
      if (settled) return false;
      settled = true;
      caller?.removeEventListener("abort", onAbort);
      stopTimer?.abort();
      return true;
    };
    const onAbort = (): void => {
      if (!end()) return;
      const reason = abortReason(caller as AbortSignal);
      own.abort(reason);
      tool.catch(noop); // the tool's late failure is nobody's rejection
      spec.onLate?.(tool);
      reject(reason);
    };
    const tool = callTool(fn, self, args, contextOf(spec, own.signal));
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
    if (spec.limitMs === undefined || stopTimer === undefined) return;
    const limitMs = spec.limitMs;
    const timerSignal = spec.defaultLimit ? watchdogSignal(stopTimer) : stopTimer.signal;
    engine.options.clock.sleep(limitMs, timerSignal).then(() => {
      if (!end()) return;
      spec.onLate?.(tool);
      reject(cutOff(engine, spec.toolName, spec.attempt, spec.info, limitMs, spec.write, tool, (error) => own.abort(error)));
    }, noop);
  });
}

function contextOf(spec: AttemptSpec, signal: AbortSignal): ToolContext {
  return spec.idempotencyKey === undefined
    ? { attempt: spec.attempt, signal, toolName: spec.toolName, callId: spec.callId }
    : { attempt: spec.attempt, signal, toolName: spec.toolName, callId: spec.callId, idempotencyKey: spec.idempotencyKey };
}
