import { CLOSED_PERMIT } from "../breaker/circuit-breaker.js";
import { abortReason } from "../clock.js";
import type { ToolCall } from "../config/options.js";
import type { ResolvedOptions } from "../config/resolve.js";
import type { CallInfo, ToolEffect } from "../events/events.js";
import { withoutField } from "../idempotency/fingerprint.js";
import type { ExecuteOutcome, SuccessOutcome } from "../outcome.js";
import { admission } from "./admission.js";
import { runAttempt } from "./attempt.js";
import { continueAfterFailure, runGuarded } from "./attempt-loop.js";
import { counterKey } from "./attempt-tracker.js";
import { endCall, finish, throwIfExhausted, withFallback } from "./call-end.js";
import { type CallRun, type Engine, newRun, setupOf, type ToolFunction, type ToolSetup } from "./call-state.js";
import { returnedFailure } from "./returned-failure.js";

// The one entry of a call: the synchronous pre-dispatch (scope, the healthy predicate, replays and
// refusals decided without an async frame), the healthy fast path, and the observed path.

/** Is `toolName` handled (not excluded, and included when `includeTools` is not empty)? */
export function isInScope(options: ResolvedOptions, toolName: string): boolean {
  const { includeTools, excludeTools } = options;
  if (excludeTools.has(toolName)) return false;
  return includeTools.size === 0 || includeTools.has(toolName);
}

/** The effect of a tool: `toolEffects[toolName]`, else `defaultEffect`. */
export function effectOf(options: ResolvedOptions, toolName: string): ToolEffect {
  return options.toolEffects[toolName] ?? options.defaultEffect;
}

/** `plugin.execute`: see its documentation. */
export function runCall<Args, T>(engine: Engine, call: ToolCall<Args>, fn: ToolFunction<Args, T>): Promise<ExecuteOutcome<T>> {
  try {
    checkCall(call, fn);
    const toolName = call.toolName;
    if (!isInScope(engine.options, toolName)) return plain(call, fn);
    const { options, tracker, notifier } = engine;
    const setup = setupOf(engine, toolName);
    const scope = options.trackingScope === "global" ? "global" : (call.scope ?? "default");
    const effect = call.effect ?? effectOf(engine.options, toolName);
    const breakerKey = options.circuitBreakerKey ? String(options.circuitBreakerKey(call as ToolCall)) : toolName;
    const aborted = call.signal?.aborted === true;
    // Healthy: no failure of this tool in any scope, its circuit closed, nothing per attempt to enforce.
    const healthy = !aborted && !setup.policy.slowOnly && !tracker.hasCounters(toolName) && setup.breaker.isClosed(breakerKey);
    const typedCall = call as ToolCall;
    const typedFn = fn as ToolFunction<unknown, T>;
    if (notifier.callHooks || aborted)
      return observed(engine, typedCall, typedFn, scope, effect, breakerKey, setup, healthy && effect !== "write");
    // Decided without an async frame where nothing but a plain call, a replay or a rejection can
    // happen (a success emits no event: observers of events alone keep this path).
    if (effect !== "write") {
      if (healthy) return fast(engine, typedCall, typedFn, scope, effect, breakerKey, setup);
    } else if (healthy && !notifier.observed) {
      const run = newRun(typedCall, scope, effect, breakerKey, setup);
      const stored = engine.guard.replayNow(run);
      if (stored !== undefined) return Promise.resolve({ status: "success", value: stored.value as T, attempt: 1, replayed: true });
      return observed(engine, typedCall, typedFn, scope, effect, breakerKey, setup, false, run);
    }
    if (!notifier.observed) {
      const run = newRun(typedCall, scope, effect, breakerKey, setup);
      const stop = admission(engine, run);
      if (stop !== undefined) return Promise.resolve(finish(engine, run, stop));
    }
    return observed(engine, typedCall, typedFn, scope, effect, breakerKey, setup, false);
  } catch (error) {
    return Promise.reject(error);
  }
}

/** The success path of a healthy tool with no observer: one async frame, no per-call bookkeeping. */
async function fast<T>(
  engine: Engine,
  call: ToolCall,
  fn: ToolFunction<unknown, T>,
  scope: string,
  effect: ToolEffect,
  breakerKey: string,
  setup: ToolSetup,
): Promise<ExecuteOutcome<T>> {
  let failure: unknown;
  try {
    const value = await fn(call.args, { attempt: 1, signal: call.signal, toolName: call.toolName, callId: call.callId });
    failure = returnedFailure(setup.policy, value, () => ({ toolName: call.toolName, args: call.args, attempt: 1, scope }));
    if (failure === undefined) return succeeded(engine, call, scope, breakerKey, setup, value, undefined);
  } catch (error) {
    failure = error;
  }
  // Observers of events see this call from its failure on (its `CallInfo` starts there).
  const info = engine.notifier.observed ? callInfo(engine, call, scope, effect, setup) : undefined;
  const run = newRun(call, scope, effect, breakerKey, setup, info);
  // The attempt that just failed is attempt 1 (as on every other path): classifyError sees it so.
  run.attempt = 1;
  run.attempts = 1;
  const next = continueAfterFailure(engine, run, fn, failure);
  return finish(engine, run, next instanceof Promise ? await next : next);
}

/**
 * Every other call, and any call with observers (told of its start and end). A `healthy` call
 * makes its first attempt here, in this one frame; `made` is a run the pre-dispatch began.
 */
async function observed<T>(
  engine: Engine,
  call: ToolCall,
  fn: ToolFunction<unknown, T>,
  scope: string,
  effect: ToolEffect,
  breakerKey: string,
  setup: ToolSetup,
  healthy: boolean,
  made?: CallRun,
): Promise<ExecuteOutcome<T>> {
  const { notifier } = engine;
  const info = notifier.observed ? callInfo(engine, call, scope, effect, setup) : undefined;
  const run = made ?? newRun(call, scope, effect, breakerKey, setup, info);
  if (info !== undefined && notifier.callHooks) notifier.callStart(info);
  let outcome: ExecuteOutcome<T>;
  try {
    if (healthy) {
      run.attempt = 1;
      run.attempts = 1;
      let value: T | undefined;
      let failure: unknown;
      let failed = false;
      try {
        value = await runAttempt(engine, run, fn);
        failure = returnedFailure(setup.policy, value, () => ({ toolName: run.toolName, args: call.args, attempt: 1, scope }));
        failed = failure !== undefined;
      } catch (error) {
        failed = true;
        failure = error;
      }
      if (failed) {
        const next = continueAfterFailure(engine, run, fn, failure);
        outcome = next instanceof Promise ? await next : next;
      } else {
        outcome = succeeded(engine, call, scope, breakerKey, setup, value as T, info);
      }
    } else {
      outcome = await runGuarded(engine, run, fn);
    }
    // A fallback replaces a final failure before the observers are told how the call ended.
    const settled = withFallback(engine, run, outcome);
    outcome = settled instanceof Promise ? await settled : settled;
  } catch (error) {
    endCall(engine, run, undefined, error);
    throw error;
  }
  endCall(engine, run, outcome);
  return throwIfExhausted(engine, outcome, run.toolName);
}

/** The observers' view of a call (for a `write`, its arguments without its key field). */
function callInfo(engine: Engine, call: ToolCall, scope: string, effect: ToolEffect, setup: ToolSetup): CallInfo {
  const { options } = engine;
  // The tool's own key field (a policy may name another than the plugin's).
  const args = effect === "write" ? withoutField(call.args, setup.policy.idempotency.keyField) : call.args;
  return {
    toolName: call.toolName,
    callId: call.callId,
    scope,
    effect,
    args,
    startTime: options.clock.now(),
    description: call.description,
    toolType: call.toolType,
  };
}

/** A first attempt succeeded: a closed circuit forgets its failures; the caller's abort still wins. */
function succeeded<T>(
  engine: Engine,
  call: ToolCall,
  scope: string,
  breakerKey: string,
  setup: ToolSetup,
  value: T,
  info: CallInfo | undefined,
): SuccessOutcome<T> {
  const { tracker } = engine;
  setup.breaker.onSuccess(breakerKey, CLOSED_PERMIT, info);
  if (tracker.hasCounters(call.toolName)) tracker.clearUnlessExhausted(counterKey(scope, call.toolName), call.toolName);
  if (call.signal?.aborted) throw abortReason(call.signal);
  return { status: "success", value, attempt: 1, replayed: false };
}

/** An out-of-scope tool: one plain call, its error untouched. */
async function plain<Args, T>(call: ToolCall<Args>, fn: ToolFunction<Args, T>): Promise<ExecuteOutcome<T>> {
  const value = await fn(call.args, { attempt: 1, signal: call.signal, toolName: call.toolName, callId: call.callId });
  return { status: "success", value, attempt: 1, replayed: false };
}

function checkCall(call: unknown, fn: unknown): void {
  if (typeof call !== "object" || call === null)
    throw new TypeError(`execute: expected a call object { toolName, args }, received ${call === null ? "null" : typeof call}`);
  const { toolName, signal } = call as ToolCall;
  if (typeof toolName !== "string" || toolName.length === 0)
    throw new TypeError(
      `execute: expected \`toolName\` to be a non-empty string, received ${JSON.stringify(toolName) ?? String(toolName)}`,
    );
  if (typeof fn !== "function") throw new TypeError(`execute: expected the tool function as the second argument, received ${typeof fn}`);
  if (signal !== undefined && (typeof signal !== "object" || signal === null || typeof (signal as AbortSignal).aborted !== "boolean")) {
    throw new TypeError("execute: expected `signal` to be an AbortSignal");
  }
  const { description, toolType, namespace } = call as ToolCall;
  if (namespace !== undefined && (typeof namespace !== "string" || namespace.length === 0))
    throw new TypeError(
      `execute: expected \`namespace\` to be a non-empty string, received ${JSON.stringify(namespace) ?? String(namespace)}`,
    );
  if (description !== undefined && typeof description !== "string")
    throw new TypeError(`execute: expected \`description\` to be a string, received ${typeof description}`);
  if (toolType !== undefined && typeof toolType !== "string")
    throw new TypeError(`execute: expected \`toolType\` to be a string, received ${typeof toolType}`);
}
