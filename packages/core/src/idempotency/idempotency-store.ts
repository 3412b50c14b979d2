/** What `begin` found for a key. */
export type IdempotencyBeginResult =
  /** The caller holds the key until `complete` or `release` (or until the lease runs out). */
  | { readonly status: "acquired"; readonly token: string }
  /** A call with this key completed: its fingerprint and stored value. */
  | { readonly status: "completed"; readonly fingerprint: string; readonly value: unknown }
  /** Another holder runs it now; try again after `retryAfterMs`. */
  | { readonly status: "in_progress"; readonly fingerprint: string; readonly retryAfterMs: number }
  /**
   * The store cannot take a new key now (full of in-flight locks): back pressure, not a conflict.
   * The write does not run; the model is told to try again after `retryAfterMs`.
   */
  | { readonly status: "busy"; readonly retryAfterMs: number };

/**
 * Storage for the idempotency guard. Implement it over Redis or a database to share keys across
 * processes; `InMemoryIdempotencyStore` is the embedded default. Methods may be sync or async.
 * `key` is an opaque string made by the guard (tool name and the user's key).
 *
 * A method that throws or rejects never makes `execute` reject: a failed `begin` ends the call as
 * `reflect` with `STORE_UNAVAILABLE` (the write does not run); a failed `complete` or `release`
 * keeps the call's outcome and emits a `store_error` event. Bound your own calls' time (a store
 * that never answers holds the call).
 */
export interface IdempotencyStore {
  /** Atomically: return the completed record, or the live in-flight lock, or take a lock for `leaseMs`. Never drop a live lock. */
  begin(key: string, fingerprint: string, leaseMs: number): IdempotencyBeginResult | Promise<IdempotencyBeginResult>;
  /** Store the result of the holder of `token`, kept for `ttlMs`, and drop the lock. */
  complete(key: string, token: string, value: unknown, ttlMs: number): void | Promise<void>;
  /** Drop the lock of `token` without a result (the call failed), so that a retry may run. */
  release(key: string, token: string): void | Promise<void>;
  /**
   * Optional: the completed record of `key` if this process holds it, read synchronously, with no
   * I/O and no side effect (an in-memory store, or a local cache of a shared one). With it, a
   * replay is answered without waiting; without it (or on `undefined`), `begin` answers as usual.
   */
  peekCompleted?(key: string): { readonly fingerprint: string; readonly value: unknown } | undefined;
}
