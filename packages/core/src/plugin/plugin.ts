import { backoffDelay, withRetryAfter } from "../backoff/backoff.js";
import { CircuitBreaker, CLOSED_PERMIT, type CircuitPermit, type CircuitTransition } from "../breaker/circuit-breaker.js";
import { classifyError, isReturnedFailure } from "../classify/classify-error.js";
import { abortReason } from "../clock.js";
import { ErrorCodes } from "../errors/error-codes.js";
import { RetriesExhaustedError } from "../errors/retries-exhausted-error.js";
import { createToolError, ToolError } from "../errors/tool-error.js";
import {
  EVENT_MESSAGES,
  type CallEnd,
  type CallInfo,
  type CircuitState,
  type RetryReflectEvent,
  type RetryReflectObserver,
  type ToolEffect,
} from "../events/events.js";
import { ArgumentDepthError, argumentsFingerprint, canonicalJson, withoutField } from "../idempotency/fingerprint.js";
import type { IdempotencyBeginResult } from "../idempotency/idempotency-store.js";
import { cleanErrorText, errorMessageOf } from "../reflection/clean-error-text.js";
import { LruMap } from "../internal/lru-map.js";
import { AttemptTracker, type TrackedAttempts } from "./attempt-tracker.js";
import {
  ARGUMENTS_TOO_DEEP_ACTION,
  argumentsTooDeepMessage,
  circuitOpenAction,
  circuitOpenMessage,
  circuitOpenTemplate,
  circuitOpenText,
  type CircuitOpenTemplate,
  cleanDetails,
  exhaustedAction,
  exhaustedText,
  IN_PROGRESS_ACTION,
  isolatedAction,
  isolatedMessage,
  isolatedText,
  KEY_REUSED_ACTION,
  keyRequiredAction,
  notRecoverableText,
  sanitizedError,
  STORE_BUSY_ACTION,
  STORE_UNAVAILABLE_ACTION,
  storeBusyMessage,
  storeUnavailableMessage,
  structuredErrorJson,
  UNKNOWN_OUTCOME_ACTION,
} from "./messages.js";
import type { RetryReflectOptions, ToolCall, ToolContext } from "./options.js";
import type { ExecuteOutcome, FailedOutcome, ReflectOutcome, SuccessOutcome } from "./outcome.js";
import type { StoreOperation } from "../events/events.js";
import { RetryReflectPluginBuilder } from "./plugin-builder.js";
import { resolveOptions, type ResolvedOptions } from "./validate-options.js";

/** The tool function `execute` runs. */
export type ToolFunction<Args, T> = (args: Args, context: ToolContext) => T | Promise<T>;

/** Everything one logical call carries through its attempts. */
interface CallRun {
  readonly call: ToolCall;
  readonly toolName: string;
  readonly scope: string;
  readonly effect: ToolEffect;
  readonly breakerKey: string;
  readonly info: CallInfo | undefined;
  readonly signal: AbortSignal | undefined;
  attempts: number;
  attempt: number;
  /** Set for a guarded write: the user's key and the store key derived from it. */
  idempotencyKey: string | undefined;
  storeKey: string | undefined;
  fingerprint: string | undefined;
}

interface InFlight {
  readonly fingerprint: string;
  readonly done: Promise<ExecuteOutcome<unknown> | undefined>;
  /** `clock.now()` when the leader took the key: its lease runs from there. */
  readonly startedAt: number;
  /** Resolves when the leader's lease is over; one timer per leader, made when a first call joins. */
  lease?: Promise<"expired">;
  /** Clears the lease timer when the leader finishes. */
  stopLease?: AbortController;
}

const KEY_SEPARATOR = "\u0000";
const KEY_MASK = "[REDACTED]";
/** Keys shorter than this are masked only where they stand alone (a key "42" is not cut out of "HTTP 420"). */
const SHORT_KEY = 4;
const noop = (): void => {};

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
  /** The breakers, one per tool (or per `circuitBreakerKey`): `isolate`, `reset`, `snapshot`, `restore`. */
  readonly breaker: CircuitBreaker<CallInfo>;
  private readonly tracker: AttemptTracker;
  private readonly inFlight = new Map<string, InFlight>();
  private readonly rejections: LruMap<string, CircuitOpenTemplate>;
  private readonly observers: readonly RetryReflectObserver[];
  private readonly observed: boolean;

  /** Prefer `RetryReflectPlugin.create(options)` or `RetryReflectPlugin.builder()`. */
  constructor(options: RetryReflectOptions = {}) {
    this.options = resolveOptions(options);
    this.observers = this.options.observers;
    this.observed = this.observers.length > 0;
    this.tracker = new AttemptTracker(this.options.maxAttemptCounters);
    this.rejections = new LruMap(this.options.maxCircuitBreakers);
    this.breaker = new CircuitBreaker<CallInfo>({
      threshold: this.options.circuitBreakerThreshold,
      resetMs: this.options.circuitBreakerResetMs,
      maxKeys: this.options.maxCircuitBreakers,
      clock: this.options.clock,
      onTransition: this.observed ? (transition, call) => this.onTransition(transition, call) : undefined,
    });
  }

  /** A plugin from an options object; throws `InvalidOptionError` for an invalid option. */
  static create(options: RetryReflectOptions = {}): RetryReflectPlugin {
    return new RetryReflectPlugin(options);
  }

  /** An immutable builder whose methods map 1:1 to the options. */
  static builder(): RetryReflectPluginBuilder {
    return new RetryReflectPluginBuilder({}, (options) => new RetryReflectPlugin(options));
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

  /** The circuit state of a tool (or breaker key). Reading it after `circuitBreakerResetMs` says `half-open`. */
  circuitState(toolName: string): CircuitState {
    return this.breaker.state(toolName);
  }

  /**
   * For adapters that run tools themselves (a framework's own tool executor): true when a call of
   * `toolName` needs nothing from the policy right now: in scope, no observer, not a `write`, no
   * failure tracked in any scope, no `circuitBreakerKey` function, its circuit closed. The adapter
   * may then run the tool directly; on success it calls `recordDirectSuccess(toolName)`, and on a
   * failure it calls `execute` with a tool function whose first run reports that very failure
   * (so the failure is attempt 1, and the policy decides as usual).
   */
  canCallDirectly(toolName: string, effect?: ToolEffect): boolean {
    return (
      !this.observed &&
      this.tracker.size === 0 &&
      this.options.circuitBreakerKey === undefined &&
      (effect ?? this.effectOf(toolName)) !== "write" &&
      this.isInScope(toolName) &&
      this.breaker.isClosed(toolName)
    );
  }

  /** For adapters: a direct call (see `canCallDirectly`) succeeded; a closed circuit forgets its failures. */
  recordDirectSuccess(toolName: string): void {
    this.breaker.onSuccess(toolName, CLOSED_PERMIT);
  }

  /** Forgets the attempt counters of a scope (call it when an agent run ends, or to start a task afresh). */
  resetScope(scope: string): void {
    this.tracker.clearScope(scope);
  }

  /**
   * Runs a tool call under the policy. For an in-scope tool it never throws for a tool failure:
   * it returns `success`, `reflect` (give `message` to the model) or `failed` (stop using the tool).
   * It rethrows the caller's abort and what `call.passThrough` selects, rejects with `TypeError`
   * for a malformed call, and with `RetriesExhaustedError` when `onExhausted` is `"throw"`. An
   * out-of-scope tool is called once, and its error is rethrown untouched.
   */
  execute<Args, T>(call: ToolCall<Args>, fn: ToolFunction<Args, T>): Promise<ExecuteOutcome<T>> {
    try {
      checkCall(call, fn);
      const toolName = call.toolName;
      if (!this.isInScope(toolName)) return this.plain(call, fn);
      const options = this.options;
      const scope = options.trackingScope === "global" ? "global" : (call.scope ?? "default");
      const effect = call.effect ?? this.effectOf(toolName);
      const breakerKey = options.circuitBreakerKey ? String(options.circuitBreakerKey(call as ToolCall)) : toolName;
      if (!this.observed && !call.signal?.aborted) {
        // Decided without an async frame where nothing but a plain call, or a rejection, can happen.
        const tracked = this.tracker.get(scope, toolName);
        if (tracked === undefined && effect !== "write" && this.breaker.isClosed(breakerKey)) {
          return this.fast(call as ToolCall, fn as ToolFunction<unknown, T>, scope, effect, breakerKey);
        }
        // An exhausted scope's stop beats an open circuit: the slow path answers it.
        const openFor = tracked?.exhausted ? undefined : this.breaker.peek(breakerKey);
        if (openFor !== undefined) return Promise.resolve(this.rejected(this.newRun(call as ToolCall, scope, effect, breakerKey), openFor));
      }
      return this.slow(call as ToolCall, fn as ToolFunction<unknown, T>, scope, effect, breakerKey);
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /** An out-of-scope tool: one plain call. */
  private async plain<Args, T>(call: ToolCall<Args>, fn: ToolFunction<Args, T>): Promise<ExecuteOutcome<T>> {
    const value = await fn(call.args, { attempt: 1, signal: call.signal, toolName: call.toolName, callId: call.callId });
    return { status: "success", value, attempt: 1, replayed: false };
  }

  /**
   * The success path of a healthy tool with no observer: one async frame, no per-call bookkeeping.
   * A failure continues on the full path with attempt 1 done.
   */
  private async fast<T>(call: ToolCall, fn: ToolFunction<unknown, T>, scope: string, effect: ToolEffect, breakerKey: string): Promise<ExecuteOutcome<T>> {
    let failure: unknown;
    try {
      const value = await fn(call.args, { attempt: 1, signal: call.signal, toolName: call.toolName, callId: call.callId });
      if (!isReturnedFailure(value)) {
        this.breaker.onSuccess(breakerKey, CLOSED_PERMIT);
        if (this.tracker.size !== 0) this.tracker.clearUnlessExhausted(scope, call.toolName);
        if (call.signal?.aborted) return Promise.reject(abortReason(call.signal)); // the caller's abort wins
        return { status: "success", value, attempt: 1, replayed: false };
      }
      failure = value;
    } catch (error) {
      failure = error;
    }
    const run = this.newRun(call, scope, effect, breakerKey);
    run.attempts = 1;
    const next = this.afterFailure(run, CLOSED_PERMIT, failure);
    if (typeof next !== "number") return this.finish(next, run.toolName);
    await this.options.clock.sleep(next, run.signal);
    return this.finish(await this.attempts(run, fn), run.toolName);
  }

  /** Every other call: observers, writes, tools with failures, open circuits. */
  private async slow<T>(call: ToolCall, fn: ToolFunction<unknown, T>, scope: string, effect: ToolEffect, breakerKey: string): Promise<ExecuteOutcome<T>> {
    const options = this.options;
    const info: CallInfo | undefined = this.observed
      ? {
          toolName: call.toolName,
          callId: call.callId,
          scope,
          effect,
          args: effect === "write" ? withoutField(call.args, options.idempotency.keyField) : call.args,
          startTime: options.clock.now(),
        }
      : undefined;
    const run = this.newRun(call, scope, effect, breakerKey, info);
    if (info) this.notify((observer) => observer.onCallStart?.(info));
    let outcome: ExecuteOutcome<T>;
    try {
      outcome = await this.guarded(run, fn);
    } catch (error) {
      if (info) {
        const status = run.signal?.aborted ? "aborted" : this.passesThrough(call, error) ? "interrupted" : "error";
        this.end(run, { status, thrown: error });
      }
      throw error;
    }
    if (info) this.end(run, outcome);
    return this.finish(outcome, run.toolName);
  }

  /** `onExhausted: "throw"` turns an exhausted outcome into a `RetriesExhaustedError`. */
  private finish<T>(outcome: ExecuteOutcome<T>, toolName: string): ExecuteOutcome<T> {
    if (outcome.status === "failed" && outcome.reason === "exhausted" && this.options.onExhausted === "throw") {
      throw new RetriesExhaustedError({ toolName, attempts: outcome.attempt, error: outcome.error });
    }
    return outcome;
  }

  private newRun(call: ToolCall, scope: string, effect: ToolEffect, breakerKey: string, info?: CallInfo): CallRun {
    return {
      call,
      toolName: call.toolName,
      scope,
      effect,
      breakerKey,
      info,
      signal: call.signal,
      attempts: 0,
      attempt: 0,
      idempotencyKey: undefined,
      storeKey: undefined,
      fingerprint: undefined,
    };
  }

  /** Gate, then the idempotency guard (single flight per key) for writes, then the attempts. */
  private async guarded<T>(run: CallRun, fn: ToolFunction<unknown, T>): Promise<ExecuteOutcome<T>> {
    const { clock } = this.options;
    throwIfAborted(run.signal);
    const stop = this.admission(run);
    if (stop !== undefined) return stop;
    const tracked = this.tracker.get(run.scope, run.toolName);
    if (tracked !== undefined) {
      const wait = tracked.readyAt - clock.now();
      if (wait > 0) {
        await clock.sleep(wait, run.signal);
        // The budget may have been spent, or the circuit opened, while this call waited.
        const late = this.admission(run);
        if (late !== undefined) return late;
      }
    }
    if (run.effect !== "write") return this.attempts(run, fn);

    const { idempotency } = this.options;
    const key = idempotency.key ? idempotency.key(run.call) : readKey(run.call.args, idempotency.keyField);
    if (key === undefined) {
      if (!idempotency.requireKey) return this.attempts(run, fn);
      return this.conflict(run, "key_required", ErrorCodes.IDEMPOTENCY_KEY_REQUIRED,
        `The tool '${run.toolName}' changes state and needs an idempotency key; none was given.`, keyRequiredAction(idempotency.keyField));
    }
    run.idempotencyKey = key;
    run.storeKey = run.toolName + KEY_SEPARATOR + key;
    try {
      run.fingerprint = argumentsFingerprint(run.call.args, idempotency.key ? undefined : idempotency.keyField);
    } catch (error) {
      if (!(error instanceof ArgumentDepthError)) throw error;
      // The model's arguments, not the tool: an attempt, never a breaker failure.
      return this.refused(run, createToolError({
        code: ErrorCodes.INVALID_ARGUMENTS,
        message: argumentsTooDeepMessage(error.maxDepth),
        recoverable: true,
        suggestedAction: ARGUMENTS_TOO_DEEP_ACTION,
        kind: "invalid_arguments",
      }));
    }

    for (;;) {
      const leader = this.inFlight.get(run.storeKey);
      if (leader === undefined) break;
      if (leader.fingerprint !== run.fingerprint) return this.keyReused(run);
      const shared = await this.waitForLeader<T>(leader, run);
      if (shared === "expired") break; // a hung leader: its lease is over, the store lets this call take the key
      if (shared === undefined) continue; // the leader was aborted: try again, maybe as the leader
      if (shared.status !== "success") return shared;
      run.attempt = shared.attempt;
      this.emit("idempotent_replay", run, { tool_name: run.toolName });
      return { status: "success", value: shared.value, attempt: shared.attempt, replayed: true };
    }
    let finish!: (outcome: ExecuteOutcome<unknown> | undefined) => void;
    const done = new Promise<ExecuteOutcome<unknown> | undefined>((resolve) => (finish = resolve));
    const entry: InFlight = { fingerprint: run.fingerprint, done, startedAt: this.options.clock.now() };
    this.inFlight.set(run.storeKey, entry);
    let result: ExecuteOutcome<T> | undefined;
    try {
      result = await this.attempts(run, fn);
      return result;
    } finally {
      if (this.inFlight.get(run.storeKey) === entry) this.inFlight.delete(run.storeKey);
      entry.stopLease?.abort();
      finish(result);
    }
  }

  /**
   * A second call with a key in flight in this process joins the first: it waits for its outcome,
   * but no longer than the first call's lease (`idempotency.leaseMs`), and never past its own abort.
   * The lease timer is one per leader, shared by every call that joins it.
   */
  private waitForLeader<T>(leader: InFlight, run: CallRun): Promise<ExecuteOutcome<T> | undefined | "expired"> {
    const { clock, idempotency } = this.options;
    if (leader.lease === undefined) {
      const stop = new AbortController();
      leader.stopLease = stop;
      const remaining = Math.max(0, leader.startedAt + idempotency.leaseMs - clock.now());
      // Stopped when the leader finishes: never settles then, and `done` wins the race.
      leader.lease = clock.sleep(remaining, stop.signal).then(() => "expired" as const, () => new Promise<never>(() => {}));
    }
    const waits: Array<Promise<ExecuteOutcome<unknown> | undefined | "expired">> = [leader.done, leader.lease];
    const signal = run.signal;
    if (signal === undefined) return Promise.race(waits) as Promise<ExecuteOutcome<T> | undefined | "expired">;
    if (signal.aborted) return Promise.reject(abortReason(signal));
    let onAbort!: () => void;
    const aborted = new Promise<never>((_resolve, reject) => {
      onAbort = () => reject(abortReason(signal));
      signal.addEventListener("abort", onAbort, { once: true });
    });
    return (Promise.race([...waits, aborted]) as Promise<ExecuteOutcome<T> | undefined | "expired">).finally(() =>
      signal.removeEventListener("abort", onAbort),
    );
  }

  /** One attempt after another while failures are transient and safe to repeat. */
  private async attempts<T>(run: CallRun, fn: ToolFunction<unknown, T>): Promise<ExecuteOutcome<T>> {
    const { store, leaseMs, ttlMs } = this.options.idempotency;
    for (;;) {
      const tracked = this.tracker.get(run.scope, run.toolName);
      // No attempt, first or in place, starts once the budget is spent (by this call or a parallel one).
      if (tracked?.exhausted) return this.stopExhausted(run, tracked);
      // Provisional: the number this attempt's failure would take, were it recorded next.
      run.attempt = (tracked?.failures ?? 0) + 1;
      const decision = this.breaker.acquire(run.breakerKey, run.info);
      if (!decision.admitted) return this.rejected(run, decision.retryAfterMs);
      const permit = decision.permit;

      let token: string | undefined;
      if (run.storeKey !== undefined && run.fingerprint !== undefined) {
        const storeKey = run.storeKey;
        const fingerprint = run.fingerprint;
        const begun = await this.storeCall(run, "begin", () => store.begin(storeKey, fingerprint, leaseMs), checkBegin);
        if (begun === undefined || begun.status !== "acquired") {
          this.breaker.onNeutral(run.breakerKey, permit);
          if (begun === undefined) return this.storeUnavailable(run);
          if (begun.status === "busy") {
            return this.conflict(run, "in_progress", ErrorCodes.IN_PROGRESS, storeBusyMessage(run.toolName), STORE_BUSY_ACTION, begun.retryAfterMs);
          }
          if (begun.fingerprint !== run.fingerprint) return this.keyReused(run);
          if (begun.status === "completed") {
            this.tracker.clearUnlessExhausted(run.scope, run.toolName);
            this.emit("idempotent_replay", run, { tool_name: run.toolName });
            return { status: "success", value: begun.value as T, attempt: run.attempt, replayed: true };
          }
          return this.conflict(run, "in_progress", ErrorCodes.IN_PROGRESS,
            `The same '${run.toolName}' operation is already running elsewhere.`, IN_PROGRESS_ACTION, begun.retryAfterMs);
        }
        token = begun.token;
      }

      run.attempts++;
      let value: T | undefined;
      let failure: unknown;
      let failed = false;
      try {
        value = await this.invoke(run, fn);
        if (isReturnedFailure(value)) {
          failed = true;
          failure = value;
        }
      } catch (error) {
        failed = true;
        failure = error;
      }

      if (!failed) {
        this.breaker.onSuccess(run.breakerKey, permit, run.info);
        if (token !== undefined) {
          const storeKey = run.storeKey as string;
          const held = token;
          // The write ran: a store fault now loses only the replay, never the result.
          await this.storeCall(run, "complete", () => store.complete(storeKey, held, value, ttlMs));
        }
        this.tracker.clearUnlessExhausted(run.scope, run.toolName);
        throwIfAborted(run.signal); // the caller's abort wins, even over a late success (stored above)
        if (run.attempt > 1) this.emit("retry_succeeded", run, { tool_name: run.toolName, attempt: run.attempt });
        return { status: "success", value: value as T, attempt: run.attempt, replayed: false } satisfies SuccessOutcome<T>;
      }

      if (token !== undefined) {
        const storeKey = run.storeKey as string;
        const held = token;
        await this.storeCall(run, "release", () => store.release(storeKey, held));
      }
      const next = this.afterFailure(run, permit, failure);
      if (typeof next !== "number") return next;
      await this.options.clock.sleep(next, run.signal);
    }
  }

  /**
   * Decides after a failed attempt: an outcome, or the delay before retrying in place. Throws the
   * failure itself when it is the caller's abort or a pass-through (control flow) error.
   */
  private afterFailure(run: CallRun, permit: CircuitPermit, failure: unknown): ReflectOutcome | FailedOutcome | number {
    const options = this.options;
    if (run.signal?.aborted) {
      // The caller's abort wins over whatever the tool did after it (a tool that ignores its signal).
      this.breaker.onNeutral(run.breakerKey, permit);
      throw abortReason(run.signal);
    }
    if (this.passesThrough(run.call, failure)) {
      this.breaker.onNeutral(run.breakerKey, permit);
      throw failure;
    }
    const classified = this.classify(failure, run);
    if (classified.kind === "invalid_arguments" && !options.circuitBreakerCountsInvalidArguments) {
      this.breaker.onNeutral(run.breakerKey, permit);
    } else {
      this.breaker.onFailure(run.breakerKey, permit, run.info);
    }
    // Each failure takes the next attempt number of its (scope, tool), in the order recorded.
    const tracked = this.tracker.entry(run.scope, run.toolName);
    tracked.failures += 1;
    run.attempt = tracked.failures;
    // Every field of the failure is untrusted text: redacted, the key masked, capped; a bad code replaced.
    const error = this.sanitize(classified, run);
    const message = error.message;

    if (!error.recoverable) return this.failed(run, error, "not_recoverable");
    if (tracked.exhausted !== undefined || run.attempt > options.maxRetries) return this.exhausted(run, tracked, error);
    // This failure opened the circuit: stop now rather than wait for a retry that would be rejected.
    const openFor = this.breaker.peek(run.breakerKey);
    if (openFor !== undefined) return this.circuitOpen(run, openFor, { last_error_code: error.code, last_error: message });

    const delay = withRetryAfter(backoffDelay(run.attempt, options, options.random, tracked.lastDelayMs), error.retryAfterMs, options.maxBackoffMs);
    tracked.lastDelayMs = delay;
    const unguardedWrite = run.effect === "write" && run.storeKey === undefined;
    const inPlace = error.kind === "transient" && !unguardedWrite;
    this.emit("retry", run, {
      tool_name: run.toolName,
      attempt: run.attempt,
      max: options.maxRetries,
      backoff_ms: delay,
      error: message,
      error_code: error.code,
      mode: inPlace ? "in_place" : "reflect",
    });
    if (inPlace) return delay;
    tracked.readyAt = options.clock.now() + delay;
    if (unguardedWrite && error.kind === "transient") {
      return this.reflect(run, sanitizedError(error, { message, suggestedAction: UNKNOWN_OUTCOME_ACTION, details: error.details }));
    }
    return this.reflect(run, error);
  }

  /** The failure as the model, the logs and the spans may see it. */
  private sanitize(error: ToolError, run: CallRun): ToolError {
    const clean = (text: string) => this.clean(text, run);
    return sanitizedError(error, {
      message: clean(error.message),
      suggestedAction: clean(error.suggestedAction),
      details: cleanDetails(error.details, (text) => this.clean(text, run, this.options.maxErrorLength * 4), this.options.maxErrorLength * 4),
    });
  }

  private passesThrough(call: ToolCall, failure: unknown): boolean {
    if (call.passThrough === undefined) return false;
    try {
      return call.passThrough(failure) === true;
    } catch {
      return false;
    }
  }

  /** Runs the tool once, inside every observer's context. */
  private invoke<T>(run: CallRun, fn: ToolFunction<unknown, T>): Promise<T> {
    const context: ToolContext = {
      attempt: run.attempt,
      signal: run.signal,
      toolName: run.toolName,
      callId: run.call.callId,
      ...(run.idempotencyKey === undefined ? {} : { idempotencyKey: run.idempotencyKey }),
    };
    // The tool's run always returns a promise (a synchronous throw becomes a rejection), so that
    // observers wrapping it see one shape.
    let runTool = (): Promise<T> => {
      try {
        return Promise.resolve(fn(run.call.args, context));
      } catch (error) {
        return Promise.reject(error);
      }
    };
    const info = run.info;
    if (info !== undefined) {
      for (const observer of this.observers) {
        const hook = observer.runInContext;
        if (typeof hook !== "function") continue;
        const inner = runTool;
        runTool = () => {
          // The tool runs at most once, and its own promise is the attempt's result: whatever the
          // hook returns, throws or rejects afterwards never changes the outcome.
          let started: Promise<T> | undefined;
          const runOnce = () => (started ??= inner());
          try {
            swallow(hook.call(observer, info, runOnce), started);
          } catch {
            // An observer's own failure: ignored.
          }
          return started ?? runOnce(); // a hook that did not run the tool: run it without that context
        };
      }
    }
    return runTool();
  }

  private classify(failure: unknown, run: CallRun): ToolError {
    const custom = this.options.classifyError;
    if (custom) {
      try {
        const classified = custom(failure, { toolName: run.toolName, args: run.call.args, attempt: run.attempt });
        if (classified !== undefined && ToolError.isInstance(classified)) return classified;
      } catch {
        // A throwing classifier falls back to the default classification.
      }
    }
    return classifyError(failure);
  }

  /** Untrusted text as every sink may see it: no stack, redacted, capped, the call's idempotency key masked. */
  private clean(text: string, run?: CallRun, maxLength = this.options.maxErrorLength): string {
    const key = run?.idempotencyKey;
    let source = text;
    if (key !== undefined && source.includes(key)) {
      // Masked before cleaning, on a prefix a little longer than the cleaner reads (linear work).
      const window = maxLength * 4 + 256 + key.length + 1;
      source = maskKey(source.length > window ? source.slice(0, window) : source, key);
    }
    return cleanErrorText(source, { maxLength, redact: this.options.redact });
  }

  private reflect(run: CallRun, error: ToolError): ReflectOutcome {
    const options = this.options;
    const prompt = options.template.render({
      tool_name: run.toolName,
      error: JSON.stringify(error.message),
      error_code: error.code,
      attempt: String(run.attempt),
      max_retries: String(options.maxRetries),
      suggested_action: error.suggestedAction,
      args: this.clean(safeCanonical(run.call.args)),
    });
    return {
      status: "reflect",
      prompt,
      message: `${prompt}\n\n${structuredErrorJson(error, run.attempt, options.maxRetries)}`,
      error,
      attempt: run.attempt,
    };
  }

  private failed(run: CallRun, error: ToolError, reason: FailedOutcome["reason"]): FailedOutcome {
    const quoted = JSON.stringify(error.message);
    const text =
      reason === "circuit_open"
        ? circuitOpenText(run.toolName, error.retryAfterMs ?? 0)
        : reason === "exhausted"
          ? exhaustedText(run.toolName, run.attempt, quoted)
          : notRecoverableText(run.toolName, quoted, error.suggestedAction);
    return {
      status: "failed",
      message: `${text}\n\n${structuredErrorJson(error, run.attempt, this.options.maxRetries)}`,
      error,
      reason,
      attempt: run.attempt,
    };
  }

  /** This failure spent the budget (or found it spent): the scope stops using the tool. */
  private exhausted(run: CallRun, tracked: TrackedAttempts, last: ToolError): FailedOutcome {
    const exhausted = { message: last.message, lastErrorCode: last.code, lastError: last };
    if (this.options.trackingScope === "global") this.tracker.clear(run.scope, run.toolName);
    else tracked.exhausted = exhausted;
    this.emit("retries_exhausted", run, { tool_name: run.toolName, attempts: run.attempt, error: last.message });
    return this.failed(run, this.exhaustedError(run, exhausted), "exhausted");
  }

  /** A call of a tool whose budget is spent in this scope: stopped without running. */
  private stopExhausted(run: CallRun, tracked: TrackedAttempts): FailedOutcome {
    run.attempt = tracked.failures;
    return this.failed(run, this.exhaustedError(run, tracked.exhausted as NonNullable<TrackedAttempts["exhausted"]>), "exhausted");
  }

  /** The exhausted scope's stop beats an open circuit; both are checked before any wait and after it. */
  private admission(run: CallRun): FailedOutcome | undefined {
    const tracked = this.tracker.get(run.scope, run.toolName);
    if (tracked?.exhausted) return this.stopExhausted(run, tracked);
    const openFor = this.breaker.peek(run.breakerKey);
    return openFor === undefined ? undefined : this.rejected(run, openFor);
  }

  private exhaustedError(run: CallRun, exhausted: NonNullable<TrackedAttempts["exhausted"]>): ToolError {
    return createToolError({
      code: ErrorCodes.RETRIES_EXHAUSTED,
      message: exhausted.message,
      recoverable: false,
      suggestedAction: exhaustedAction(run.toolName),
      details: { last_error_code: exhausted.lastErrorCode },
      cause: exhausted.lastError, // the last failure, whose own cause is what the tool threw or returned
    });
  }

  /** A call turned away by an open circuit, without running the tool. */
  private rejected(run: CallRun, retryAfterMs: number): FailedOutcome {
    run.attempt = (this.tracker.get(run.scope, run.toolName)?.failures ?? 0) + 1;
    if (retryAfterMs === Number.POSITIVE_INFINITY) this.emit("call_rejected", run, { tool_name: run.toolName, isolated: true });
    else this.emit("call_rejected", run, { tool_name: run.toolName, retry_after_ms: Math.max(0, Math.ceil(retryAfterMs)) });
    return this.circuitOpen(run, retryAfterMs);
  }

  /** `failed` with `CIRCUIT_OPEN`; `lastError` when this call's own failure opened the circuit. */
  private circuitOpen(run: CallRun, retryAfterMs: number, lastError?: { last_error_code: string; last_error: string }): FailedOutcome {
    if (retryAfterMs === Number.POSITIVE_INFINITY) return this.isolated(run, lastError);
    const wait = Math.max(0, Math.ceil(retryAfterMs));
    const error = createToolError({
      code: ErrorCodes.CIRCUIT_OPEN,
      message: circuitOpenMessage(run.toolName),
      recoverable: false,
      suggestedAction: circuitOpenAction(run.toolName),
      retryAfterMs: wait,
      ...(lastError === undefined ? {} : { details: lastError }),
    });
    if (lastError !== undefined) return this.failed(run, error, "circuit_open");
    // A plain rejection: the message is put together from parts built once per tool.
    let template = this.rejections.get(run.toolName);
    if (template === undefined) {
      template = circuitOpenTemplate(run.toolName);
      this.rejections.set(run.toolName, template);
    }
    return { status: "failed", message: template.message(wait, run.attempt, this.options.maxRetries), error, reason: "circuit_open", attempt: run.attempt };
  }

  /** `failed` with `CIRCUIT_OPEN` for a circuit isolated by an operator: no time is promised. */
  private isolated(run: CallRun, lastError?: { last_error_code: string; last_error: string }): FailedOutcome {
    const error = createToolError({
      code: ErrorCodes.CIRCUIT_OPEN,
      message: isolatedMessage(run.toolName),
      recoverable: false,
      suggestedAction: isolatedAction(run.toolName),
      details: { isolated: true, ...lastError },
    });
    return {
      status: "failed",
      message: `${isolatedText(run.toolName)}\n\n${structuredErrorJson(error, run.attempt, this.options.maxRetries)}`,
      error,
      reason: "circuit_open",
      attempt: run.attempt,
    };
  }

  private keyReused(run: CallRun): ReflectOutcome | FailedOutcome {
    return this.conflict(run, "key_reused", ErrorCodes.IDEMPOTENCY_KEY_REUSED,
      `The idempotency key given to '${run.toolName}' was already used with different arguments.`, KEY_REUSED_ACTION);
  }

  /** An idempotency conflict: the tool did not run. Counts as an attempt (no endless loop), not as a breaker failure. */
  private conflict(
    run: CallRun,
    reason: "key_required" | "key_reused" | "in_progress",
    code: string,
    message: string,
    suggestedAction: string,
    retryAfterMs?: number,
  ): ReflectOutcome | FailedOutcome {
    this.emit("idempotency_conflict", run, { tool_name: run.toolName, reason });
    return this.refused(run, createToolError({ code, message, recoverable: true, suggestedAction, retryAfterMs }));
  }

  /** The store failed before the write ran: the write did not run, and the model may try again. */
  private storeUnavailable(run: CallRun): ReflectOutcome | FailedOutcome {
    return this.refused(run, createToolError({
      code: ErrorCodes.STORE_UNAVAILABLE,
      message: storeUnavailableMessage(run.toolName),
      recoverable: true,
      suggestedAction: STORE_UNAVAILABLE_ACTION,
    }));
  }

  /** A call turned away before the tool ran (a conflict, bad arguments, the store): an attempt, never a breaker failure. */
  private refused(run: CallRun, error: ToolError): ReflectOutcome | FailedOutcome {
    const tracked = this.tracker.entry(run.scope, run.toolName);
    tracked.failures += 1;
    run.attempt = tracked.failures;
    if (tracked.exhausted !== undefined || run.attempt > this.options.maxRetries) return this.exhausted(run, tracked, error);
    if (error.retryAfterMs !== undefined) tracked.readyAt = this.options.clock.now() + Math.min(error.retryAfterMs, this.options.maxBackoffMs);
    return this.reflect(run, error);
  }

  /**
   * Runs one store call; a throw, a rejection, or (with `check`) an answer of the wrong shape is a
   * `store_error` event and `undefined`, never a rejection of `execute`.
   */
  private async storeCall<R>(
    run: CallRun,
    operation: StoreOperation,
    call: () => R | Promise<R>,
    check?: (value: unknown) => R | undefined,
  ): Promise<R | undefined> {
    try {
      const value = await call();
      if (check === undefined) return value;
      const checked = check(value);
      if (checked === undefined) this.storeError(run, operation, new TypeError(`${operation} returned ${describeValue(value)}`));
      return checked;
    } catch (error) {
      this.storeError(run, operation, error);
      return undefined;
    }
  }

  private storeError(run: CallRun, operation: StoreOperation, error: unknown): void {
    this.emit("store_error", run, { tool_name: run.toolName, operation, error: this.clean(errorMessageOf(error), run) });
  }

  private end(run: CallRun, outcome: ExecuteOutcome<unknown> | { status: "aborted" | "interrupted" | "error"; thrown: unknown }): void {
    const info = run.info as CallInfo;
    const base = {
      attempts: run.attempts,
      attempt: run.attempt,
      durationMs: this.options.clock.now() - info.startTime,
      circuitState: this.breaker.state(run.breakerKey),
    };
    let end: CallEnd;
    switch (outcome.status) {
      case "success":
        end = { ...base, status: "success", replayed: outcome.replayed, value: outcome.value };
        break;
      case "reflect":
        end = { ...base, status: "reflect", replayed: false, error: outcome.error };
        break;
      case "failed":
        end = { ...base, status: "failed", replayed: false, error: outcome.error, reason: outcome.reason };
        break;
      default:
        end = { ...base, status: outcome.status, replayed: false, thrown: outcome.thrown };
    }
    this.notify((observer) => observer.onCallEnd?.(info, end));
  }

  private onTransition(transition: CircuitTransition, call: CallInfo | undefined): void {
    const toolName = call?.toolName ?? transition.key;
    const fake = { toolName, info: call };
    if (transition.to === "open") {
      this.emit("circuit_opened", fake, { tool_name: toolName, failures: transition.failures, reset_ms: transition.resetMs });
    } else if (transition.to === "half-open") {
      this.emit("circuit_half_opened", fake, { tool_name: toolName });
    } else {
      this.emit("circuit_closed", fake, { tool_name: toolName });
    }
  }

  private emit<K extends RetryReflectEvent["type"]>(
    type: K,
    run: { readonly toolName: string; readonly info: CallInfo | undefined },
    fields: Extract<RetryReflectEvent, { type: K }>["fields"],
  ): void {
    if (!this.observed) return;
    const meta = EVENT_MESSAGES[type];
    const event = {
      type,
      level: meta.level,
      message: meta.message,
      toolName: run.toolName,
      time: this.options.clock.now(),
      call: run.info,
      fields,
    } as RetryReflectEvent;
    this.notify((observer) => observer.onEvent?.(event));
  }

  private notify(each: (observer: RetryReflectObserver) => unknown): void {
    for (const observer of this.observers) {
      try {
        swallow(each(observer));
      } catch {
        // An observer that throws never breaks a tool call.
      }
    }
  }
}

function checkCall(call: unknown, fn: unknown): void {
  if (typeof call !== "object" || call === null) throw new TypeError(`execute: expected a call object { toolName, args }, received ${call === null ? "null" : typeof call}`);
  const { toolName, signal } = call as ToolCall;
  if (typeof toolName !== "string" || toolName.length === 0) throw new TypeError(`execute: expected \`toolName\` to be a non-empty string, received ${JSON.stringify(toolName) ?? String(toolName)}`);
  if (typeof fn !== "function") throw new TypeError(`execute: expected the tool function as the second argument, received ${typeof fn}`);
  if (signal !== undefined && (typeof signal !== "object" || signal === null || typeof (signal as AbortSignal).aborted !== "boolean")) {
    throw new TypeError("execute: expected `signal` to be an AbortSignal");
  }
}

function throwIfAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw abortReason(signal);
}

function readKey(args: unknown, field: string): string | undefined {
  if (typeof args !== "object" || args === null) return undefined;
  const value = (args as Record<string, unknown>)[field];
  if (typeof value === "string") return value.length > 0 ? value : undefined;
  if (typeof value === "number" && Number.isFinite(value)) return String(value);
  return undefined;
}

function safeCanonical(args: unknown): string {
  try {
    return canonicalJson(args);
  } catch (error) {
    return `(arguments could not be shown: ${errorMessageOf(error)})`;
  }
}

/** An observer's returned promise may reject: handled here, so that it never becomes an unhandled rejection. */
function swallow(value: unknown, except?: unknown): void {
  if (value === except || typeof value !== "object" || value === null) return;
  try {
    const then = (value as { then?: unknown }).then;
    if (typeof then === "function") (then as (onFulfilled: unknown, onRejected: () => void) => unknown).call(value, undefined, noop);
  } catch {
    // A hostile thenable.
  }
}

/** Replaces the key wherever it appears (a short key only where it stands alone). */
function maskKey(text: string, key: string): string {
  if (key.length >= SHORT_KEY) return text.split(key).join(KEY_MASK);
  const escaped = key.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  return text.replace(new RegExp(`(?<![A-Za-z0-9_-])${escaped}(?![A-Za-z0-9_-])`, "g"), KEY_MASK);
}

const BEGIN_STATUSES = new Set(["acquired", "completed", "in_progress", "busy"]);

/** A store's `begin` answer, if it has the documented shape (a numeric token is taken as its text). */
function checkBegin(value: unknown): IdempotencyBeginResult | undefined {
  if (typeof value !== "object" || value === null) return undefined;
  const result = value as Record<string, unknown>;
  const status = result.status;
  if (typeof status !== "string" || !BEGIN_STATUSES.has(status)) return undefined;
  const retryAfter = (fallback: number) =>
    typeof result.retryAfterMs === "number" && Number.isFinite(result.retryAfterMs) && result.retryAfterMs >= 0 ? result.retryAfterMs : fallback;
  switch (status) {
    case "acquired":
      if (typeof result.token === "number" && Number.isFinite(result.token)) return { status, token: String(result.token) };
      return typeof result.token === "string" && result.token.length > 0 ? { status, token: result.token } : undefined;
    case "completed":
      return typeof result.fingerprint === "string" ? { status, fingerprint: result.fingerprint, value: result.value } : undefined;
    case "in_progress":
      return typeof result.fingerprint === "string" ? { status, fingerprint: result.fingerprint, retryAfterMs: retryAfter(1000) } : undefined;
    default:
      return { status: "busy", retryAfterMs: retryAfter(1000) };
  }
}

function describeValue(value: unknown): string {
  if (value === null || value === undefined) return String(value);
  if (typeof value !== "object") return typeof value;
  const status = (value as { status?: unknown }).status;
  return typeof status === "string" ? `an object with status ${JSON.stringify(status.slice(0, 40))}` : "an object without a known status";
}
