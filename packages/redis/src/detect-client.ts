import { describeValue } from "./describe-value.js";
import { type IoRedisClusterLike, type IoRedisLike, ioredisTransport } from "./ioredis-transport.js";
import { isObject } from "./is-object.js";
import { type NodeRedisClusterLike, nodeRedisClusterTransport } from "./node-redis-cluster-transport.js";
import { type NodeRedisLike, nodeRedisTransport } from "./node-redis-transport.js";
import { RedisScriptClient } from "./redis-script-client.js";
import type { ScriptClient } from "./script-client.js";

function isIoRedisShaped(value: Record<string, unknown>): boolean {
  return (
    typeof value.status === "string" &&
    typeof value.call === "function" &&
    typeof value.duplicate === "function" &&
    typeof value.connect === "function" &&
    typeof value.subscribe === "function" &&
    typeof value.disconnect === "function" &&
    isObject(value.options)
  );
}

/** A node-redis client or cluster: both send commands, duplicate, connect, subscribe and are destroyed alike. */
function isNodeRedisShaped(value: Record<string, unknown>): boolean {
  return (
    typeof value.sendCommand === "function" &&
    typeof value.duplicate === "function" &&
    typeof value.connect === "function" &&
    typeof value.subscribe === "function" &&
    typeof value.destroy === "function" &&
    typeof value.isOpen === "boolean"
  );
}

/** A cluster lists its masters; a client says whether it is ready. */
const isNodeRedisCluster = (value: Record<string, unknown>): boolean => isNodeRedisShaped(value) && Array.isArray(value.masters);
const isNodeRedis = (value: Record<string, unknown>): boolean => isNodeRedisShaped(value) && typeof value.isReady === "boolean";

const MAX_TIMER_MS = 2_147_483_647;

/**
 * Detects a connected node-redis v5 or v6 client (`createClient(...)`) or an ioredis v5/v6 instance
 * (`new Redis(...)`) by duck typing; neither package is loaded here. Throws a TypeError naming
 * `client` and describing what was given otherwise (a cluster, a pool, a Promise, ...), and a
 * RangeError for a `commandTimeoutMs` that is not a positive number of milliseconds.
 * ioredis with `stringNumbers: true` is refused: its integers would come back as strings.
 * `subscriptionPingMs`: how often a subscription's connection is pinged (0: never; default 10 s).
 */
export function scriptClient(client: unknown, commandTimeoutMs: number, subscriptionPingMs?: number): ScriptClient {
  if (typeof commandTimeoutMs !== "number" || !(commandTimeoutMs > 0) || commandTimeoutMs > MAX_TIMER_MS) {
    throw new RangeError(
      `scriptClient: \`commandTimeoutMs\` must be a number of milliseconds above 0 and at most ${MAX_TIMER_MS}; got ${describeValue(commandTimeoutMs)}`,
    );
  }
  const expected =
    "a connected node-redis v5 or v6 client (createClient(...)) or cluster (createCluster(...)), or an ioredis v5/v6 instance (new Redis(...)) or Cluster (new Redis.Cluster(...))";
  if (isObject(client) && isIoRedisShaped(client)) {
    const cluster = client.isCluster === true;
    const options = cluster ? (client as unknown as IoRedisClusterLike).options.redisOptions : (client as unknown as IoRedisLike).options;
    if (options?.stringNumbers === true) {
      throw new TypeError(
        `scriptClient: \`client\` is an ioredis ${cluster ? "Cluster" : "instance"} with \`stringNumbers: true\`, which is not supported: script replies would turn integers into strings. Pass a client without it.`,
      );
    }
    return new RedisScriptClient(
      ioredisTransport(client as unknown as IoRedisLike | IoRedisClusterLike),
      commandTimeoutMs,
      subscriptionPingMs,
    );
  }
  if (isObject(client) && isNodeRedisCluster(client)) {
    return new RedisScriptClient(
      nodeRedisClusterTransport(client as unknown as NodeRedisClusterLike),
      commandTimeoutMs,
      subscriptionPingMs,
    );
  }
  if (isObject(client) && isNodeRedis(client)) {
    return new RedisScriptClient(nodeRedisTransport(client as unknown as NodeRedisLike), commandTimeoutMs, subscriptionPingMs);
  }
  throw new TypeError(`scriptClient: \`client\` must be ${expected}; got ${describeValue(client)}`);
}
