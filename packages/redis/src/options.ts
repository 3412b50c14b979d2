import { type Clock, InvalidOptionError, systemClock } from "@retry-reflect/core";
import { scriptClient } from "./detect-client.js";
import { isClusterClient } from "./is-cluster-client.js";
import type { ScriptClient } from "./script-client.js";

/** The options of `redisStores`, `RedisIdempotencyStore` and `RedisCircuitBreakerStore` (the same for all three). */
export interface RedisStoreOptions {
  /**
   * A connected node-redis (v5+) client (`await createClient({ url }).connect()`) or an ioredis
   * (v5+) instance. Required. Your client: the stores never close it.
   */
  readonly client: unknown;
  /** Prepended to every key and channel name. @default "retry-reflect:" */
  readonly prefix?: string;
  /**
   * Bounds every store call, offline queues and client reconnects included: a store call that gets
   * no answer in time fails (a breaker falls back to its local view, a write does not run). @default 100
   */
  readonly commandTimeoutMs?: number;
  /** The local view's clock (open times are learned as durations from the server's clock). @default systemClock */
  readonly clock?: Clock;
  /**
   * Most tools the breaker store remembers, in this process, as in a failing row (failures recorded
   * here, no success or open circuit since): their next success here ends the row fleet-wide at once.
   * Beyond it the tool whose failure came longest ago is forgotten here: its next success is then
   * told with its next failure here, as for a tool whose failures another replica counted. Bounds
   * memory when tool names (which a model may pick) are many. @default 10_000
   */
  readonly maxFailingTools?: number;
  /**
   * Replication to wait for, so that a failover cannot run a write twice: after a `begin` takes a
   * lock and after a `complete`, `WAIT count timeoutMs`. When fewer than `count` replicas
   * acknowledged, the write does not run (`STORE_UNAVAILABLE`), and a completion is tried again
   * until the write's lease ends. A lock whose lease ends with no result (its process stopped, or
   * a failover lost the result) is kept for `inDoubtMs`: the write is in doubt, and a call with its
   * key is refused (`WRITE_IN_DOUBT`, not recoverable) instead of running it again. Not with a
   * cluster client. @default none (no WAIT: a failover can lose a running write's lock, or a
   * completed key, and a write may then run twice; an ended lease frees the key)
   */
  readonly replicas?: ReplicasOption;
  /**
   * How often the breaker store's subscription connection is pinged, in milliseconds; a PING with
   * no reply within `max(commandTimeoutMs, 2000)` ms ends the connection as lost, and the
   * subscription is made again (reading every circuit this process uses). Catches a connection
   * dropped without a close (an idle connection cut by a NAT or load balancer), which otherwise
   * delivers no publish until TCP gives up. `0`: no PING. Not with cluster clients (their PING goes
   * to some node, not to the subscribed connection). @default 10_000
   */
  readonly subscriptionPingMs?: number;
}

/** See {@link RedisStoreOptions.replicas}. */
export interface ReplicasOption {
  /** Replicas that must acknowledge; an integer >= 1. */
  readonly count: number;
  /** How long Redis waits for them per WAIT, in milliseconds; an integer >= 1. */
  readonly timeoutMs: number;
  /**
   * How long a write whose lease ended with no result stays in doubt (refused with
   * `WRITE_IN_DOUBT`) before its key is free again, in milliseconds. @default 86_400_000 (a day,
   * the core's `idempotency.ttlMs` default)
   */
  readonly inDoubtMs?: number;
}

/** `replicas.inDoubtMs` when not given. */
export const DEFAULT_IN_DOUBT_MS = 86_400_000;

/** The defaults, in one place. */
export const REDIS_STORE_DEFAULTS = Object.freeze({
  prefix: "retry-reflect:",
  commandTimeoutMs: 100,
  maxFailingTools: 10_000,
  subscriptionPingMs: 10_000,
});

export interface ResolvedRedisOptions {
  readonly redis: ScriptClient;
  readonly prefix: string;
  readonly commandTimeoutMs: number;
  readonly clock: Clock;
  readonly maxFailingTools: number;
  readonly replicas: Required<ReplicasOption> | undefined;
}

const NAMES = new Set(["client", "prefix", "commandTimeoutMs", "clock", "maxFailingTools", "replicas", "subscriptionPingMs"]);

/** Checks the options; throws `InvalidOptionError` naming the option and the value. */
export function resolveRedisOptions(options: RedisStoreOptions): ResolvedRedisOptions {
  if (typeof options !== "object" || options === null) throw new InvalidOptionError("options", options, "an object with `client`");
  for (const name of Object.keys(options)) {
    if (!NAMES.has(name))
      throw new InvalidOptionError(
        name,
        (options as unknown as Record<string, unknown>)[name],
        `one of ${[...NAMES].join(", ")} (unknown option)`,
      );
  }
  const prefix = options.prefix === undefined ? REDIS_STORE_DEFAULTS.prefix : options.prefix;
  if (typeof prefix !== "string" || prefix.length === 0 || /[{}\s]/.test(prefix)) {
    throw new InvalidOptionError("prefix", options.prefix, "a non-empty string without braces or spaces");
  }
  const commandTimeoutMs = options.commandTimeoutMs === undefined ? REDIS_STORE_DEFAULTS.commandTimeoutMs : options.commandTimeoutMs;
  if (
    typeof commandTimeoutMs !== "number" ||
    !Number.isFinite(commandTimeoutMs) ||
    commandTimeoutMs <= 0 ||
    commandTimeoutMs > 2_147_483_647
  ) {
    throw new InvalidOptionError("commandTimeoutMs", options.commandTimeoutMs, "a number of milliseconds > 0");
  }
  const clock = options.clock === undefined ? systemClock : options.clock;
  if (typeof clock !== "object" || clock === null || typeof clock.now !== "function") {
    throw new InvalidOptionError("clock", options.clock, "an object with now()");
  }
  const maxFailingTools = options.maxFailingTools === undefined ? REDIS_STORE_DEFAULTS.maxFailingTools : options.maxFailingTools;
  if (!Number.isSafeInteger(maxFailingTools) || maxFailingTools < 1) {
    throw new InvalidOptionError("maxFailingTools", options.maxFailingTools, "an integer >= 1");
  }
  const replicas = resolveReplicas(options.replicas, options.client);
  const subscriptionPingMs =
    options.subscriptionPingMs === undefined ? REDIS_STORE_DEFAULTS.subscriptionPingMs : options.subscriptionPingMs;
  if (!Number.isSafeInteger(subscriptionPingMs) || subscriptionPingMs < 0 || subscriptionPingMs > 2_147_483_647) {
    throw new InvalidOptionError("subscriptionPingMs", options.subscriptionPingMs, "an integer of milliseconds >= 0 (0: no PING)");
  }
  let redis: ScriptClient;
  try {
    redis = scriptClient(options.client, commandTimeoutMs, subscriptionPingMs);
  } catch {
    throw new InvalidOptionError(
      "client",
      options.client,
      "a connected node-redis v5 or v6 client (await createClient({ url }).connect()) or an ioredis v5 or v6 instance",
    );
  }
  return { redis, prefix, commandTimeoutMs, clock, maxFailingTools, replicas };
}

function resolveReplicas(replicas: unknown, client: unknown): Required<ReplicasOption> | undefined {
  if (replicas === undefined) return undefined;
  if (typeof replicas !== "object" || replicas === null)
    throw new InvalidOptionError("replicas", replicas, "an object { count, timeoutMs }");
  for (const name of Object.keys(replicas)) {
    if (name !== "count" && name !== "timeoutMs" && name !== "inDoubtMs")
      throw new InvalidOptionError(
        `replicas.${name}`,
        (replicas as Record<string, unknown>)[name],
        "count, timeoutMs or inDoubtMs (unknown option)",
      );
  }
  const { count, timeoutMs, inDoubtMs = DEFAULT_IN_DOUBT_MS } = replicas as Record<string, unknown>;
  if (!Number.isSafeInteger(count) || (count as number) < 1) throw new InvalidOptionError("replicas.count", count, "an integer >= 1");
  if (!Number.isSafeInteger(timeoutMs) || (timeoutMs as number) < 1 || (timeoutMs as number) > 2_147_483_647) {
    throw new InvalidOptionError("replicas.timeoutMs", timeoutMs, "an integer of milliseconds >= 1");
  }
  if (!Number.isSafeInteger(inDoubtMs) || (inDoubtMs as number) < 1) {
    throw new InvalidOptionError("replicas.inDoubtMs", inDoubtMs, "an integer of milliseconds >= 1");
  }
  // WAIT has no key: a cluster client would send it to some node, not the one that took the lock.
  if (isClusterClient(client))
    throw new InvalidOptionError("replicas", replicas, "no `replicas` with a cluster client (WAIT has no key to route by)");
  return Object.freeze({ count: count as number, timeoutMs: timeoutMs as number, inDoubtMs: inDoubtMs as number });
}

const warned = new WeakSet<object>();

/**
 * Warns once per client (`process.emitWarning`) when the server may evict keys: an eviction policy
 * other than `noeviction` can silently delete a completed write's record or an open circuit.
 */
export function warnOnEviction(redis: ScriptClient, client: unknown): void {
  if (typeof client !== "object" || client === null || warned.has(client)) return;
  warned.add(client);
  redis.maxmemoryPolicy().then(
    (policy) => {
      if (policy !== undefined && policy !== "noeviction") {
        process.emitWarning(
          `Redis maxmemory-policy is "${policy}": under memory pressure Redis may delete an idempotency record (a write would run twice) or an open circuit. Set maxmemory-policy noeviction for the retry-reflect keys' server.`,
          { code: "RETRY_REFLECT_REDIS_EVICTION" },
        );
      }
    },
    () => {},
  );
}
