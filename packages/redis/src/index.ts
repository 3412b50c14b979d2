// @retry-reflect/redis: Redis stores for retry-reflect, so that many processes share one circuit
// breaker per tool and run each idempotent write once. `redisStores({ client })` gives both.
export { RedisCircuitBreakerStore } from "./circuit-breaker-store.js";
export { RedisClusterNodeError } from "./cluster-node-check.js";
export { RedisIdempotencyStore } from "./idempotency-store.js";
export { REDIS_STORE_DEFAULTS, type RedisStoreOptions } from "./options.js";
export { RedisTimeoutError, RedisUnavailableError } from "./redis-errors.js";
export { type RedisStores, redisStores } from "./stores.js";
