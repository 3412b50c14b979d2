import type { Breaker } from "../breaker/breaker.js";
import { CircuitBreaker, type CircuitTransition } from "../breaker/circuit-breaker.js";
import { StoreBreaker } from "../breaker/store-breaker.js";
import { RetryBudgets } from "../budget/retry-budget.js";
import { Cleaner } from "../cleaning/cleaner.js";
import { errorMessageOf } from "../cleaning/error-message-of.js";
import { ownBreakerSetting, type ResolvedPolicy } from "../config/policy.js";
import type { ResolvedOptions } from "../config/resolve.js";
import type { CallInfo } from "../events/events.js";
import { Notifier } from "../events/notifier.js";
import { IdempotencyGuard } from "../idempotency/idempotency-guard.js";
import { AttemptTracker } from "../state/counters.js";
import type { CallRun } from "./call-state.js";

/** A tool's settings and breaker (a tool without a policy of its own shares the plugin's). */
export interface ToolSetup {
  readonly policy: ResolvedPolicy;
  readonly breaker: Breaker<CallInfo>;
}

/** The parts of one plugin that the stages work with. */
export interface Engine {
  readonly options: ResolvedOptions;
  /** The plugin's settings and breaker. */
  readonly defaults: ToolSetup;
  /** The configured tools' (`tools`): their policies, and breakers of their own where their breaker settings differ. */
  readonly setups: ReadonlyMap<string, ToolSetup>;
  /** Attempts running now, per tool with a `maxConcurrent` limit. */
  readonly running: Map<string, number>;
  readonly tracker: AttemptTracker;
  readonly notifier: Notifier;
  readonly guard: IdempotencyGuard;
  /** Cleans untrusted text for every sink (with a memo of recent texts). */
  readonly cleaner: Cleaner;
  /** The tools' retry budgets (`retryBudget`): their calls and in-place retries in the window. */
  readonly budgets: RetryBudgets;
  /** The calls waiting for a circuit's recovery, by breaker key: woken at each of its transitions. */
  readonly recovering: Map<string, Set<() => void>>;
}

/** The settings and breaker of a tool. */
export function setupOf(engine: Engine, toolName: string): ToolSetup {
  return engine.setups.get(toolName) ?? engine.defaults;
}

/**
 * Where an adapter entry (`@retry-reflect/core/adapter`) finds a plugin's engine. Not public API:
 * a `Symbol.for` key, so that an adapter built against another copy of this package finds it too.
 */
export const ENGINE = Symbol.for("retry-reflect.engine");

/**
 * The parts of one plugin from its resolved options: the notifier, the cleaner, the guard, the
 * attempt counters, and a breaker for the plugin plus one per tool whose breaker settings differ.
 */
export function createEngine(options: ResolvedOptions): Engine {
  const notifier = new Notifier(options.observers, options.clock);
  const recovering = new Map<string, Set<() => void>>();
  const onTransition = (transition: CircuitTransition, call: CallInfo | undefined) => {
    // The calls waiting for this circuit look again.
    const waiting = recovering.get(transition.key);
    if (waiting !== undefined) {
      recovering.delete(transition.key);
      for (const wake of waiting) wake();
    }
    const toolName = call?.toolName ?? transition.key;
    if (transition.to === "open") {
      notifier.emit("circuit_opened", toolName, call, {
        tool_name: toolName,
        failures: transition.failures,
        reset_ms: transition.resetMs,
      });
    } else if (transition.to === "half-open") notifier.emit("circuit_half_opened", toolName, call, { tool_name: toolName });
    else notifier.emit("circuit_closed", toolName, call, { tool_name: toolName });
  };
  const cleaner = new Cleaner(options.maxErrorLength, options.redact);
  const store = options.circuitBreakerStore;
  const breakerFor = (policy: ResolvedPolicy): Breaker<CallInfo> =>
    store !== undefined
      ? new StoreBreaker<CallInfo>(
          store,
          { threshold: policy.circuitBreakerThreshold, resetMs: policy.circuitBreakerResetMs, maxResetMs: policy.circuitBreakerMaxResetMs },
          onTransition,
          (operation, error, key, call) => {
            const toolName = call?.toolName ?? key;
            notifier.emit("store_error", toolName, call, { tool_name: toolName, operation, error: cleaner.clean(errorMessageOf(error)) });
          },
          options.clock,
          options.maxCircuitBreakers,
          policy.circuitBreakerFailureRate === undefined
            ? undefined
            : {
                failureRate: policy.circuitBreakerFailureRate,
                minimumCalls: policy.circuitBreakerMinimumCalls,
                windowMs: policy.circuitBreakerWindowMs,
              },
        )
      : new CircuitBreaker<CallInfo>({
          threshold: policy.circuitBreakerThreshold,
          resetMs: policy.circuitBreakerResetMs,
          failureRate: policy.circuitBreakerFailureRate,
          minimumCalls: policy.circuitBreakerMinimumCalls,
          windowMs: policy.circuitBreakerWindowMs,
          maxResetMs: policy.circuitBreakerMaxResetMs,
          maxKeys: options.maxCircuitBreakers,
          clock: options.clock,
          onTransition,
        });
  const defaults: ToolSetup = { policy: options.policy, breaker: breakerFor(options.policy) };
  const setups = new Map<string, ToolSetup>();
  for (const [toolName, policy] of options.tools) {
    // Compared with the plugin's own settings: a tool whose policy changes nothing of the breaker
    // shares the plugin's (its calls and others' under one `circuitBreakerKey` count together).
    setups.set(toolName, {
      policy,
      breaker: ownBreakerSetting(policy, options.policy) === undefined ? defaults.breaker : breakerFor(policy),
    });
  }
  const guard = new IdempotencyGuard(options.idempotency.store, options.clock, (run, operation, error, reason) => {
    const text = cleaner.clean(errorMessageOf(error), run.idempotencyKey);
    const fields = { tool_name: run.toolName, operation, error: text };
    notifier.emit("store_error", run.toolName, (run as CallRun).info, reason === undefined ? fields : { ...fields, reason });
  });
  return {
    options,
    defaults,
    setups,
    running: new Map(),
    notifier,
    guard,
    cleaner,
    tracker: new AttemptTracker(options.maxAttemptCounters),
    recovering,
    budgets: new RetryBudgets(
      options.maxCircuitBreakers,
      store?.shareBudget === undefined ? undefined : store.shareBudget.bind(store),
      (toolName, error) =>
        notifier.emit("store_error", toolName, undefined, {
          tool_name: toolName,
          operation: "budget",
          error: cleaner.clean(errorMessageOf(error)),
        }),
    ),
  };
}

/** Every distinct breaker of an engine, the plugin's first. */
export function breakersOf(engine: Engine): Breaker<CallInfo>[] {
  const breakers = [engine.defaults.breaker];
  for (const { breaker } of engine.setups.values()) if (!breakers.includes(breaker)) breakers.push(breaker);
  return breakers;
}
