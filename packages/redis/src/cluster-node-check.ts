import { isClusterClient } from "./is-cluster-client.js";
import { script } from "./lua-script.js";
import type { ScriptClient } from "./script-client.js";

/** `INFO cluster` from inside a script (any node answers a script with no keys): `cluster_enabled:0|1`. */
const CLUSTER_INFO = script("return redis.call('INFO', 'cluster')");

/** The stores were given a plain client connected to one node of a Redis Cluster: they need the cluster client. */
export class RedisClusterNodeError extends Error {
  constructor() {
    super(
      "retry-reflect redis: `client` is connected to a node of a Redis Cluster, but it is a single-node client: commands for keys in other nodes' slots fail with MOVED. Pass a cluster client: node-redis `createCluster({ rootNodes })` or ioredis `new Redis.Cluster(nodes)`.",
    );
    this.name = "RedisClusterNodeError";
  }
}

/**
 * Rejects with {@link RedisClusterNodeError} when a plain client's server is a cluster node; resolves
 * otherwise, also when the server cannot be asked (the question is asked once, when the server is
 * first reachable; a failure to ask is no reason to stop the stores).
 */
export async function refuseClusterNode(redis: ScriptClient, client: unknown): Promise<void> {
  if (isClusterClient(client)) return;
  let info: unknown;
  try {
    info = await redis.run(CLUSTER_INFO, [], []);
  } catch {
    return;
  }
  if (typeof info === "string" && /^cluster_enabled:1\b/m.test(info)) throw new RedisClusterNodeError();
}
