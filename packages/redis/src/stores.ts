import { RedisCircuitBreakerStore } from "./circuit-breaker-store.js";
import { RedisIdempotencyStore } from "./idempotency-store.js";
import type { RedisStoreOptions } from "./options.js";

/** Both stores over one client, `ready`, and `close()` to end the breaker's subscription. */
export interface RedisStores {
  readonly idempotency: RedisIdempotencyStore;
  readonly circuitBreaker: RedisCircuitBreakerStore;
  /**
   * Resolves when the breaker's subscription first holds (retried with backoff until then: the
   * client not connected yet, Redis down). Nothing needs to wait for it: the stores work before
   * (reads run, writes fail closed while Redis is down). Rejects only if `close()` comes first.
   */
  readonly ready: Promise<void>;
  /** Ends the breaker store's subscription and the idempotency store's pending releases (the client is yours: it stays open). */
  close(): Promise<void>;
}

/**
 * The two Redis stores over one client (connected or not yet: see `ready`):
 * `RetryReflectPlugin.create({ idempotency: { store: stores.idempotency }, circuitBreakerStore: stores.circuitBreaker })`.
 * Options are checked here (an `InvalidOptionError` names the option and the value).
 */
export function redisStores(options: RedisStoreOptions): RedisStores {
  const idempotency = new RedisIdempotencyStore(options);
  const circuitBreaker = new RedisCircuitBreakerStore(options);
  const close = async (): Promise<void> => {
    idempotency.close();
    await circuitBreaker.close();
  };
  return { idempotency, circuitBreaker, ready: circuitBreaker.subscribed, close };
}
