import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { type RedisServer, startRedis } from "./helpers/redis-server.js";
import { type Replica, startReplica, startReplicas } from "./helpers/replicas.js";

// Replicas as separate processes (test/helpers/replica.ts) whose clients are built as the README
// shows them: a replica that starts late learns the open circuits, and replicas that start while
// Redis is down work once it comes. This file's redis-server is stopped and restarted here; the
// waits are for the server and the clients' reconnects, bounded and polled.
//
// The processes are started once for the file (4, the most a test uses) and reused, as in
// multi-process.test.ts: a replica "starts" when its `init` builds a new client, new stores and a
// new plugin under a prefix of the test's own (the last test's closed, its events dropped), which
// is what a late start or a start while Redis is down is about. Starting 16 processes (each
// loading tsx, the sources and a Redis client) was ~8 s of this file's time.

const redis = await startRedis();
const pool: Replica[] = [];
beforeAll(async () => {
  if (redis !== undefined) pool.push(...(await startReplicas(4)));
}, 60_000);
afterAll(async () => {
  await Promise.all(pool.map((replica) => replica.kill()));
  await redis?.stop();
});

type Round = { runs: number; outcomes: Record<string, number> };
let prefixes = 0;

describe.skipIf(redis === undefined)("replicas learn the fleet's state (the README's setups, both clients)", { timeout: 60_000 }, () => {
  const server = redis as RedisServer;
  let replicas: Replica[] = [];

  afterEach(async () => {
    // Each ends what it started: its client, stores and plugin (the process stays for the next test).
    await Promise.all(replicas.filter((replica) => !replica.exited).map((replica) => replica.ask("close")));
    replicas = [];
  });

  /** `count` processes of the pool not yet in this test's fleet (a dead one replaced first). */
  async function take(count: number): Promise<Replica[]> {
    const dead = pool.flatMap((replica, i) => (replica.exited ? [i] : []));
    await Promise.all(dead.map(async (i) => (pool[i] = await startReplica())));
    const fleet = pool.filter((replica) => !replicas.includes(replica)).slice(0, count);
    if (fleet.length < count) throw new Error(`the pool has ${pool.length} replicas; this test asked for ${replicas.length + count}`);
    replicas.push(...fleet);
    return fleet;
  }

  /** `count` replicas, node-redis and ioredis in turn, their clients built as the README shows. */
  async function started(count: number, prefix: string): Promise<Replica[]> {
    const fleet = await take(count);
    await Promise.all(
      fleet.map((replica, i) =>
        replica.ask("init", { url: server.url, prefix, client: i % 2 === 1 ? "ioredis" : "node-redis", readme: true, threshold: 3 }),
      ),
    );
    return fleet;
  }

  it("replicas started after a circuit opened (one per client) reject it on their first calls, 10 at once each: the dead tool's run count does not grow", async () => {
    const prefix = `fl${++prefixes}:`;
    const [a, b] = await started(2, prefix);
    for (const replica of [a, b] as Replica[]) expect(await replica.ask<number>("ready", { timeoutMs: 10_000 })).toBeGreaterThanOrEqual(0);
    for (let i = 0; i < 3; i++) await (a as Replica).ask<Round>("calls", { count: 1, result: "fail" });
    expect(await (a as Replica).ask("state", { tool: "search" })).toBe("open");
    // Started now: their first calls go out at once, without waiting for `stores.ready`.
    const late = await started(2, prefix);
    const rounds = await Promise.all(late.map((replica) => replica.ask<Round>("calls", { count: 10, result: "fail" })));
    for (const round of rounds) expect(round).toEqual({ runs: 0, outcomes: { "reflect:CIRCUIT_OPEN": 10 }, ms: expect.any(Number) });
  });

  it("replicas started while Redis is down: reads run, writes fail closed; Redis comes: stores.ready resolves in each, and a circuit opened by one is heard by the other", async () => {
    const prefix = `fl${++prefixes}:`;
    await server.stop();
    let fleet: Replica[];
    try {
      fleet = await started(2, prefix);
      // Each replica's first read and first write wait for the client to connect, at most
      // `commandTimeoutMs` (2 s) each, before the local view decides: the four run at once (~2 s, not ~8 s).
      const [reads, writes] = await Promise.all([
        Promise.all(fleet.map((replica) => replica.ask<Round>("calls", { count: 5, result: "ok" }))),
        Promise.all(fleet.map((replica) => replica.ask<Round>("writes", { count: 2, key: `down-${replica.pid}`, distinct: true }))),
      ]);
      for (const round of reads) expect(round).toMatchObject({ runs: 5, outcomes: { success: 5 } });
      for (const round of writes) expect(round).toMatchObject({ runs: 0, outcomes: { "reflect:STORE_UNAVAILABLE": 2 } });
    } finally {
      await server.restart();
    }
    for (const replica of fleet) expect(await replica.ask<number>("ready", { timeoutMs: 15_000 })).toBeGreaterThanOrEqual(0);
    const [a, b] = fleet as [Replica, Replica];
    for (let i = 0; i < 3; i++) await a.ask<Round>("calls", { count: 1, result: "fail" });
    expect(await b.ask<number>("waitState", { tool: "search", state: "open", timeoutMs: 2000 })).toBeGreaterThanOrEqual(0);
    expect(await b.ask<Round>("calls", { count: 3, result: "ok" })).toMatchObject({ runs: 0, outcomes: { "reflect:CIRCUIT_OPEN": 3 } });
    for (const replica of fleet) {
      expect(await replica.ask<Round>("writes", { count: 1, key: `up-${replica.pid}` })).toMatchObject({
        runs: 1,
        outcomes: { success: 1 },
      });
    }
  });

  /** 4 replicas (node-redis and ioredis in turn) with the usual setup, threshold 5, their first call of `search` made (healthy). */
  async function roundRobin(): Promise<Replica[]> {
    const fleet = await take(4);
    const prefix = `fl${++prefixes}:`;
    await Promise.all(
      fleet.map((replica, i) =>
        replica.ask("init", { url: server.url, prefix, client: i % 2 === 1 ? "ioredis" : "node-redis", threshold: 5 }),
      ),
    );
    for (const replica of fleet) expect(await replica.ask<Round>("calls", { count: 3, result: "ok" })).toMatchObject({ runs: 3 });
    return fleet;
  }

  /** One call on `replica`, then a pause for the publishes it made to reach the others (nothing else in flight). */
  async function once(replica: Replica, result: "ok" | "fail"): Promise<number> {
    const round = await replica.ask<Round>("calls", { count: 1, result });
    await new Promise((resolve) => setTimeout(resolve, 30));
    return round.runs;
  }

  it("a healthy tool that dies, called round-robin by 4 replicas one call at a time: it opens fleet-wide after threshold (5) runs", async () => {
    const fleet = await roundRobin();
    let runs = 0;
    for (let i = 0; i < 12; i++) runs += await once(fleet[i % 4] as Replica, "fail");
    expect(runs).toBe(5);
    for (const replica of fleet) expect(await replica.ask("state", { tool: "search" })).toBe("open");
  });

  it("a success on a replica that did not count the row's failures ends it at once: 1 failure before it and 4 after (threshold 5) leave the circuit closed", async () => {
    const [a, b, c, d] = (await roundRobin()) as [Replica, Replica, Replica, Replica];
    await once(a, "fail");
    await once(b, "ok"); // b heard of the row (its first failure is published): its success resets the count fleet-wide
    for (let i = 0; i < 4; i++) await once(a, "fail");
    for (const replica of [a, b, c, d]) expect(await replica.ask("state", { tool: "search" })).toBe("closed");
  });

  it("a failure-rate breaker (0.5 of at least 10 calls), 4 replicas: the rate is the fleet's, one replica's failures among the others' successes open nothing, the fleet's open it once for all", async () => {
    const fleet = await take(4);
    const prefix = `fl${++prefixes}:`;
    await Promise.all(
      fleet.map((replica, i) =>
        replica.ask("init", {
          url: server.url,
          prefix,
          client: i % 2 === 1 ? "ioredis" : "node-redis",
          failureRate: { rate: 0.5, minimumCalls: 10, windowMs: 60_000 },
        }),
      ),
    );
    // 10 rounds on every replica at once: 2 successes and 1 failure each (30 calls, 10 failures per replica).
    for (let round = 0; round < 10; round++) {
      await Promise.all(
        fleet.map(async (replica) => {
          await replica.ask<Round>("calls", { count: 2, result: "ok" });
          await replica.ask<Round>("calls", { count: 1, result: "fail" });
        }),
      );
    }
    for (const replica of fleet) expect(await replica.ask("state", { tool: "search" })).toBe("closed");
    // A replica that failed within the window tells the fleet its counts at most once a second: a
    // second on, one more call each sends the rest (124 calls, 40 failures fleet-wide).
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    await Promise.all(fleet.map((replica) => replica.ask<Round>("calls", { count: 1, result: "ok" })));
    await new Promise((resolve) => setTimeout(resolve, 50));
    // One replica fails 10 in a row: 20 of 41 of its own calls, 50 of 134 fleet-wide: nothing opens.
    const [a] = fleet as [Replica];
    expect(await a.ask<Round>("calls", { count: 10, result: "fail" })).toMatchObject({ runs: 10 });
    for (const replica of fleet) expect(await replica.ask("state", { tool: "search" })).toBe("closed");
    // The tool now fails everywhere, one call at a time in turn: 40 failures (90 of 174 fleet-wide,
    // but each replica knows the others' only from their shares); a second on, their next calls send
    // them, and the fleet's window is over the rate.
    for (let i = 0; i < 40; i++) await (fleet[i % 4] as Replica).ask<Round>("calls", { count: 1, result: "fail" });
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    for (let i = 0; i < 12; i++) await (fleet[i % 4] as Replica).ask<Round>("calls", { count: 1, result: "fail" });
    for (const replica of fleet) {
      expect(await replica.ask<number>("waitState", { tool: "search", state: "open", timeoutMs: 2000 })).toBeGreaterThanOrEqual(0);
    }
    const opened = await Promise.all(
      fleet.map(
        async (replica) => (await replica.ask<Array<{ type: string }>>("events")).filter((event) => event.type === "circuit_opened").length,
      ),
    );
    expect(opened.reduce((sum, count) => sum + count, 0)).toBe(1);
    for (const replica of fleet) {
      expect(await replica.ask<Round>("calls", { count: 3, result: "ok" })).toMatchObject({
        runs: 0,
        outcomes: { "reflect:CIRCUIT_OPEN": 3 },
      });
    }
  });
});
