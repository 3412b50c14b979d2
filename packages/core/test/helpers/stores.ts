import type { InMemoryIdempotencyStore } from "../../src/index.js";
import type { IdempotencyStore } from "../../src/stores.js";

/**
 * The store as seen by a holder that renews nothing: a process that crashed, or a store without
 * `extend`. Its locks end with their lease.
 */
export function withoutExtend(store: InMemoryIdempotencyStore): IdempotencyStore {
  return {
    begin: (key, fingerprint, leaseMs) => store.begin(key, fingerprint, leaseMs),
    complete: (key, token, value, ttlMs) => store.complete(key, token, value, ttlMs),
    release: (key, token) => store.release(key, token),
  };
}
