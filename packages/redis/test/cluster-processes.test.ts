import { afterAll, afterEach, describe, expect, it } from "vitest";
import { type RedisCluster, startRedisCluster } from "./helpers/redis-cluster.js";
import { type Replica, startReplica, startReplicas } from "./helpers/replicas.js";

// The multi-process idempotency and breaker checks of multi-process.test.ts, on a real 3-master
// Redis Cluster (started here): 4 replicas as separate processes, two with node-redis'
// `createCluster` and two with ioredis' `Cluster`, each its own plugin over the stores. Keys spread
// over the three masters' slots; a breaker change reaches every process through the cluster's pub/sub.
// The 4 processes are started once for the file and reused, as in multi-process.test.ts: each test's
// `init` gives them a new cluster client, new stores and a new plugin under a prefix of its own (the
// last test's closed, its events dropped). They start while the cluster forms: its masters take
// writes only 2 s after they start (Redis's own delay), which is about what the 4 processes take.

const starting = startReplicas(4);
const cluster = await startRedisCluster().catch(async (error: unknown) => {
  await Promise.all((await starting).map((replica) => replica.kill()));
  throw error;
});
const pool: Replica[] = await starting;
afterAll(async () => {
  await Promise.all(pool.map((replica) => replica.kill()));
  await cluster?.stop();
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
let prefixes = 0;
type Round = { runs: number; outcomes: Record<string, number>; values: string[] };

describe.skipIf(cluster === undefined)("many processes, one Redis Cluster (both cluster clients)", { timeout: 60_000 }, () => {
  let replicas: Replica[] = [];

  async function fleet(init: Record<string, unknown> = {}) {
    const nodes = cluster as RedisCluster;
    const dead = pool.flatMap((replica, i) => (replica.exited ? [i] : []));
    await Promise.all(dead.map(async (i) => (pool[i] = await startReplica())));
    replicas = pool.slice(0, 4);
    const prefix = `cp${++prefixes}:`;
    const topology = { rootNodes: nodes.rootNodes, startupNodes: nodes.startupNodes };
    await Promise.all(
      replicas.map((replica, i) =>
        replica.ask("init", { url: "", cluster: topology, prefix, client: i % 2 === 1 ? "ioredis" : "node-redis", ...init }),
      ),
    );
    return replicas;
  }

  afterEach(async () => {
    // Each ends what it started: its client, stores and plugin (the process stays for the next test).
    await Promise.all(replicas.filter((replica) => !replica.exited).map((replica) => replica.ask("close")));
    replicas = [];
  });

  it("10 keys × 400 concurrent same-key writes from 4 processes: each key's write runs exactly once; a later round replays it everywhere", async () => {
    const fleetOf4 = await fleet();
    const keys = Array.from({ length: 10 }, (_, key) => `order-${key}`);
    const rounds = await Promise.all(
      fleetOf4.flatMap((replica) => keys.map((key) => replica.ask<Round>("writes", { count: 100, key, holdMs: 50 }))),
    );
    expect(rounds.reduce((sum, round) => sum + round.runs, 0)).toBe(keys.length);
    for (const round of rounds) {
      for (const label of Object.keys(round.outcomes)) expect(["success", "replayed", "reflect:IN_PROGRESS"]).toContain(label);
    }
    const again = await Promise.all(fleetOf4.flatMap((replica) => keys.map((key) => replica.ask<Round>("writes", { count: 5, key }))));
    expect(again.reduce((sum, round) => sum + round.runs, 0)).toBe(0);
    for (const round of again) expect(round.outcomes).toEqual({ replayed: 5 });
    // Each key's replays carry the one result its write stored, whichever process asks.
    for (const [index, key] of keys.entries()) {
      const values = new Set(again.filter((_, i) => i % keys.length === index).flatMap((round) => round.values));
      expect(values.size, key).toBe(1);
    }
  });

  it("the breaker opens fleet-wide at the threshold (failures spread over the processes), lets one probe through fleet-wide, and a success closes it everywhere", async () => {
    const fleetOf4 = await fleet({ threshold: 5, resetMs: 1_000 });
    const [r0, r1, r2, r3] = fleetOf4 as [Replica, Replica, Replica, Replica];
    for (const replica of [r0, r1, r2, r3])
      expect((await replica.ask<{ runs: number }>("calls", { count: 1, result: "fail" })).runs).toBe(1);
    const fifth = await r0.ask<Round>("calls", { count: 1, result: "fail" });
    expect(fifth).toMatchObject({ runs: 1, outcomes: { "reflect:TOOL_FAILED": 1 } }); // the tool's own failure opened it
    expect(await r0.ask("state", { tool: "search" })).toBe("open");
    const learned = await Promise.all(
      [r1, r2, r3].map((replica) => replica.ask<number>("waitState", { tool: "search", state: "open", timeoutMs: 2_000 })),
    );
    for (const ms of learned) expect(ms).toBeGreaterThanOrEqual(0);
    const rejected = await Promise.all(fleetOf4.map((replica) => replica.ask<Round>("calls", { count: 10, result: "ok" })));
    for (const round of rejected) expect(round).toMatchObject({ runs: 0, outcomes: { "reflect:CIRCUIT_OPEN": 10 } });

    await sleep(1_050);
    const probing = await Promise.all(fleetOf4.map((replica) => replica.ask<Round>("calls", { count: 10, result: "ok", holdMs: 600 })));
    expect(probing.reduce((sum, round) => sum + round.runs, 0)).toBe(1);
    expect(probing.reduce((sum, round) => sum + (round.outcomes["reflect:CIRCUIT_OPEN"] ?? 0), 0)).toBe(39);
    const closedIn = await Promise.all(
      fleetOf4.map((replica) => replica.ask<number>("waitState", { tool: "search", state: "closed", timeoutMs: 2_000 })),
    );
    for (const ms of closedIn) expect(ms).toBeGreaterThanOrEqual(0);
    const healthy = await Promise.all(fleetOf4.map((replica) => replica.ask<{ runs: number }>("calls", { count: 5, result: "ok" })));
    expect(healthy.reduce((sum, round) => sum + round.runs, 0)).toBe(20);
  });
});
