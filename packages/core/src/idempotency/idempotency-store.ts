/** What `begin` found for a key. */
export type IdempotencyBeginResult =
  /**
   * The caller holds the key until `complete` or `release` (or until the lease runs out). `token` is
   * a fencing token: each `acquired` of a key gets a greater one (as a decimal string, or any string
   * a store compares for equality only).
   */
  | { readonly status: "acquired"; readonly token: string }
  /** A call with this key completed: its fingerprint and stored value. */
  | { readonly status: "completed"; readonly fingerprint: string; readonly value: unknown }
  /** Another holder runs it now; try again after `retryAfterMs`. */
  | { readonly status: "in_progress"; readonly fingerprint: string; readonly retryAfterMs: number }
  /**
   * A holder took the key and its lease ended with no result (its process stopped, or a failover
   * lost the result): the write may have taken effect, so it does not run again under this key
   * (`WRITE_IN_DOUBT`, not recoverable). Only stores that keep an ended lock answer it (the Redis
   * store with `replicas`); others let the next `begin` take the key.
   *
   * Also the answer for a record the store holds but cannot read (its stored text does not parse:
   * a corrupted or tampered record), with `invalidRecord` saying why (never the record's content):
   * its result is lost, so it is never replayed, and the guard reports a `store_error` (`reason:
   * "invalid_record"`) beside `WRITE_IN_DOUBT`, whatever the fingerprint.
   */
  | { readonly status: "in_doubt"; readonly fingerprint: string; readonly invalidRecord?: string }
  /**
   * The store cannot take a new key now (full of in-flight locks): back pressure, not a conflict.
   * The write does not run; the model is told to try again after `retryAfterMs`.
   */
  | { readonly status: "busy"; readonly retryAfterMs: number };

/**
 * Storage for the idempotency guard. Implement it over Redis or a database to share keys across
 * processes; `InMemoryIdempotencyStore` is the embedded default. Each method returns a promise.
 * `key` is an opaque string made by the guard (tool name and the user's key).
 *
 * A method that throws or rejects never makes `execute` reject (a synchronous throw is read as a
 * rejection): a failed `begin` ends the call as
 * `reflect` with `STORE_UNAVAILABLE` (the write does not run); a failed `complete` or `release`
 * keeps the call's outcome and emits a `store_error` event. Bound your own calls' time (a store
 * that never answers holds the call). A record `begin` returns that the guard cannot use (a
 * `completed` record without a fingerprint, an `in_doubt` with `invalidRecord`, or a stored value
 * of a shape its host cannot return, such as an MCP result that is not a `CallToolResult`) is
 * never replayed: `WRITE_IN_DOUBT` and a `store_error` with `reason: "invalid_record"`.
 */
export interface IdempotencyStore {
  /** Atomically: return the completed record, or the live in-flight lock, or take a lock for `leaseMs`. Never drop a live lock. */
  begin(key: string, fingerprint: string, leaseMs: number): Promise<IdempotencyBeginResult>;
  /**
   * Store the result of the holder of `token`, kept for `ttlMs`, and drop the lock. Resolves to
   * whether `token` still held the key: `false` when its lease ran out or another holder took it
   * (nothing is stored, and the call's outcome stays `success` with a `store_error` event).
   */
  complete(key: string, token: string, value: unknown, ttlMs: number): Promise<boolean>;
  /**
   * Drop the lock of `token` without a result (the call failed), so that a retry may run. Resolves
   * to whether `token` still held the key (`false`: a `store_error` event).
   */
  release(key: string, token: string): Promise<boolean>;
  /** Optional: renew the lease of `token` for `leaseMs` from now; resolves to whether it still held the key. */
  extend?(key: string, token: string, leaseMs: number): Promise<boolean>;
}
