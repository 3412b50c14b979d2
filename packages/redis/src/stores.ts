import { RedisCircuitBreakerStore } from "./circuit-breaker-store.js";
import { RedisIdempotencyStore } from "./idempotency-store.js";
import type { RedisStoreOptions } from "./options.js";

/** Both stores over one client, and `close()` to end the breaker's subscription. */
export interface RedisStores {
  readonly idempotency: RedisIdempotencyStore;
  readonly circuitBreaker: RedisCircuitBreakerStore;
  /** Ends the breaker store's subscription (the client is yours: it stays open). */
  close(): Promise<void>;
}

/**
 * The two Redis stores over one client:
 * `RetryReflectPlugin.create({ idempotency: { store: stores.idempotency }, circuitBreakerStore: stores.circuitBreaker })`.
 * Options are checked here (an `InvalidOptionError` names the option and the value).
 */
export function redisStores(options: RedisStoreOptions): RedisStores {
  const idempotency = new RedisIdempotencyStore(options);
  const circuitBreaker = new RedisCircuitBreakerStore(options);
  return { idempotency, circuitBreaker, close: () => circuitBreaker.close() };
}
