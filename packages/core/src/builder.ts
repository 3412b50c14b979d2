import type { Jitter } from "./backoff/backoff.js";
import type { CircuitBreakerStore } from "./breaker/circuit-breaker-store.js";
import type { Clock } from "./clock.js";
import type {
  ClassifyContext,
  IdempotencyOptions,
  RetryBudgetOptions,
  RetryReflectOptions,
  ToolCall,
  ToolPolicy,
} from "./config/options.js";
import type { ToolError } from "./errors/tool-error.js";
import type { RetryReflectObserver } from "./events/events.js";
import type { ToolEffect } from "./outcome.js";
import type { RetryReflectPlugin } from "./plugin.js";

/** The builder `RetryReflectPlugin.builder()` starts (its constructor is not public API). */
export function createBuilder(make: (options: RetryReflectOptions) => RetryReflectPlugin): RetryReflectPluginBuilder {
  return new RetryReflectPluginBuilder({}, make);
}

/**
 * Thin, immutable sugar over `RetryReflectOptions`: every method returns a new builder with one
 * field set (`observer` appends one observer). `build()` validates, like `RetryReflectPlugin.create`.
 * Start one with `RetryReflectPlugin.builder()`.
 */
export class RetryReflectPluginBuilder {
  /** @internal Use `RetryReflectPlugin.builder()`. */
  constructor(
    private readonly current: RetryReflectOptions,
    private readonly make: (options: RetryReflectOptions) => RetryReflectPlugin,
  ) {}

  private with<K extends keyof RetryReflectOptions>(field: K, value: RetryReflectOptions[K]): RetryReflectPluginBuilder {
    return new RetryReflectPluginBuilder({ ...this.current, [field]: value }, this.make);
  }

  /** @see RetryReflectOptions.maxRetries (default 3) */
  maxRetries(value: number) {
    return this.with("maxRetries", value);
  }
  /** @see RetryReflectOptions.initialBackoffMs (default 500) */
  initialBackoffMs(value: number) {
    return this.with("initialBackoffMs", value);
  }
  /** @see RetryReflectOptions.backoffMultiplier (default 2) */
  backoffMultiplier(value: number) {
    return this.with("backoffMultiplier", value);
  }
  /** @see RetryReflectOptions.maxBackoffMs (default 30000) */
  maxBackoffMs(value: number) {
    return this.with("maxBackoffMs", value);
  }
  /** @see RetryReflectOptions.circuitBreakerThreshold (default 5) */
  circuitBreakerThreshold(value: number) {
    return this.with("circuitBreakerThreshold", value);
  }
  /** @see RetryReflectOptions.circuitBreakerResetMs (default 1000) */
  circuitBreakerResetMs(value: number) {
    return this.with("circuitBreakerResetMs", value);
  }
  /** @see RetryReflectOptions.circuitBreakerKey (default: the tool name) */
  circuitBreakerKey(value: (call: ToolCall) => string) {
    return this.with("circuitBreakerKey", value);
  }
  /** @see RetryReflectOptions.circuitBreakerCountsInvalidArguments (default false) */
  circuitBreakerCountsInvalidArguments(value: boolean) {
    return this.with("circuitBreakerCountsInvalidArguments", value);
  }
  /** @see RetryReflectOptions.maxCircuitBreakers (default 10000) */
  maxCircuitBreakers(value: number) {
    return this.with("maxCircuitBreakers", value);
  }
  /** @see RetryReflectOptions.circuitBreakerStore (default: in memory, per plugin) */
  circuitBreakerStore(value: CircuitBreakerStore) {
    return this.with("circuitBreakerStore", value);
  }
  /** @see RetryReflectOptions.reflectionPrompt (default DEFAULT_REFLECTION_PROMPT) */
  reflectionPrompt(value: string) {
    return this.with("reflectionPrompt", value);
  }
  /** @see RetryReflectOptions.includeTools (default [] = all tools) */
  includeTools(value: readonly string[]) {
    return this.with("includeTools", value);
  }
  /** @see RetryReflectOptions.excludeTools (default []) */
  excludeTools(value: readonly string[]) {
    return this.with("excludeTools", value);
  }
  /** @see RetryReflectOptions.jitter (default "none") */
  jitter(value: Jitter) {
    return this.with("jitter", value);
  }
  /** @see RetryReflectOptions.toolEffects (default {}) */
  toolEffects(value: Readonly<Record<string, ToolEffect>>) {
    return this.with("toolEffects", value);
  }
  /** @see RetryReflectOptions.defaultEffect (default "read") */
  defaultEffect(value: ToolEffect) {
    return this.with("defaultEffect", value);
  }
  /** @see RetryReflectOptions.idempotency */
  idempotency(value: IdempotencyOptions) {
    return this.with("idempotency", value);
  }
  /** @see RetryReflectOptions.classifyError */
  classifyError(value: (error: unknown, context: ClassifyContext) => ToolError | undefined) {
    return this.with("classifyError", value);
  }
  /** @see RetryReflectOptions.trackingScope (default "scope") */
  trackingScope(value: "scope" | "global") {
    return this.with("trackingScope", value);
  }
  /** @see RetryReflectOptions.maxAttemptCounters (default 10000) */
  maxAttemptCounters(value: number) {
    return this.with("maxAttemptCounters", value);
  }
  /** @see RetryReflectOptions.onExhausted (default "return") */
  onExhausted(value: "return" | "throw") {
    return this.with("onExhausted", value);
  }
  /** @see RetryReflectOptions.maxErrorLength (default 1000) */
  maxErrorLength(value: number) {
    return this.with("maxErrorLength", value);
  }
  /** @see RetryReflectOptions.redact (default defaultRedactor) */
  redact(value: (text: string) => string) {
    return this.with("redact", value);
  }
  /** @see RetryReflectOptions.observers (default []) — replaces the list */
  observers(value: readonly RetryReflectObserver[]) {
    return this.with("observers", value);
  }
  /** Appends one observer to `observers`. */
  observer(value: RetryReflectObserver) {
    return this.with("observers", [...(this.current.observers ?? []), value]);
  }
  /** @see RetryReflectOptions.clock (default systemClock) */
  clock(value: Clock) {
    return this.with("clock", value);
  }
  /** @see RetryReflectOptions.random (default Math.random) */
  random(value: () => number) {
    return this.with("random", value);
  }

  /** @see RetryReflectOptions.circuitBreakerFailureRate (default undefined: the consecutive count) */
  circuitBreakerFailureRate(value: number) {
    return this.with("circuitBreakerFailureRate", value);
  }
  /** @see RetryReflectOptions.circuitBreakerMinimumCalls (default 10) */
  circuitBreakerMinimumCalls(value: number) {
    return this.with("circuitBreakerMinimumCalls", value);
  }
  /** @see RetryReflectOptions.circuitBreakerWindowMs (default 60000) */
  circuitBreakerWindowMs(value: number) {
    return this.with("circuitBreakerWindowMs", value);
  }
  /** @see RetryReflectOptions.circuitBreakerMaxResetMs (default undefined: no growth) */
  circuitBreakerMaxResetMs(value: number) {
    return this.with("circuitBreakerMaxResetMs", value);
  }
  /** @see RetryReflectOptions.retryLaterPrompt (default DEFAULT_RETRY_LATER_PROMPT) */
  retryLaterPrompt(value: string) {
    return this.with("retryLaterPrompt", value);
  }

  /** @see RetryReflectOptions.exhaustedPrompt (default: the built-in text) */
  exhaustedPrompt(value: string) {
    return this.with("exhaustedPrompt", value);
  }
  /** @see RetryReflectOptions.notRecoverablePrompt (default: the built-in text) */
  notRecoverablePrompt(value: string) {
    return this.with("notRecoverablePrompt", value);
  }
  /** @see RetryReflectOptions.circuitOpenPrompt (default: the built-in text) */
  circuitOpenPrompt(value: string) {
    return this.with("circuitOpenPrompt", value);
  }
  /** @see RetryReflectOptions.attemptTimeoutMs (default [10_000, 30_000, 60_000]; 0: no limit) */
  attemptTimeoutMs(value: number | readonly number[]) {
    return this.with("attemptTimeoutMs", value);
  }
  /** @see RetryReflectOptions.patienceMs (default 15_000) */
  patienceMs(value: number) {
    return this.with("patienceMs", value);
  }
  /** @see RetryReflectOptions.giveUpMs (default 20_000) */
  giveUpMs(value: number) {
    return this.with("giveUpMs", value);
  }
  /** @see RetryReflectOptions.waitForRecovery (default true) */
  waitForRecovery(value: boolean) {
    return this.with("waitForRecovery", value);
  }
  /** @see RetryReflectOptions.shouldRetry */
  shouldRetry(value: NonNullable<RetryReflectOptions["shouldRetry"]>) {
    return this.with("shouldRetry", value);
  }
  /** @see RetryReflectOptions.isFailure */
  isFailure(value: NonNullable<RetryReflectOptions["isFailure"]>) {
    return this.with("isFailure", value);
  }
  /** @see RetryReflectOptions.maxConcurrent (default undefined: no limit) */
  maxConcurrent(value: number) {
    return this.with("maxConcurrent", value);
  }
  /** @see RetryReflectOptions.fallback */
  fallback(value: NonNullable<RetryReflectOptions["fallback"]>) {
    return this.with("fallback", value);
  }
  /** @see RetryReflectOptions.repeatedCallLimit (default undefined: no limit) */
  repeatedCallLimit(value: number) {
    return this.with("repeatedCallLimit", value);
  }
  /** @see RetryReflectOptions.exhaustedResetMs (default 60_000; 0: the scope's life) */
  exhaustedResetMs(value: number) {
    return this.with("exhaustedResetMs", value);
  }
  /** @see RetryReflectOptions.retryBudget (default `{ ratio: 0.05, minPerSecond: 1, windowMs: 10_000 }`; `false` for none) */
  retryBudget(value: RetryBudgetOptions | false) {
    return this.with("retryBudget", value);
  }
  /** @see RetryReflectOptions.tools (default {}) — replaces every tool's policy */
  tools(value: Readonly<Record<string, ToolPolicy>>) {
    return this.with("tools", value);
  }
  /** Sets one tool's policy (`tools[name]`), replacing an earlier one for that tool. */
  tool(name: string, policy: ToolPolicy) {
    return this.with("tools", { ...(this.current.tools ?? {}), [name]: policy });
  }

  /** The options object this builder stands for. */
  toOptions(): RetryReflectOptions {
    return { ...this.current };
  }

  /** Validates and builds; throws `InvalidOptionError` naming the option and the value. */
  build(): RetryReflectPlugin {
    return this.make(this.current);
  }
}
