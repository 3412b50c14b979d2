import type { ToolCall } from "../call/call.js";
import type { IdempotencyDerive } from "../idempotency/guarded-call.js";
import type { IdempotencyStore } from "../idempotency/idempotency-store.js";

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
  /**
   * `"never"`: the key is the `keyField` argument (or `key(call)`); `"when-missing"`: when there is
   * none, one is derived from the scope, the tool and the canonical arguments; `"always"`: always
   * derived, so that a model re-issuing a write with a new or no key is still deduplicated. A
   * derived key reaches the tool as `context.idempotencyKey`. @default "never"
   */
  readonly derive?: IdempotencyDerive;
  /**
   * Largest result stored for replay, in bytes of its JSON text (UTF-8). A larger result is
   * returned to the caller but not stored (a `store_error` with `reason: "too_large"`), and its key
   * is released, so that a retry runs again rather than waiting. @default 1_048_576 (1 MiB)
   */
  readonly maxResultBytes?: number;
}

/** `retryBudget`: see {@link PolicyOptions.retryBudget}. */
export interface RetryBudgetOptions {
  /** In-place retries allowed per logical call in the window. @default 0.1 */
  readonly ratio?: number;
  /** Retries allowed per second of the window whatever the call rate. @default 1 */
  readonly minPerSecond?: number;
  /** The sliding window, in ms (it slides in tenths). @default 10_000 */
  readonly windowMs?: number;
}
