import type { Breaker } from "../breaker/breaker.js";
import type { RetryBudgets } from "../budget/retry-budget.js";
import type { Cleaner } from "../cleaning/clean-text.js";
import type { ResolvedOptions, ResolvedPolicy } from "../config/resolve.js";
import type { CallInfo } from "../events/events.js";
import type { Notifier } from "../events/notifier.js";
import { withoutField } from "../idempotency/fingerprint.js";
import type { GuardedCall } from "../idempotency/guarded-call.js";
import type { IdempotencyGuard } from "../idempotency/idempotency-guard.js";
import type { ToolEffect } from "../outcome.js";
import { type AttemptTracker, counterKey } from "../state/counters.js";
import { UNSERIALIZABLE } from "../texts/model-texts.js";

/** What a tool call is, as `execute` receives it. */
export interface ToolCall<Args = unknown> {
  /** The tool's name: scoping, breaker and attempt tracking key on it. */
  readonly toolName: string;
  /** The tool's arguments, as the model produced them. */
  readonly args: Args;
  /** The model's tool-call id, for telemetry. */
  readonly callId?: string;
  /** Attempt-tracking scope, usually one agent run. Default `"default"`. Ignored when `trackingScope` is `"global"`. */
  readonly scope?: string;
  /**
   * Whose writes these are (the conversation, the request or the tenant id): a stored write result is
   * replayed only to a call of the same namespace, and a key used in another namespace is a fresh key
   * there. Give calls that must replay across runs or replicas one namespace. @default the call's `scope` (else `"default"`)
   */
  readonly namespace?: string;
  /**
   * Whether the tool's argument schema declares the idempotency key argument (`idempotency.keyField`),
   * as an adapter reads it from the host tool's schema. `false`: the write gets a derived key (as
   * `derive: "when-missing"`), is never refused for a missing key, and never receives the key argument
   * (a model's stray one is removed). `true` or undefined (a bare `execute`): `requireKey` and `derive` as set.
   */
  readonly declaresKey?: boolean;
  /** Aborts backoff waits and is passed to the tool. */
  readonly signal?: AbortSignal;
  /** Overrides `toolEffects` / `defaultEffect` for this call. */
  readonly effect?: ToolEffect;
  /** What the tool does, as the model is told (telemetry shows it as `gen_ai.tool.description`). @default none */
  readonly description?: string;
  /** The tool's kind in GenAI terms (`"function"`, `"extension"`, `"datastore"`), for telemetry (`gen_ai.tool.type`). @default none */
  readonly toolType?: string;
  /** Errors for which this returns true are control flow (a framework's interrupt): rethrown untouched, not counted. @default none */
  readonly passThrough?: (error: unknown) => boolean;
  /** The host's own "retry or not" mark on what the tool threw (LangChain's `getRetryable`), when `shouldRetry` decides nothing. @default none */
  readonly retryable?: (failure: unknown) => boolean | undefined;
}

/** A call as the engine takes it: `execute`'s, or a host adapter's (`runToolCall`), the tool's `this`. */
export interface EngineCall<Args = unknown> extends Omit<ToolCall<Args>, "scope" | "namespace"> {
  readonly scope?: string | (() => string);
  readonly namespace?: string | (() => string);
  /** See `HostToolCall`. */
  failureOfResult?(result: unknown): unknown;
  readThrown?(error: unknown, args: unknown): Promise<ThrownReading>;
}

/** What a host adapter makes of an error its tool threw (`HostToolCall.readThrown`): one value, read once per failed attempt. */
export interface ThrownReading {
  /** The failure to classify: the error as thrown, or what it means (a schema error with its fields named). */
  readonly failure: unknown;
  /** The host's control flow (an interrupt): rethrown untouched, never counted or classified. @default false */
  readonly passThrough?: boolean;
  /** The host's own "retry or not" mark (LangChain's `getRetryable`): the default of the policy's `shouldRetry`. @default none */
  readonly retryable?: boolean;
}

/** What the tool function receives besides its arguments. */
export interface ToolContext {
  /** 1 for the first call of this tool in this scope, 2 for the first retry, ... */
  readonly attempt: number;
  readonly signal: AbortSignal | undefined;
  /** For `write` tools: the idempotency key, to forward downstream (an `Idempotency-Key` header). */
  readonly idempotencyKey?: string;
  readonly toolName: string;
  readonly callId: string | undefined;
}

export interface ClassifyContext {
  readonly toolName: string;
  readonly args: unknown;
  readonly attempt: number;
}

/** What `shouldRetry` and `isFailure` see of the call (for `isFailure`, the number the failure would take). */
export interface FailureContext extends ClassifyContext {
  readonly scope: string;
}

/** The tool function `execute` runs. */
export type ToolFunction<Args, T> = (args: Args, context: ToolContext) => T | Promise<T>;

/** A tool's settings and breaker (a tool without a policy of its own shares the plugin's). */
export interface ToolSetup {
  readonly policy: ResolvedPolicy;
  readonly breaker: Breaker<CallInfo>;
}

/** The parts of one plugin that the stages work with (made by `createEngine`, plugin.ts). */
export interface Engine {
  readonly options: ResolvedOptions;
  readonly defaults: ToolSetup;
  /** The configured tools': their policies, and breakers of their own where their breaker settings differ. */
  readonly setups: ReadonlyMap<string, ToolSetup>;
  /** Attempts running now, per tool with a `maxConcurrent` limit. */
  readonly running: Map<string, number>;
  readonly tracker: AttemptTracker;
  readonly notifier: Notifier;
  readonly guard: IdempotencyGuard;
  readonly cleaner: Cleaner;
  readonly budgets: RetryBudgets;
  /** The calls waiting for a circuit's recovery, by breaker key: woken at each of its transitions. */
  readonly recovering: Map<string, Set<() => void>>;
}

/** Where an adapter entry finds a plugin's engine. Not public API: `Symbol.for`, so another copy of this package finds it too. */
export const ENGINE = Symbol.for("retry-reflect.engine");

export function setupOf(engine: Engine, toolName: string): ToolSetup {
  return engine.setups.get(toolName) ?? engine.defaults;
}

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

/** Everything one logical call carries through its attempts (what the guard reads and writes of it included). */
export interface CallRun extends GuardedCall {
  /** The call as hooks and the guard see it (scope and namespace resolved). */
  readonly call: ToolCall;
  /** A host adapter's call (`runToolCall`): the tool's `this`, and its own reading of what the tool did. */
  readonly host: EngineCall | undefined;
  /** The attempt-tracking scope (the call's, or `"global"`). */
  readonly scope: string;
  readonly effect: ToolEffect;
  readonly policy: ResolvedPolicy;
  readonly breaker: Breaker<CallInfo>;
  readonly breakerKey: string;
  readonly counterKey: string;
  readonly info: CallInfo;
  /** When the call started (the clock's time): its patience counts from here. */
  readonly startedAt: number;
  /** Attempts made in this logical call (in-place retries included). */
  attempts: number;
  inPlace: number;
  /** Whether the call waited for its circuit's recovery (the event is emitted once). */
  waitedForRecovery: boolean;
  /** The attempt number in its scope: provisional while an attempt runs (set by state/counters.ts only). */
  attempt: number;
  /** A host adapter's reading of the error its tool last threw (`readThrown`), with that error. */
  reading: HostReading | undefined;
}

/** A host adapter's reading of a thrown error, checked, kept with the error it is about. */
export interface HostReading {
  readonly thrown: unknown;
  readonly failure: unknown;
  readonly passThrough: boolean;
  readonly retryable: boolean | undefined;
}

/**
 * A host call's scope (and a write's namespace) asked for once; a write's key argument left out of
 * what observers see, and out of the call when its schema declares none.
 */
export function newRun(engine: Engine, call: EngineCall, host: EngineCall | undefined, setup: ToolSetup): CallRun {
  const { options } = engine;
  const toolName = call.toolName;
  const effect = call.effect ?? effectOf(options, toolName);
  const write = effect === "write";
  let resolved = call as ToolCall;
  if (host !== undefined) {
    resolved = {
      toolName,
      args: host.args,
      callId: host.callId,
      scope: typeof host.scope === "function" ? host.scope() : host.scope,
      namespace: !write ? undefined : typeof host.namespace === "function" ? host.namespace() : host.namespace,
      signal: host.signal,
      effect: host.effect,
      declaresKey: write ? host.declaresKey : undefined,
      description: host.description,
      toolType: host.toolType,
    };
  }
  const breakerKey = options.circuitBreakerKey === undefined ? toolName : String(options.circuitBreakerKey(resolved));
  const scope = options.trackingScope === "global" ? "global" : (resolved.scope ?? "default");
  const { policy } = setup;
  const keyField = policy.idempotency.keyField;
  // Arguments that cannot be read (a throwing getter): observers see `[unserializable]`, the guard refuses them.
  const withoutKey = write ? orElse(() => withoutField(resolved.args, keyField), UNSERIALIZABLE) : resolved.args;
  if (write && resolved.declaresKey === false && withoutKey !== UNSERIALIZABLE && withoutKey !== resolved.args) {
    resolved = { ...resolved, args: withoutKey };
  }
  const now = options.clock.now();
  const { callId, description, toolType, signal } = resolved;
  return {
    call: resolved,
    host,
    toolName,
    scope,
    effect,
    policy,
    breaker: setup.breaker,
    idempotency: policy.idempotency,
    breakerKey,
    counterKey: counterKey(scope, toolName),
    info: { toolName, callId, scope, effect, args: withoutKey, startTime: now, description, toolType },
    signal,
    startedAt: now,
    attempts: 0,
    inPlace: 0,
    waitedForRecovery: false,
    attempt: 0,
    reading: undefined,
  };
}

/** What `read` returns, or `fallback` when it throws (a user's hook, a hostile getter or argument). */
export function orElse<T, F>(read: () => T, fallback: F): T | F {
  try {
    return read();
  } catch {
    return fallback;
  }
}
