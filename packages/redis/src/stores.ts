import { RedisCircuitBreakerStore } from "./circuit-breaker-store.js";
import { RedisClusterNodeError, refuseClusterNode } from "./cluster-node-check.js";
import { scriptClient } from "./detect-client.js";
import { RedisIdempotencyStore } from "./idempotency-store.js";
import type { RedisStoreOptions } from "./options.js";

/** Both stores over one client, `ready`, and `close()` to end the breaker's subscription. */
export interface RedisStores {
  readonly idempotency: RedisIdempotencyStore;
  readonly circuitBreaker: RedisCircuitBreakerStore;
  /**
   * Resolves when the breaker's subscription first holds (retried with backoff until then: the
   * client not connected yet, Redis down). Nothing needs to wait for it: the stores work before
   * (reads run, writes fail closed while Redis is down). Rejects if `close()` comes first, and with
   * `RedisClusterNodeError` when `client` is a plain client connected to a node of a Redis Cluster
   * (pass the cluster client; also a process warning, code `RETRY_REFLECT_REDIS_CLUSTER_NODE`).
   */
  readonly ready: Promise<void>;
  /** Ends the breaker store's subscription and the idempotency store's pending releases (the client is yours: it stays open). */
  close(): Promise<void>;
}

/** The one-off question whether the server is a cluster node waits this long at most. */
const DIAGNOSTIC_TIMEOUT_MS = 2_000;

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
  // Asked once the server is reachable: a plain client on a cluster node would fail with MOVED.
  const ready = circuitBreaker.subscribed.then(() =>
    refuseClusterNode(scriptClient(options.client, DIAGNOSTIC_TIMEOUT_MS), options.client),
  );
  // Said as a warning too (nobody has to await `ready`), and never an unhandled rejection.
  ready.catch((error: unknown) => {
    if (error instanceof RedisClusterNodeError) process.emitWarning(error.message, { code: "RETRY_REFLECT_REDIS_CLUSTER_NODE" });
  });
  return { idempotency, circuitBreaker, ready, close };
}
