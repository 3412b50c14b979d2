import type { Breaker } from "./breaker/breaker.js";
import { CircuitBreaker, type CircuitTransition, MemoryBreaker } from "./breaker/circuit-breaker.js";
import { Circuits } from "./breaker/circuits.js";
import { StoreBreaker } from "./breaker/store-breaker.js";
import { RetryBudgets } from "./budget/retry-budget.js";
import { createBuilder, type RetryReflectPluginBuilder } from "./builder.js";
import { type CallRun, ENGINE, type Engine, effectOf, isInScope, setupOf, type ToolFunction, type ToolSetup } from "./call/call.js";
import { runCall } from "./call/run-call.js";
import { errorMessageOf } from "./classify/error-signals.js";
import { Cleaner } from "./cleaning/clean-text.js";
import type { RetryReflectOptions, ToolCall } from "./config/options.js";
import { ownBreakerSetting, type ResolvedOptions, type ResolvedPolicy, resolveOptions } from "./config/resolve.js";
import type { CallInfo, StoreOperation } from "./events/events.js";
import { Notifier } from "./events/notifier.js";
import { IdempotencyGuard } from "./idempotency/idempotency-guard.js";
import type { CircuitState, ExecuteOutcome, ToolEffect } from "./outcome.js";
import { AttemptTracker } from "./state/counters.js";

export type { ToolFunction } from "./call/call.js";

/**
 * Decides, per tool failure, between an in-place retry after backoff, a reflection prompt for the
 * model, and a stop; with a circuit breaker per tool and an idempotency guard for writes.
 *
 * ```ts
 * const plugin = RetryReflectPlugin.builder().maxRetries(3).build();
 * const outcome = await plugin.execute({ toolName: "get_weather", args }, (args) => getWeather(args));
 * ```
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
    return isInScope(this.options, toolName);
  }

  /** The effect of a tool: `toolEffects[toolName]`, else `defaultEffect`. */
  effectOf(toolName: string): ToolEffect {
    return effectOf(this.options, toolName);
  }

  /** The circuit state of a tool (or breaker key); reading it changes nothing. Same as `circuits.state`. */
  circuitState(toolName: string): CircuitState {
    return this.circuits.state(toolName);
  }

  /**
   * Where `toolName` is stopped because its retries are exhausted: each scope, and how long until
   * its next call runs again (`retryAfterMs`, from `exhaustedResetMs`; `undefined` when the stop
   * lasts the scope's life). A circuit reads `closed` through this: it is per scope, not per tool.
   */
  exhausted(toolName: string): ReadonlyArray<{ readonly scope: string; readonly retryAfterMs: number | undefined }> {
    const { tracker, options } = this.engine;
    const resetMs = setupOf(this.engine, toolName).policy.exhaustedResetMs;
    const now = options.clock.now();
    return tracker
      .exhaustedScopes(toolName)
      .map(({ scope, at }) => ({ scope, retryAfterMs: resetMs === 0 ? undefined : Math.max(0, at + resetMs - now) }));
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
  async execute<Args, T>(call: ToolCall<Args>, fn: ToolFunction<Args, T>): Promise<ExecuteOutcome<T>> {
    checkCall(call, fn); // async: a malformed call rejects, as any other `execute` failure
    return runCall(this.engine, call, fn);
  }
}

/** The parts of one plugin: the notifier, the cleaner, the guard, the counters, a breaker for the plugin and one per tool whose breaker settings differ. */
function createEngine(options: ResolvedOptions): Engine {
  const notifier = new Notifier(options.observers, options.clock);
  const cleaner = new Cleaner(options.maxErrorLength, options.redact);
  const recovering = new Map<string, Set<() => void>>();
  const storeError = (toolName: string, call: CallInfo | undefined, operation: StoreOperation, error: unknown) =>
    notifier.emit("store_error", toolName, call, { tool_name: toolName, operation, error: cleaner.clean(errorMessageOf(error)) });
  const onTransition = (transition: CircuitTransition, call: CallInfo | undefined) => {
    for (const wake of recovering.get(transition.key) ?? []) wake(); // the calls waiting for this circuit look again
    recovering.delete(transition.key);
    const toolName = call?.toolName ?? transition.key;
    if (transition.to === "open") {
      const fields = { tool_name: toolName, failures: transition.failures, reset_ms: transition.resetMs };
      notifier.emit("circuit_opened", toolName, call, fields);
    } else if (transition.to === "half-open") notifier.emit("circuit_half_opened", toolName, call, { tool_name: toolName });
    else notifier.emit("circuit_closed", toolName, call, { tool_name: toolName });
  };
  const { circuitBreakerStore: store, clock, maxCircuitBreakers: maxKeys } = options;
  const breakerFor = (policy: ResolvedPolicy): Breaker<CallInfo> => {
    const { circuitBreakerResetMs: resetMs, circuitBreakerMaxResetMs: maxResetMs, circuitBreakerFailureRate: failureRate } = policy;
    const settings = { threshold: policy.circuitBreakerThreshold, resetMs, maxResetMs };
    const rate = { failureRate, minimumCalls: policy.circuitBreakerMinimumCalls, windowMs: policy.circuitBreakerWindowMs };
    if (store === undefined) return new MemoryBreaker(new CircuitBreaker<CallInfo>({ ...settings, ...rate, maxKeys, clock, onTransition }));
    const onError = (operation: StoreOperation, error: unknown, key: string, call: CallInfo | undefined) =>
      storeError(call?.toolName ?? key, call, operation, error);
    const shared = failureRate === undefined ? undefined : { ...rate, failureRate };
    return new StoreBreaker<CallInfo>(store, settings, onTransition, onError, clock, maxKeys, shared);
  };
  const defaults: ToolSetup = { policy: options.policy, breaker: breakerFor(options.policy) };
  const setups = new Map<string, ToolSetup>();
  for (const [toolName, policy] of options.tools) {
    // A tool whose policy changes nothing of the breaker shares the plugin's.
    const breaker = ownBreakerSetting(policy, options.policy) === undefined ? defaults.breaker : breakerFor(policy);
    setups.set(toolName, { policy, breaker });
  }
  const guard = new IdempotencyGuard(options.idempotency.store, clock, (run, operation, error, reason) => {
    const text = cleaner.clean(errorMessageOf(error), run.idempotencyKey);
    const fields = { tool_name: run.toolName, operation, error: text };
    notifier.emit("store_error", run.toolName, (run as CallRun).info, reason === undefined ? fields : { ...fields, reason });
  });
  const budgets = new RetryBudgets(maxKeys, store?.shareBudget?.bind(store), (toolName, error) =>
    storeError(toolName, undefined, "budget", error),
  );
  const tracker = new AttemptTracker(options.maxAttemptCounters);
  return { options, defaults, setups, running: new Map(), notifier, guard, cleaner, tracker, recovering, budgets };
}

/** Every distinct breaker of an engine, the plugin's first. */
function breakersOf(engine: Engine): Breaker<CallInfo>[] {
  return [...new Set([engine.defaults.breaker, ...Array.from(engine.setups.values(), (setup) => setup.breaker)])];
}

/** `execute`'s call, checked before anything reads it. */
function checkCall(call: unknown, fn: unknown): void {
  const shown = (value: unknown) => JSON.stringify(value) ?? String(value);
  if (typeof call !== "object" || call === null)
    throw new TypeError(`execute: expected a call object { toolName, args }, received ${call === null ? "null" : typeof call}`);
  const { toolName, signal } = call as ToolCall;
  if (typeof toolName !== "string" || toolName.length === 0)
    throw new TypeError(`execute: expected \`toolName\` to be a non-empty string, received ${shown(toolName)}`);
  if (typeof fn !== "function") throw new TypeError(`execute: expected the tool function as the second argument, received ${typeof fn}`);
  if (signal !== undefined && (typeof signal !== "object" || signal === null || typeof (signal as AbortSignal).aborted !== "boolean"))
    throw new TypeError("execute: expected `signal` to be an AbortSignal");
  const { description, toolType, namespace, declaresKey } = call as ToolCall;
  if (declaresKey !== undefined && typeof declaresKey !== "boolean")
    throw new TypeError(`execute: expected \`declaresKey\` to be a boolean, received ${shown(declaresKey)}`);
  if (namespace !== undefined && (typeof namespace !== "string" || namespace.length === 0))
    throw new TypeError(`execute: expected \`namespace\` to be a non-empty string, received ${shown(namespace)}`);
  if (description !== undefined && typeof description !== "string")
    throw new TypeError(`execute: expected \`description\` to be a string, received ${typeof description}`);
  if (toolType !== undefined && typeof toolType !== "string")
    throw new TypeError(`execute: expected \`toolType\` to be a string, received ${typeof toolType}`);
}
