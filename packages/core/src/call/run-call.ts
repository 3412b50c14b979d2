import type { ToolCall } from "../config/options.js";
import { effectOf, isInScope } from "../config/resolve.js";
import type { ExecuteOutcome, ToolEffect } from "../outcome.js";
import { admission } from "./admission.js";
import { observed } from "./attempt-loop.js";
import { finish } from "./call-end.js";
import { callInfo, newRun, resolvedCall, type ToolFunction, trackingScopeOf } from "./call-state.js";
import { direct, type Present } from "./direct-attempt.js";
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

/**
 * A host adapter's call of an in-scope tool (`runToolCall`): `fn` is the host call's `run`, called
 * with the call as `this`; the call reads what its tool did (`failureOfResult`, `readThrown`).
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
  // A logical call counts towards its tool's retry budget, healthy or not.
  const budget = setup.policy.retryBudget;
  if (budget !== undefined) engine.budgets.recordCall(toolName, budget, options.clock.now());
  const effect = call.effect ?? effectOf(options, toolName);
  // A host call is resolved (its scope asked for) only when something needs it, and once: kept here, then by the run or the direct attempt.
  let resolved: ToolCall | undefined;
  let breakerKey = toolName;
  if (options.circuitBreakerKey !== undefined) {
    resolved = resolvedCall(call, host, effect);
    breakerKey = String(options.circuitBreakerKey(resolved));
  }
  const aborted = call.signal?.aborted === true;
  const healthy = !aborted && isHealthy(engine, setup, toolName, breakerKey);
  if (healthy && effect !== "write") return direct(engine, call, fn, host, present, effect, breakerKey, setup, resolved);
  resolved ??= resolvedCall(call, host, effect);
  const scope = trackingScopeOf(options, resolved);
  let outcome: Promise<ExecuteOutcome<T>> | undefined;
  // Decided without an async frame where nothing but a replay or a rejection can happen.
  if (!notifier.observed && !aborted) {
    const run = newRun(resolved, host, scope, effect, breakerKey, setup, options.clock.now());
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
    outcome = observed(engine, newRun(resolved, host, scope, effect, breakerKey, setup, options.clock.now(), info), fn);
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

/** An out-of-scope tool: one plain call, its error untouched. */
async function plain<Args, T>(call: ToolCall<Args>, fn: ToolFunction<Args, T>): Promise<ExecuteOutcome<T>> {
  const value = await fn(call.args, { attempt: 1, signal: call.signal, toolName: call.toolName, callId: call.callId });
  return { status: "success", value, attempt: 1, replayed: false };
}
