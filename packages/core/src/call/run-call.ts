import type { ToolCall } from "../config/options.js";
import { effectOf, isInScope } from "../config/resolve.js";
import type { ExecuteOutcome } from "../outcome.js";
import { observed } from "./attempt-loop.js";
import { callInfo, newRun, resolvedCall, type ToolFunction, trackingScopeOf } from "./call-state.js";
import { type Engine, setupOf } from "./engine.js";
import { checkCall, type EngineCall } from "./tool-call.js";

// The one entry of a call (`execute`'s, and a host adapter's): the call resolved once, its run
// made, then the one async loop (attempt-loop.ts) for every call, healthy or not.

/** What a host makes of an outcome (its tool message, its result), made once per adapter: it gets the call. */
export type Present<T, P> = (outcome: ExecuteOutcome<T>, call: EngineCall) => P;

/** `plugin.execute`: see its documentation. */
export function runCall<Args, T>(engine: Engine, call: ToolCall<Args>, fn: ToolFunction<Args, T>): Promise<ExecuteOutcome<T>> {
  try {
    checkCall(call, fn);
    if (!isInScope(engine.options, call.toolName)) return plain(call, fn);
    return dispatch(engine, call as EngineCall, fn as ToolFunction<unknown, T>, undefined);
  } catch (error) {
    return Promise.reject(error);
  }
}

/**
 * A host adapter's call of an in-scope tool (`runToolCall`): `fn` is the host call's `run`, called
 * with the call as `this`; the call reads what its tool did (`failureOfResult`, `readThrown`).
 * Resolves to `present(outcome, call)`, or to the outcome without `present`.
 */
export function runHostCall<T, P>(
  engine: Engine,
  call: EngineCall,
  fn: ToolFunction<unknown, T>,
  present?: Present<T, P>,
): Promise<ExecuteOutcome<T> | P> {
  try {
    const outcome = dispatch(engine, call, fn, call);
    return present === undefined ? outcome : outcome.then((settled) => present(settled, call));
  } catch (error) {
    return Promise.reject(error);
  }
}

/** Resolves the call (its scope, and its namespace for a write, asked for once), makes its run, and runs it. */
function dispatch<T>(
  engine: Engine,
  call: EngineCall,
  fn: ToolFunction<unknown, T>,
  host: EngineCall | undefined,
): Promise<ExecuteOutcome<T>> {
  const { options, notifier } = engine;
  const toolName = call.toolName;
  const setup = setupOf(engine, toolName);
  // A logical call counts towards its tool's retry budget, healthy or not.
  const budget = setup.policy.retryBudget;
  if (budget !== undefined) engine.budgets.recordCall(toolName, budget, options.clock.now());
  const effect = call.effect ?? effectOf(options, toolName);
  const resolved = resolvedCall(call, host, effect);
  const breakerKey = options.circuitBreakerKey === undefined ? toolName : String(options.circuitBreakerKey(resolved));
  const scope = trackingScopeOf(options, resolved);
  const info = notifier.observed ? callInfo(engine, resolved, scope, effect, setup) : undefined;
  return observed(engine, newRun(resolved, host, scope, effect, breakerKey, setup, options.clock.now(), info), fn);
}

/** An out-of-scope tool: one plain call, its error untouched. */
async function plain<Args, T>(call: ToolCall<Args>, fn: ToolFunction<Args, T>): Promise<ExecuteOutcome<T>> {
  const value = await fn(call.args, { attempt: 1, signal: call.signal, toolName: call.toolName, callId: call.callId });
  return { status: "success", value, attempt: 1, replayed: false };
}
