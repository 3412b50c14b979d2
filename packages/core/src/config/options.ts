import type { Jitter } from "../backoff/backoff.js";
import type { CircuitBreakerStore } from "../breaker/circuit-breaker-store.js";
import type { ClassifyContext, FailureContext, ToolCall } from "../call/call.js";
import type { Clock } from "../clock.js";
import type { ToolError } from "../errors/tool-error.js";
import type { RetryReflectObserver } from "../events/events.js";
import type { IdempotencyDerive } from "../idempotency/guarded-call.js";
import type { IdempotencyStore } from "../idempotency/idempotency-store.js";
import type { ToolEffect } from "../outcome.js";

export type { ClassifyContext, FailureContext, ToolCall, ToolContext } from "../call/call.js";
export type { IdempotencyDerive, Jitter };

/**
 * The options that may differ per tool (`tools: { send_email: { maxRetries: 1 } }`). At the top
 * level of the options they are the plugin's; a tool's policy overrides them field by field.
 */
export interface PolicyOptions {
  /** Retries after the first attempt, per (scope, tool), in place and reflections together. @default 3 */
  readonly maxRetries?: number;
  /** Delay before the first retry. @default 500 */
  readonly initialBackoffMs?: number;
  /** Each further retry waits this many times longer. @default 2 */
  readonly backoffMultiplier?: number;
  /** Upper bound of any delay, a `Retry-After` hint included, and the far end of a spent retry budget's waits. @default 4_000 */
  readonly maxBackoffMs?: number;
  /** Randomisation of delays. `"none"` keeps the documented delays exact. @default "none" */
  readonly jitter?: Jitter;
  /** Consecutive failures of a tool that open its circuit (above the attempts one patient call makes). @default 10 */
  readonly circuitBreakerThreshold?: number;
  /**
   * How long an open circuit stays open before one probe is let through (also a probe's lease). Short, so that a call
   * meeting an open circuit waits for its probe (`waitForRecovery`) instead of being turned away: many agents on one
   * failing tool send one call a second, not one each. @default 1_000
   */
  readonly circuitBreakerResetMs?: number;
  /** Whether `INVALID_ARGUMENTS` failures count towards opening the circuit. @default false */
  readonly circuitBreakerCountsInvalidArguments?: boolean;
  /**
   * A failure-rate breaker instead of the consecutive count: the circuit opens when at least this fraction (0 < rate ≤ 1)
   * of the calls in the last `circuitBreakerWindowMs` failed, judged once the window holds `circuitBreakerMinimumCalls`
   * calls. With a `circuitBreakerStore`, the window is this process's calls. @default undefined (consecutive count)
   */
  readonly circuitBreakerFailureRate?: number;
  /** Calls the window must hold before the failure rate is judged. @default 10 */
  readonly circuitBreakerMinimumCalls?: number;
  /** The failure-rate window. @default 60_000 */
  readonly circuitBreakerWindowMs?: number;
  /** Each re-open after a failed probe doubles the open time, up to this. @default undefined (always `circuitBreakerResetMs`) */
  readonly circuitBreakerMaxResetMs?: number;
  /** The reflection template. @default DEFAULT_REFLECTION_PROMPT */
  readonly reflectionPrompt?: string;
  /**
   * The text of a call that did not run or is still running (`IN_PROGRESS`, `STORE_UNAVAILABLE`, `OVERLOADED`, a write cut
   * off at its time limit): call again with the same arguments later. Placeholders as `reflectionPrompt`, plus
   * `{retry_after_s}`. @default DEFAULT_RETRY_LATER_PROMPT
   */
  readonly retryLaterPrompt?: string;
  /** The stop text once retries are exhausted (placeholders as `reflectionPrompt`, plus `{retry_after_s}`). @default the built-in text */
  readonly exhaustedPrompt?: string;
  /** The stop text of a failure that is not recoverable. @default the built-in text */
  readonly notRecoverablePrompt?: string;
  /** The temporary text of a call an open circuit turns away (an isolated circuit keeps its own). @default retryLaterPrompt */
  readonly circuitOpenPrompt?: string;
  /**
   * One attempt's time limit: past it the tool's `context.signal` aborts and the attempt fails with `TIMEOUT` (transient),
   * whether or not the tool stops, so a hung tool never hangs the agent. A list gives a limit per attempt of the tool's
   * failing row in the scope (the default: the first attempt 10 s, the second 30 s, every later one 60 s), so that a hung
   * attempt is cut off soon and a slow tool still gets the time it needs. `0` turns the limit off. @default [10_000, 30_000, 60_000]
   */
  readonly attemptTimeoutMs?: number | readonly number[];
  /**
   * How long a call keeps retrying a transient failure in place: an in-place retry starts only while it would start within
   * this time of the call's start (`maxRetries` in-place retries are always allowed). Past it the model is told that the
   * tool is temporarily unavailable, with the wait after which it may work again (the wait the library keeps for its next
   * call). A call that meets an open circuit due to close within it waits for the circuit's probe (`waitForRecovery`). @default 15_000
   */
  readonly patienceMs?: number;
  /**
   * How long a tool may keep failing in a scope before the model is told to stop for the task: since the first failure of
   * its failing row (a refusal by its open circuit counts), a failure once this time has passed ends the call with the
   * definitive stop (`RETRIES_EXHAUSTED`; the tool is refused in the scope for `exhaustedResetMs`). Before it, a
   * transient failure is told as temporary. @default 20_000
   */
  readonly giveUpMs?: number;
  /**
   * A call that meets an open circuit whose remaining open time fits in its patience waits (abortably, holding no
   * concurrency slot and no budget) for the circuit's probe: it runs once the probe succeeds, and is told the tool is
   * temporarily unavailable if it fails. `false`: fail fast. @default true
   */
  readonly waitForRecovery?: boolean;
  /**
   * Overrides whether this failure may be retried at all: `false` stops (`not_recoverable`), `true` makes it recoverable
   * within `maxRetries`, `undefined` (or a throw) keeps the default decision. A verdict that differs from the error's own
   * replaces its `suggested_action`. @default none
   */
  readonly shouldRetry?: (error: ToolError, context: FailureContext) => boolean | undefined;
  /**
   * Marks a returned value as a failure (after the built-in shapes): `true` (the value is then classified as a thrown one
   * would be), or the `ToolError` to report. It only adds failures, never clears one; a throw adds nothing. @default none
   */
  readonly isFailure?: (result: unknown, context: FailureContext) => boolean | ToolError | undefined;
  /** Calls of this tool running at once; beyond it a call fails fast with `OVERLOADED`. @default undefined (no limit) */
  readonly maxConcurrent?: number;
  /**
   * A value returned as `success` (`fallback: true`) when the call would otherwise end `failed` (it receives the final
   * error; may be async; `undefined` keeps the failure). The failure still counts for the breaker and the budget. @default none
   */
  readonly fallback?: (call: ToolCall, error: ToolError) => unknown;
  /**
   * Identical calls (same tool, same canonical arguments) that failed for a non-transient reason in this scope, after
   * which that exact call is refused without running (`REPEATED_CALL`). @default undefined (no limit)
   */
  readonly repeatedCallLimit?: number;
  /**
   * How long a tool whose retry budget is spent in a scope stays refused there (`RETRIES_EXHAUSTED`, without running),
   * counted from the failure that spent it; then the next call runs and its row starts afresh, so that a long-lived scope
   * (an MCP client, an AI SDK tool set wrapped once) never locks a tool for good. `0`: for the scope's life. @default 60_000
   */
  readonly exhaustedResetMs?: number;
  /** Overrides classification. Return undefined to keep the default. */
  readonly classifyError?: (error: unknown, context: ClassifyContext) => ToolError | undefined;
  /**
   * A cap on in-place retries, so that retries never multiply the load of a dependency that fails because it is
   * overloaded: within the sliding `windowMs`, a tool's in-place retries are at most `ratio` × its logical calls +
   * `minPerSecond` × the window's seconds. When it is spent, a transient failure is not retried in place: the call ends
   * `reflect` with `RETRY_BUDGET_SPENT` (recoverable, `retry_after_ms` drawn between the time the window has room and
   * `maxBackoffMs`) and the `retryLaterPrompt` text. Reflections are not throttled (they count against `maxRetries`).
   * Counted per tool, in this process; fleet-wide with a `circuitBreakerStore` that counts budgets (the Redis one).
   * Members left out take the plugin's budget (for a tool's own), else the default's; `false` turns the budget off (for
   * the plugin, or for a tool). @default { ratio: 0.05, minPerSecond: 1, windowMs: 10_000 }
   */
  readonly retryBudget?: RetryBudgetOptions | false;
}

/** A tool's own policy: any of the policy options, its effect, and its idempotency settings (the store is the plugin's). */
export interface ToolPolicy extends PolicyOptions {
  /** The tool's effect (one setting with `toolEffects[name]`: two different values fail at build). */
  readonly effect?: ToolEffect;
  readonly idempotency?: Omit<IdempotencyOptions, "store">;
}

/** Every option of the plugin. The builder's methods map 1:1 onto these fields. */
export interface RetryReflectOptions extends PolicyOptions {
  /** Per-tool policies: each field overrides the plugin's for that tool. @default {} */
  readonly tools?: Readonly<Record<string, ToolPolicy>>;
  /** The breaker key of a call (one breaker per key). @default the tool name */
  readonly circuitBreakerKey?: (call: ToolCall) => string;
  /** Most breakers kept; the least recently used idle one is dropped beyond it. @default 10_000 */
  readonly maxCircuitBreakers?: number;
  /**
   * Where circuit state lives, to share one breaker per tool across processes (a `RedisCircuitBreakerStore` from
   * `@retry-reflect/redis`). The healthy call never waits on it: its local view answers while the circuit is closed. With
   * `circuitBreakerFailureRate`, each process judges the rate on its own calls, and the failure that reaches it opens the
   * circuit for all. @default undefined (each plugin's circuits in memory)
   */
  readonly circuitBreakerStore?: CircuitBreakerStore;
  /** Only these tools are handled; empty means all. @default [] */
  readonly includeTools?: readonly string[];
  /** These tools are never handled (wins over `includeTools`). @default [] */
  readonly excludeTools?: readonly string[];
  /** Side effect of each tool by name. @default {} */
  readonly toolEffects?: Readonly<Record<string, ToolEffect>>;
  /** Effect of a tool not in `toolEffects`. @default "read" */
  readonly defaultEffect?: ToolEffect;
  /** The idempotency guard of `write` tools. @default each field's own (see `IdempotencyOptions`) */
  readonly idempotency?: IdempotencyOptions;
  /** Attempts counted per call scope (one agent run) or across all calls. @default "scope" */
  readonly trackingScope?: "scope" | "global";
  /** Most (scope, tool) attempt counters kept (least recently used dropped). @default 10_000 */
  readonly maxAttemptCounters?: number;
  /** Exhausted retries return a `failed` outcome, or throw `RetriesExhaustedError` (a `fallback` value wins: it is returned as `success`). @default "return" */
  readonly onExhausted?: "return" | "throw";
  /**
   * How much of a failure's own text the model may be shown, after JSON escaping: every `reflect` and `failed` message is
   * at most its fixed template plus `maxErrorLength` characters.
   *
   * The fixed template is what the library writes itself: the reflection or stop text (the built-in one, or your
   * template's literal text with `{tool_name}`, `{attempt}`, `{max_retries}` and `{retry_after_s}` filled in, and the
   * quotes around `{error}` and `{suggested_action}`), the blank line, and the structured JSON's keys, punctuation and
   * quotes with the values the library sets (`recoverable`, `attempt`, `max_retries`, `retry_after_ms`, a standard
   * `error_code`, and a message or suggested action that is one of the library's own texts: a default suggested action,
   * the texts of a call the library turned away, of an open circuit).
   *
   * Everything else counts, as JSON writes it (a `"` or `\` takes two characters) and each time it appears: the message
   * (in `{error}` and in the JSON), the suggested action (in the JSON and in `{suggested_action}`), `details` as JSON,
   * `{args}`, and an `error_code` of your own or a server's (in the JSON and in `{error_code}`). When they do not fit,
   * the longest are cut, marked `… [truncated]` (short ones are kept whole; `details` keep their structure with their
   * longest strings cut, else become `{ truncated: "…" }`), and `outcome.error` holds what the model was shown; an
   * unknown `error_code` that would take more than half the bound becomes `TOOL_FAILED`. Each text is also cleaned and
   * capped at this length on its own (events, spans, logs). @default 1000
   */
  readonly maxErrorLength?: number;
  /** Removes secrets from error text before the model or a log sees it (a pure function of its text). @default defaultRedactor */
  readonly redact?: (text: string) => string;
  /** Subscribers to events and call start/end. @default [] */
  readonly observers?: readonly RetryReflectObserver[];
  /** Time source. @default systemClock */
  readonly clock?: Clock;
  /** Random source in [0, 1) for jitter and for a spent retry budget's waits. @default Math.random */
  readonly random?: () => number;
}

/** `idempotency`: the guard of `write` tools. The store is the plugin's; a tool's policy may set the rest. */
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
  /** A keyless `write` call gets `IDEMPOTENCY_KEY_REQUIRED` (`true`), or runs unguarded, never retried in place (`false`). @default true */
  readonly requireKey?: boolean;
  /**
   * `"never"`: the key is the `keyField` argument (or `key(call)`); `"when-missing"`: when there is none, one is derived
   * from the scope, the tool and the canonical arguments; `"always"`: always derived, so that a model re-issuing a write
   * with a new or no key is still deduplicated. A derived key reaches the tool as `context.idempotencyKey`. @default "never"
   */
  readonly derive?: IdempotencyDerive;
  /**
   * Largest result stored for replay, in bytes of its JSON text (UTF-8). A larger result is returned to the caller but not
   * stored (a `store_error` with `reason: "too_large"`), and its key is released, so that a retry runs again rather than
   * waiting. @default 1_048_576 (1 MiB)
   */
  readonly maxResultBytes?: number;
}

/** `retryBudget`: see {@link PolicyOptions.retryBudget}. */
export interface RetryBudgetOptions {
  /** In-place retries allowed per logical call in the window. @default 0.05 */
  readonly ratio?: number;
  /** Retries allowed per second of the window whatever the call rate. @default 1 */
  readonly minPerSecond?: number;
  /** The sliding window, in ms (it slides in tenths). @default 10_000 */
  readonly windowMs?: number;
}
