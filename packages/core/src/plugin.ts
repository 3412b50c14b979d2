import { CLOSED_PERMIT } from "./breaker/circuit-breaker.js";
import { Circuits } from "./breaker/circuits.js";
import { createBuilder, type RetryReflectPluginBuilder } from "./builder.js";
import { admission } from "./call/admission.js";
import { runAttempt } from "./call/attempt.js";
import { continueAfterFailure, runGuarded } from "./call/attempt-loop.js";
import { counterKey } from "./call/attempt-tracker.js";
import { endCall, finish, throwIfExhausted, withFallback } from "./call/call-end.js";
import { type CallRun, ENGINE, type Engine, newRun, setupOf, type ToolFunction, type ToolSetup } from "./call/call-state.js";
import { breakersOf, createEngine } from "./call/engine.js";
import { returnedFailure } from "./call/returned-failure.js";
import { abortReason } from "./clock.js";
import type { RetryReflectOptions, ToolCall } from "./config/options.js";
import { type ResolvedOptions, resolveOptions } from "./config/resolve.js";
import type { CallInfo, CircuitState, ToolEffect } from "./events/events.js";
import { withoutField } from "./idempotency/fingerprint.js";
import type { ExecuteOutcome, SuccessOutcome } from "./outcome.js";

export type { ToolFunction } from "./call/call-state.js";

/**
 * Decides, per tool failure, between an in-place retry after backoff, a reflection prompt for the
 * model, and a stop; with a circuit breaker per tool and an idempotency guard for writes.
 *
 * ```ts
 * const plugin = RetryReflectPlugin.builder().maxRetries(3).build();
 * const outcome = await plugin.execute({ toolName: "get_weather", args }, (args) => getWeather(args));
 * ```
 *
 * This class is the face: options, the synchronous pre-dispatch and the healthy fast paths. What
 * happens after a failure lives in the stages beside it (`attempt-loop.ts`, `decide.ts`, ...).
 */
export class RetryReflectPlugin {
  /** The options in force, defaults applied. */
  readonly options: ResolvedOptions;
  /** The circuits, one per tool (or per `circuitBreakerKey`): `state`, `isolate`, `reset`, `snapshot`, `restore`, `size`. */
  readonly circuits: Circuits;
  private readonly engine: Engine;

  /** Prefer `RetryReflectPlugin.create(options)` or `RetryReflectPlugin.builder()`. */
  constructor(options: RetryReflectOptions = {}) {
    const resolved = resolveOptions(options);
    this.options = resolved;
    this.engine = createEngine(resolved);
    this.circuits = new Circuits(breakersOf(this.engine), (key: string) => setupOf(this.engine, key).breaker);
    Object.defineProperty(this, ENGINE, { value: this.engine });
  }

  /** A plugin from an options object; throws `InvalidOptionError` for an invalid option. */
  static create(options: RetryReflectOptions = {}): RetryReflectPlugin {
    return new RetryReflectPlugin(options);
  }

  /** An immutable builder whose methods map 1:1 to the options. */
  static builder(): RetryReflectPluginBuilder {
    return createBuilder((options) => new RetryReflectPlugin(options));
  }

  /** Is `toolName` handled (not excluded, and included when `includeTools` is not empty)? */
  isInScope(toolName: string): boolean {
    const { includeTools, excludeTools } = this.options;
    if (excludeTools.has(toolName)) return false;
    return includeTools.size === 0 || includeTools.has(toolName);
  }

  /** The effect of a tool: `toolEffects[toolName]`, else `defaultEffect`. */
  effectOf(toolName: string): ToolEffect {
    return this.options.toolEffects[toolName] ?? this.options.defaultEffect;
  }

  /** The circuit state of a tool (or breaker key); reading it changes nothing. Same as `circuits.state`. */
  circuitState(toolName: string): CircuitState {
    return this.circuits.state(toolName);
  }

  /** Forgets the attempt counters of a scope (call it when an agent run ends, or to start a task afresh). */
  resetScope(scope: string): void {
    this.engine.tracker.clearScope(scope);
  }

  /**
   * Runs a tool call under the policy. For an in-scope tool it never throws for a tool failure:
   * it returns `success`, `reflect` (give `message` to the model) or `failed` (stop using the tool).
   * It rejects with the caller's abort reason and what `call.passThrough` selects, with `TypeError`
   * for a malformed call, and with `RetriesExhaustedError` when `onExhausted` is `"throw"`. An
   * out-of-scope tool is called once, and its error is rethrown untouched.
   */
  execute<Args, T>(call: ToolCall<Args>, fn: ToolFunction<Args, T>): Promise<ExecuteOutcome<T>> {
    try {
      checkCall(call, fn);
      const toolName = call.toolName;
      if (!this.isInScope(toolName)) return plain(call, fn);
      const engine = this.engine;
      const { options, tracker, notifier } = engine;
      const setup = setupOf(engine, toolName);
      const scope = options.trackingScope === "global" ? "global" : (call.scope ?? "default");
      const effect = call.effect ?? this.effectOf(toolName);
      const breakerKey = options.circuitBreakerKey ? String(options.circuitBreakerKey(call as ToolCall)) : toolName;
      const aborted = call.signal?.aborted === true;
      // Healthy: no failure of this tool in any scope, its circuit closed, nothing per attempt to enforce.
      const healthy = !aborted && !setup.policy.slowOnly && !tracker.hasCounters(toolName) && setup.breaker.isClosed(breakerKey);
      const typedCall = call as ToolCall;
      const typedFn = fn as ToolFunction<unknown, T>;
      if (notifier.callHooks || aborted)
        return this.observed(typedCall, typedFn, scope, effect, breakerKey, setup, healthy && effect !== "write");
      // Decided without an async frame where nothing but a plain call, a replay or a rejection can
      // happen (a success emits no event: observers of events alone keep this path).
      if (effect !== "write") {
        if (healthy) return this.fast(typedCall, typedFn, scope, effect, breakerKey, setup);
      } else if (healthy && !notifier.observed) {
        const run = newRun(typedCall, scope, effect, breakerKey, setup);
        const stored = engine.guard.replayNow(run);
        if (stored !== undefined) return Promise.resolve({ status: "success", value: stored.value as T, attempt: 1, replayed: true });
        return this.observed(typedCall, typedFn, scope, effect, breakerKey, setup, false, run);
      }
      if (!notifier.observed) {
        const run = newRun(typedCall, scope, effect, breakerKey, setup);
        const stop = admission(engine, run);
        if (stop !== undefined) return Promise.resolve(finish(engine, run, stop));
      }
      return this.observed(typedCall, typedFn, scope, effect, breakerKey, setup, false);
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /** The success path of a healthy tool with no observer: one async frame, no per-call bookkeeping. */
  private async fast<T>(
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
      if (failure === undefined) return this.succeeded(call, scope, breakerKey, setup, value, undefined);
    } catch (error) {
      failure = error;
    }
    // Observers of events see this call from its failure on (its `CallInfo` starts there).
    const info = this.engine.notifier.observed ? this.callInfo(call, scope, effect, setup) : undefined;
    const run = newRun(call, scope, effect, breakerKey, setup, info);
    const next = continueAfterFailure(this.engine, run, fn, failure);
    return finish(this.engine, run, next instanceof Promise ? await next : next);
  }

  /**
   * Every other call, and any call with observers (told of its start and end). A `healthy` call
   * makes its first attempt here, in this one frame; `made` is a run the pre-dispatch began.
   */
  private async observed<T>(
    call: ToolCall,
    fn: ToolFunction<unknown, T>,
    scope: string,
    effect: ToolEffect,
    breakerKey: string,
    setup: ToolSetup,
    healthy: boolean,
    made?: CallRun,
  ): Promise<ExecuteOutcome<T>> {
    const engine = this.engine;
    const { notifier } = engine;
    const info = notifier.observed ? this.callInfo(call, scope, effect, setup) : undefined;
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
          outcome = this.succeeded(call, scope, breakerKey, setup, value as T, info);
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
  private callInfo(call: ToolCall, scope: string, effect: ToolEffect, setup: ToolSetup): CallInfo {
    const { options } = this.engine;
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
  private succeeded<T>(
    call: ToolCall,
    scope: string,
    breakerKey: string,
    setup: ToolSetup,
    value: T,
    info: CallInfo | undefined,
  ): SuccessOutcome<T> {
    const { tracker } = this.engine;
    setup.breaker.onSuccess(breakerKey, CLOSED_PERMIT, info);
    if (tracker.hasCounters(call.toolName)) tracker.clearUnlessExhausted(counterKey(scope, call.toolName), call.toolName);
    if (call.signal?.aborted) throw abortReason(call.signal);
    return { status: "success", value, attempt: 1, replayed: false };
  }
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
