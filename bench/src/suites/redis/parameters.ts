// The Redis suite's numbers, its client kinds and the names of its contestants, in one place.
import type { RetryReflectPlugin } from "@retry-reflect/core";

export const ID = "redis";
export const TITLE = "8. Redis stores";

/** Consecutive failures that open a circuit, in the fleet and in the round-trip plugins. */
export const THRESHOLD = 5;
export const RESET_MS = 60_000;
export const REPLICAS = 50;
/**
 * The replicas run in child processes, this many to a process (each replica its own client, store
 * and plugin): 50 processes would take ~20 s of CPU just to start on this 2-core machine (node-redis
 * alone loads in ~0.3 s), 10 take a fifth of it.
 */
export const REPLICAS_PER_PROCESS = 5;
export const PROCESSES = REPLICAS / REPLICAS_PER_PROCESS;
/** Concurrent calls per replica per wave. */
export const WAVE_SIZES = [1, 2, 5] as const;
/** Runs of the shared-breaker fleet per wave size (the in-memory fleet is deterministic: one run). */
export const FLEET_REPEATS = 3;
/** A replica stops after this many waves even if it never saw the circuit open (a safety net, not a limit expected to be reached). */
export const MAX_WAVES = 400;
/** The fleet runs 50 replicas on 2 shared cores: the default 100 ms command limit would measure the scheduler, not the store. */
export const FLEET_COMMAND_TIMEOUT_MS = 2_000;
export const ROUND_TRIP_CALLS = 100;
/**
 * The stores' `replicas` setting of the replicated rows (one replica of the suite's server, over
 * loopback): the limit is what a user would set on a busy machine, not what a healthy replica needs.
 */
export const REPLICATED = { count: 1, timeoutMs: 1_000 } as const;
export const REPLICATED_LABEL = `replicas: { count: ${REPLICATED.count}, timeoutMs: ${REPLICATED.timeoutMs} }`;
export const LATENCY_SAMPLES = 2_000;
export const LATENCY_BLOCK = 250;
/** A healthy call through a plugin with the Redis breaker store may cost at most this factor of the in-memory plugin's. */
export const SUCCESS_MAX_RATIO = 1.3;
/** Interleaved rounds of the healthy-call comparison: the per-round ratio swings on a shared machine, 7 give a steadier median. */
export const SUCCESS_ROUNDS = 7;

export type ClientKind = "node-redis" | "ioredis";
export const KINDS: readonly ClientKind[] = ["node-redis", "ioredis"];
export type RedisModule = typeof import("@retry-reflect/redis");
export type Plugin = RetryReflectPlugin;
export type Stores = ReturnType<RedisModule["redisStores"]>;

export const MEMORY = "retry-reflect plugin.execute, in-memory breaker (default)";
export const redisContestant = (kind: ClientKind) => `retry-reflect plugin.execute, RedisCircuitBreakerStore (${kind})`;

/** The two targets, as the report states them (measured or not). */
export const SUCCESS_TARGET = {
  name: "Redis breaker store: healthy call",
  target: `≤ ${SUCCESS_MAX_RATIO}× the in-memory plugin's ns/call (no I/O on a closed circuit)`,
} as const;
export const FLEET_TARGET = {
  name: `Redis breaker store: ${REPLICAS} replicas, dead tool`,
  target: `calls reaching the tool ≤ threshold + calls already in flight when it opened (≤ ${REPLICAS} × K)`,
} as const;
