// Starts a real Redis Cluster for a test file: three masters (no replicas), each a redis-server of
// startRedis() with cluster mode on and its bus on a port of its own, joined with
// `redis-cli --cluster create`. Resolves once every node says `cluster_state:ok`.
//
//   const cluster = await startRedisCluster();
//   afterAll(() => cluster?.stop());
//
// Without redis-server or redis-cli, resolves undefined (with CI=true, startRedis throws instead).
import { spawnSync } from "node:child_process";
import { freePort, type RedisServer, startRedis } from "./redis-server.js";

export interface RedisCluster {
  readonly nodes: readonly RedisServer[];
  /** `{ host, port }` of every node, for ioredis `new Redis.Cluster(...)`. */
  readonly startupNodes: ReadonlyArray<{ host: string; port: number }>;
  /** `{ url }` of every node, for node-redis `createCluster({ rootNodes })`. */
  readonly rootNodes: ReadonlyArray<{ url: string }>;
  stop(): Promise<void>;
}

const delay = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export async function startRedisCluster(masters = 3): Promise<RedisCluster | undefined> {
  if (spawnSync("redis-cli", ["--version"]).status !== 0) {
    if (process.env.CI === "true") throw new Error("redis-cli is not installed: the cluster tests cannot run");
    console.warn("redis-cli is not installed: the Redis Cluster tests are skipped");
    return undefined;
  }
  const nodes: RedisServer[] = [];
  const stop = async () => {
    await Promise.all(nodes.map((node) => node.stop()));
  };
  try {
    for (let index = 0; index < masters; index++) {
      const bus = await freePort();
      const node = await startRedis({
        args: [
          "--cluster-enabled",
          "yes",
          "--cluster-config-file",
          "nodes.conf",
          "--cluster-port",
          String(bus),
          "--cluster-node-timeout",
          "5000",
        ],
      });
      if (node === undefined) {
        await stop();
        return undefined;
      }
      nodes.push(node);
    }
    const created = spawnSync(
      "redis-cli",
      ["--cluster", "create", ...nodes.map((node) => `127.0.0.1:${node.port}`), "--cluster-replicas", "0", "--cluster-yes"],
      { encoding: "utf8", timeout: 30_000 },
    );
    if (created.status !== 0) throw new Error(`redis-cli --cluster create failed: ${created.stdout}\n${created.stderr}`);
    const deadline = Date.now() + 20_000;
    for (;;) {
      const states = await Promise.all(nodes.map((node) => node.command("CLUSTER", "INFO")));
      if (states.every((state) => state.includes("cluster_state:ok"))) break;
      if (Date.now() > deadline) throw new Error(`the cluster did not reach cluster_state:ok: ${states.join(" | ").slice(0, 400)}`);
      await delay(100);
    }
  } catch (error) {
    await stop();
    throw error;
  }
  return {
    nodes,
    startupNodes: nodes.map((node) => ({ host: "127.0.0.1", port: node.port })),
    rootNodes: nodes.map((node) => ({ url: node.url })),
    stop,
  };
}
