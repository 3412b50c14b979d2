import { CLOSED_PERMIT } from "../breaker/circuit-breaker.js";
import { abortReason } from "../clock.js";
import type { ToolCall } from "../config/options.js";
import { effectOf, isInScope } from "../config/resolve.js";
import type { CallInfo } from "../events/events.js";
import type { ExecuteOutcome, SuccessOutcome, ToolEffect } from "../outcome.js";
import { admission } from "./admission.js";
import { runAttempt } from "./attempt.js";
import { firstAttemptContext, returnedFailure, thrownFailure } from "./attempt-failure.js";
import { continueAfterFailure, observed } from "./attempt-loop.js";
import { counterKey } from "./attempt-tracker.js";
import { endCall, ended, finish } from "./call-end.js";
import { type CallRun, callInfo, newRun, resolvedCall, type ToolFunction, trackingScopeOf } from "./call-state.js";
import { AttemptContext, coarseAttempt } from "./coarse-attempt.js";
import { type Engine, setupOf, type ToolSetup } from "./engine.js";
import { checkCall, type EngineCall } from "./tool-call.js";

// The one entry of a call (`execute`'s, and a host adapter's): the synchronous pre-dispatch (the
// one healthy predicate; replays and refusals decided without an async frame), the one direct
// attempt of a healthy tool, and the observed path of every other call.

/** `plugin.execute`: see its documentation. */
export function runCall<Args, T>(engine: Engine, call: ToolCall<Args>, fn: ToolFunction<Args, T>): Promise<ExecuteOutcome<T>> {
  try {
    checkCall(call, fn);
    if (!isInScope(engine.options, call.toolName)) return plain(call, fn);
    return dispatch(engine, call as EngineCall, fn as ToolFunction<unknown, T>, undefined, undefined) as Promise<ExecuteOutcome<T>>;
  } catch (error) {
    return Promise.reject(error);
  }
}

/** What a host makes of an outcome (its tool message, its result), made once per adapter: it gets the call. */
export type Present<T, P> = (outcome: ExecuteOutcome<T>, call: EngineCall) => P;

/**
 * A host adapter's call of an in-scope tool (`runToolCall`): `fn` is the host call's `run`, called
 * with the call as `this`; the call reads what its tool did (`failureOfResult`, `failureOfThrown`).
 * A success made directly resolves to the tool's own value; every other outcome to `present(outcome)`.
 */
export function runHostCall<T, P>(
  engine: Engine,
  call: EngineCall,
  fn: ToolFunction<unknown, T>,
  present?: Present<T, P>,
): Promise<ExecuteOutcome<T> | T | P> {
  try {
    return dispatch(engine, call, fn, call, present);
  } catch (error) {
    return Promise.reject(error);
  }
}

/**
 * The pre-dispatch: the one healthy predicate, then the direct attempt, or what is decided without
 * an async frame (a plain call, a replay or a rejection), or the observed path.
 */
function dispatch<T, P>(
  engine: Engine,
  call: EngineCall,
  fn: ToolFunction<unknown, T>,
  host: EngineCall | undefined,
  present: Present<T, P> | undefined,
): Promise<ExecuteOutcome<T> | T | P> {
  const toolName = call.toolName;
  const { options, notifier } = engine;
  const setup = setupOf(engine, toolName);
  const effect = call.effect ?? effectOf(options, toolName);
  // A host call is resolved (its scope asked for, once) only when something needs it.
  const breakerKey =
    options.circuitBreakerKey === undefined ? toolName : String(options.circuitBreakerKey(resolvedCall(call, host, effect)));
  const aborted = call.signal?.aborted === true;
  const healthy = !aborted && isHealthy(engine, setup, toolName, breakerKey);
  if (healthy && effect !== "write") return direct(engine, call, fn, host, present, effect, breakerKey, setup);
  const resolved = resolvedCall(call, host, effect);
  const scope = trackingScopeOf(options, resolved);
  let outcome: Promise<ExecuteOutcome<T>> | undefined;
  // Decided without an async frame where nothing but a replay or a rejection can happen.
  if (!notifier.observed && !aborted) {
    const run = newRun(resolved, host, scope, effect, breakerKey, setup);
    if (healthy) {
      const stored = engine.guard.replayNow(run);
      if (stored !== undefined) outcome = Promise.resolve({ status: "success", value: stored.value as T, attempt: 1, replayed: true });
    } else {
      const stop = admission(engine, run);
      if (stop !== undefined) outcome = Promise.resolve(finish(engine, run, stop));
    }
    outcome ??= observed(engine, run, fn);
  } else {
    const info = notifier.observed ? callInfo(engine, resolved, scope, effect, setup) : undefined;
    outcome = observed(engine, newRun(resolved, host, scope, effect, breakerKey, setup, info), fn);
  }
  return present === undefined ? outcome : outcome.then((settled) => present(settled, host as EngineCall));
}

/** The one healthy predicate: no failure of this tool tracked in any scope, its circuit closed, nothing per attempt to enforce. */
function isHealthy(engine: Engine, setup: ToolSetup, toolName: string, breakerKey: string): boolean {
  return !setup.policy.slowOnly && !engine.tracker.hasCounters(toolName) && setup.breaker.isClosed(breakerKey);
}

/**
 * True when a call of `toolName` would be made directly: in scope, not a `write`, healthy, no
 * `circuitBreakerKey` function (whose key needs the call). Bookkeeping is per tool: a failure of
 * another tool changes nothing here.
 */
export function canRunDirectly(engine: Engine, toolName: string, effect: ToolEffect): boolean {
  const { options } = engine;
  return (
    isInScope(options, toolName) &&
    effect !== "write" &&
    options.circuitBreakerKey === undefined &&
    isHealthy(engine, setupOf(engine, toolName), toolName, toolName)
  );
}

/**
 * The one direct attempt: a healthy tool that is not a write runs at once, in this one frame, as a
 * bare wrapper would; observers that follow calls are told of its start and end. A failure becomes
 * attempt 1 of the policy (`afterDirect`: the gate and the loop are behind it). The frame holds
 * only what a success needs: an async function's locals are saved at every await.
 */
async function direct<T, P>(
  engine: Engine,
  call: EngineCall,
  fn: ToolFunction<unknown, T>,
  host: EngineCall | undefined,
  present: Present<T, P> | undefined,
  effect: ToolEffect,
  breakerKey: string,
  setup: ToolSetup,
): Promise<ExecuteOutcome<T> | T | P> {
  // Observers that follow calls see it from its start; observers of events from its failure on.
  const run = engine.notifier.callHooks ? observedRun(engine, call, host, effect, breakerKey, setup) : undefined;
  let value: T;
  try {
    value = await (run !== undefined
      ? runAttempt(engine, run, fn)
      : setup.policy.coarseTimeoutMs === undefined
        ? fn.call(host, call.args, { attempt: 1, signal: call.signal, toolName: call.toolName, callId: call.callId })
        : limited(engine, call, fn, host, setup.policy.coarseTimeoutMs));
  } catch (error) {
    return afterDirect(engine, call, fn, host, present, effect, breakerKey, setup, run, error, true);
  }
  try {
    const context = setup.policy.isFailure === undefined ? undefined : firstAttemptContext(engine, call, host, effect, run);
    const failure = returnedFailure(setup.policy, host, value, context);
    if (failure !== undefined) return afterDirect(engine, call, fn, host, present, effect, breakerKey, setup, run, failure, false);
    succeeded(engine, call, host, effect, setup, breakerKey, run);
  } catch (error) {
    if (run !== undefined) endCall(engine, run, undefined, error);
    throw error;
  }
  if (run === undefined && present !== undefined) return value;
  const outcome: SuccessOutcome<T> = { status: "success", value, attempt: 1, replayed: false };
  if (run !== undefined) endCall(engine, run, outcome);
  return present === undefined ? outcome : value;
}

/** The direct attempt under the default time limit (no timer of its own: the plugin's coarse deadlines). */
function limited<T>(
  engine: Engine,
  call: EngineCall,
  fn: ToolFunction<unknown, T>,
  host: EngineCall | undefined,
  limitMs: number,
): Promise<T> {
  const context = new AttemptContext(1, call.signal, call.toolName, call.callId, undefined);
  return coarseAttempt(engine, fn, host, call.args, context, limitMs, false, undefined);
}

/** A direct call that observers follow: its run, made before the attempt, and the observers told of its start. */
function observedRun(
  engine: Engine,
  call: EngineCall,
  host: EngineCall | undefined,
  effect: ToolEffect,
  breakerKey: string,
  setup: ToolSetup,
): CallRun {
  const call_ = resolvedCall(call, host, effect);
  const scope = trackingScopeOf(engine.options, call_);
  const run = newRun(call_, host, scope, effect, breakerKey, setup, callInfo(engine, call_, scope, effect, setup));
  run.attempt = 1;
  run.attempts = 1;
  engine.notifier.callStart(run.info as CallInfo);
  return run;
}

/** The direct attempt failed (`thrown`: what the tool threw, or the failure its result reports): attempt 1 of the policy, then the call's end. */
async function afterDirect<T, P>(
  engine: Engine,
  call: EngineCall,
  fn: ToolFunction<unknown, T>,
  host: EngineCall | undefined,
  present: Present<T, P> | undefined,
  effect: ToolEffect,
  breakerKey: string,
  setup: ToolSetup,
  observedRun: CallRun | undefined,
  thrown: unknown,
  threw: boolean,
): Promise<ExecuteOutcome<T> | P> {
  let run = observedRun;
  try {
    let failure = thrown;
    if (threw && host?.failureOfThrown !== undefined) failure = (await thrownFailure(host, thrown, call.args)).failure;
    if (run === undefined) {
      const call_ = resolvedCall(call, host, effect);
      const scope = trackingScopeOf(engine.options, call_);
      const info = engine.notifier.observed ? callInfo(engine, call_, scope, effect, setup) : undefined;
      run = newRun(call_, host, scope, effect, breakerKey, setup, info);
      // The attempt that just failed is attempt 1 (as on every other path): classifyError sees it so.
      run.attempt = 1;
    }
    const next = continueAfterFailure(engine, run, fn, failure, thrown);
    const outcome = await ended(engine, run, next instanceof Promise ? await next : next);
    return present === undefined ? outcome : present(outcome, host as EngineCall);
  } catch (error) {
    if (run?.info !== undefined) endCall(engine, run, undefined, error);
    throw error;
  }
}

/** A direct attempt succeeded: a closed circuit forgets its failures; the caller's abort still wins. */
function succeeded(
  engine: Engine,
  call: EngineCall,
  host: EngineCall | undefined,
  effect: ToolEffect,
  setup: ToolSetup,
  breakerKey: string,
  run: CallRun | undefined,
): void {
  const { tracker } = engine;
  setup.breaker.onSuccess(breakerKey, CLOSED_PERMIT, run?.info);
  // A parallel call's failure may have started a row of this tool while this one ran.
  if (tracker.hasCounters(call.toolName)) {
    const scope = run?.scope ?? trackingScopeOf(engine.options, resolvedCall(call, host, effect));
    tracker.clearUnlessExhausted(counterKey(scope, call.toolName), call.toolName);
  }
  if (call.signal?.aborted) throw abortReason(call.signal);
}

/** An out-of-scope tool: one plain call, its error untouched. */
async function plain<Args, T>(call: ToolCall<Args>, fn: ToolFunction<Args, T>): Promise<ExecuteOutcome<T>> {
  const value = await fn(call.args, { attempt: 1, signal: call.signal, toolName: call.toolName, callId: call.callId });
  return { status: "success", value, attempt: 1, replayed: false };
}
