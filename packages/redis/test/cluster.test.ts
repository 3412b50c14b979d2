import { RetryReflectPlugin } from "@retry-reflect/core";
import Redis from "ioredis";
import { createClient, createCluster } from "redis";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { RedisClusterNodeError, redisStores } from "../src/index.js";
import { type RedisCluster, startRedisCluster } from "./helpers/redis-cluster.js";

// The stores over a real 3-master Redis Cluster (started here), through each client's cluster
// client: every script has one key (a hash tag), so each goes to the node of its slot, and a
// breaker change is published, which a cluster delivers to subscribers on every node. Two clients
// with their own plugins stand for two replicas.

const cluster = await startRedisCluster();
afterAll(() => cluster?.stop());

type Kind = "node-redis" | "ioredis";
const opened: Array<() => unknown> = [];
afterEach(async () => {
  await Promise.all(opened.splice(0).map((close) => close()));
});

async function clusterClient(kind: Kind): Promise<unknown> {
  const nodes = cluster as RedisCluster;
  if (kind === "ioredis") {
    const client = new Redis.Cluster([...nodes.startupNodes], { lazyConnect: true, enableOfflineQueue: false });
    client.on("error", () => {});
    await client.connect();
    opened.push(() => client.disconnect());
    return client;
  }
  const client = createCluster({ rootNodes: [...nodes.rootNodes] });
  client.on("error", () => {});
  await client.connect();
  opened.push(() => (client.isOpen ? client.destroy() : undefined));
  return client;
}

let prefixes = 0;

async function replica(kind: Kind, prefix: string) {
  const client = await clusterClient(kind);
  const stores = redisStores({ client, prefix, commandTimeoutMs: 2_000 });
  opened.push(() => stores.close());
  await stores.circuitBreaker.subscribed;
  const plugin = RetryReflectPlugin.create({
    toolEffects: { pay: "write" },
    circuitBreakerThreshold: 3,
    circuitBreakerResetMs: 60_000,
    // A call at an open circuit is turned away at once (the temporary CIRCUIT_OPEN text), not held for the probe.
    waitForRecovery: false,
    idempotency: { store: stores.idempotency },
    circuitBreakerStore: stores.circuitBreaker,
  });
  return { plugin, stores };
}

const until = async (check: () => boolean, timeoutMs = 5_000) => {
  const started = Date.now();
  while (!check()) {
    if (Date.now() - started > timeoutMs) throw new Error("timed out waiting");
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
};

for (const kind of ["node-redis", "ioredis"] as const) {
  describe.skipIf(cluster === undefined)(`the Redis stores on a 3-master cluster (${kind} cluster client)`, { timeout: 60_000 }, () => {
    it("10 keys × 40 same-key writes from two replicas at once: each key's write runs exactly once", async () => {
      const prefix = `cl${++prefixes}:`;
      const replicas = [await replica(kind, prefix), await replica(kind, prefix)];
      const runs = new Map<string, number>();
      const calls = [];
      for (let key = 0; key < 10; key++) {
        for (let call = 0; call < 40; call++) {
          const { plugin } = replicas[call % 2] as (typeof replicas)[number];
          const idempotencyKey = `order-${key}`;
          calls.push(
            plugin.execute({ toolName: "pay", args: { idempotency_key: idempotencyKey, amount: key } }, async () => {
              runs.set(idempotencyKey, (runs.get(idempotencyKey) ?? 0) + 1);
              await new Promise((resolve) => setTimeout(resolve, 5));
              return { paid: key };
            }),
          );
        }
      }
      const outcomes = await Promise.all(calls);
      expect([...runs.values()]).toEqual(Array(10).fill(1));
      const statuses = outcomes.map((outcome) => outcome.status);
      // A same-key call that found the write still running is told so (IN_PROGRESS); none ran it again.
      expect(statuses.filter((status) => status === "success").length).toBeGreaterThanOrEqual(10);
    });

    it("a circuit opened by one replica reaches the other through the cluster's pub/sub: it rejects without running the tool", async () => {
      const prefix = `cl${++prefixes}:`;
      const a = await replica(kind, prefix);
      const b = await replica(kind, prefix);
      let runs = 0;
      const dead = (plugin: RetryReflectPlugin, scope: string) =>
        plugin.execute({ toolName: "search", args: {}, scope }, async () => {
          runs++;
          throw Object.assign(new Error("HTTP 503 Service Unavailable"), { status: 503 });
        });
      for (let call = 0; call < 3; call++) await dead(a.plugin, `a${call}`);
      expect(a.plugin.circuits.state("search")).toBe("open");
      await until(() => b.plugin.circuits.state("search") === "open");
      const before = runs;
      expect(await dead(b.plugin, "b1")).toMatchObject({ status: "reflect", error: { code: "CIRCUIT_OPEN", recoverable: true } });
      expect(runs).toBe(before);
    });
  });
}

for (const kind of ["node-redis", "ioredis"] as const) {
  describe.skipIf(cluster === undefined)(`a plain ${kind} client connected to one cluster node`, { timeout: 30_000 }, () => {
    it("is refused: stores.ready rejects with RedisClusterNodeError saying to pass a cluster client, and a process warning says so", async () => {
      const node = (cluster as RedisCluster).nodes[0] as RedisCluster["nodes"][number];
      let client: unknown;
      if (kind === "ioredis") {
        const plain = new Redis(node.url, { lazyConnect: true, enableOfflineQueue: false, maxRetriesPerRequest: 0 });
        plain.on("error", () => {});
        await plain.connect();
        opened.push(() => plain.disconnect());
        client = plain;
      } else {
        const plain = createClient({ url: node.url });
        plain.on("error", () => {});
        await plain.connect();
        opened.push(() => (plain.isOpen ? plain.destroy() : undefined));
        client = plain;
      }
      const warnings: Array<{ message: string; code?: string }> = [];
      const onWarning = (warning: Error & { code?: string }) => warnings.push({ message: warning.message, code: warning.code });
      process.on("warning", onWarning);
      try {
        const stores = redisStores({ client, prefix: `node${++prefixes}:` });
        opened.push(() => stores.close());
        await expect(stores.ready).rejects.toBeInstanceOf(RedisClusterNodeError);
        await expect(stores.ready).rejects.toThrow(/Pass a cluster client: node-redis `createCluster/);
        await until(() => warnings.some((warning) => warning.code === "RETRY_REFLECT_REDIS_CLUSTER_NODE"));
      } finally {
        process.off("warning", onWarning);
      }
    });
  });
}
