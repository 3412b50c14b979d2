import type { Jitter } from "../backoff/backoff.js";
import type { Clock } from "../clock.js";
import type { ToolError } from "../errors/tool-error.js";
import type { RetryReflectObserver, ToolEffect } from "../events/events.js";
import type { IdempotencyStore } from "../idempotency/idempotency-store.js";

export type { Jitter };

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
  /** Aborts backoff waits and is passed to the tool. */
  readonly signal?: AbortSignal;
  /** Overrides `toolEffects` / `defaultEffect` for this call. */
  readonly effect?: ToolEffect;
  /** What the tool does, as the model is told (telemetry shows it as `gen_ai.tool.description`). @default none */
  readonly description?: string;
  /** The tool's kind in GenAI terms (`"function"`, `"extension"`, `"datastore"`), for telemetry (`gen_ai.tool.type`). @default none */
  readonly toolType?: string;
  /**
   * Errors for which this returns true are control flow, not failures (a framework's interrupt):
   * rethrown untouched, not counted, not classified. @default none
   */
  readonly passThrough?: (error: unknown) => boolean;
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

export interface IdempotencyOptions {
  /** Where completed and in-flight keys live. @default a new `InMemoryIdempotencyStore` per plugin */
  readonly store?: IdempotencyStore;
  /** The argument that carries the key. @default "idempotency_key" */
  readonly keyField?: string;
  /** Derives the key from the call instead of `keyField`. Return undefined when there is none. */
  readonly key?: (call: ToolCall) => string | undefined;
  /** How long a completed result is replayed. @default 86_400_000 (24 h) */
  readonly ttlMs?: number;
  /** How long an in-flight lock holds before another caller may take over (a crashed holder). @default 30_000 */
  readonly leaseMs?: number;
  /**
   * A `write` call without a key is answered with `IDEMPOTENCY_KEY_REQUIRED` (`true`), or runs
   * unguarded and is never retried in place (`false`). @default true
   */
  readonly requireKey?: boolean;
}

/** Every option of the plugin. The builder's methods map 1:1 onto these fields. */
export interface RetryReflectOptions {
  /** Retries after the first attempt, per (scope, tool), in place and reflections together. @default 3 */
  readonly maxRetries?: number;
  /** Delay before the first retry. @default 500 */
  readonly initialBackoffMs?: number;
  /** Each further retry waits this many times longer. @default 2 */
  readonly backoffMultiplier?: number;
  /** Upper bound of any delay, a `Retry-After` hint included. @default 30_000 */
  readonly maxBackoffMs?: number;
  /** Consecutive failures of a tool that open its circuit. @default 5 */
  readonly circuitBreakerThreshold?: number;
  /** How long an open circuit stays open before one probe is let through. @default 60_000 */
  readonly circuitBreakerResetMs?: number;
  /** The breaker key of a call (one breaker per key). @default the tool name */
  readonly circuitBreakerKey?: (call: ToolCall) => string;
  /** Whether `INVALID_ARGUMENTS` failures count towards opening the circuit. @default false */
  readonly circuitBreakerCountsInvalidArguments?: boolean;
  /** Most breakers kept; the least recently used idle one is dropped beyond it. @default 10_000 */
  readonly maxCircuitBreakers?: number;
  /** The reflection template. @default DEFAULT_REFLECTION_PROMPT */
  readonly reflectionPrompt?: string;
  /** Only these tools are handled; empty means all. @default [] */
  readonly includeTools?: readonly string[];
  /** These tools are never handled (wins over `includeTools`). @default [] */
  readonly excludeTools?: readonly string[];
  /** Randomisation of delays. `"none"` keeps the documented delays exact. @default "none" */
  readonly jitter?: Jitter;
  /** Side effect of each tool by name. @default {} */
  readonly toolEffects?: Readonly<Record<string, ToolEffect>>;
  /** Effect of a tool not in `toolEffects`. @default "read" */
  readonly defaultEffect?: ToolEffect;
  /**
   * The idempotency guard of `write` tools. Each field has its own default:
   * @default { store: a new InMemoryIdempotencyStore per plugin, keyField: "idempotency_key", ttlMs: 86_400_000, leaseMs: 30_000, requireKey: true }
   */
  readonly idempotency?: IdempotencyOptions;
  /** Overrides classification. Return undefined to keep the default. */
  readonly classifyError?: (error: unknown, context: ClassifyContext) => ToolError | undefined;
  /** Attempts counted per call scope (one agent run) or across all calls. @default "scope" */
  readonly trackingScope?: "scope" | "global";
  /** Most (scope, tool) attempt counters kept (least recently used dropped). @default 10_000 */
  readonly maxAttemptCounters?: number;
  /** Exhausted retries return a `failed` outcome, or throw `RetriesExhaustedError`. @default "return" */
  readonly onExhausted?: "return" | "throw";
  /** Longest error text shown to the model; longer text is cut and marked. @default 1000 */
  readonly maxErrorLength?: number;
  /** Removes secrets from error text before the model or a log sees it. @default defaultRedactor */
  readonly redact?: (text: string) => string;
  /** Subscribers to events and call start/end. @default [] */
  readonly observers?: readonly RetryReflectObserver[];
  /** Time source. @default systemClock */
  readonly clock?: Clock;
  /** Random source in [0, 1) for jitter. @default Math.random */
  readonly random?: () => number;
}
