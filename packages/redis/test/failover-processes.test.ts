import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { type Replication, startReplication } from "./helpers/redis-replication.js";
import { freePort } from "./helpers/redis-server.js";
import { type Replica, startReplica, startReplicas } from "./helpers/replicas.js";

// The failover of failover.test.ts with the writes made by separate processes (agent replicas):
// two processes write on the primary; the replica's link is cut while their writes are in flight;
// the primary is killed and the replica promoted; two new processes on the new primary ask for every
// write again, and again after every lease taken before the failover is over. Runs are counted in
// each process and summed per key.
//
// The 4 processes are started once for the file and reused, as in multi-process.test.ts: each test
// gives them a new client, new stores and a new plugin with `init` (closed after the test), so the
// two "new processes" hold nothing of the two before them; starting 2 processes 4 times (each loading
// tsx, the sources and a Redis client) took ~2 s each time.

// Half before the cut, half after (it was 1,500, a third before): each write after the cut holds
// its process's connection for its WAIT's timeout, one at a time, and 1,000 of them were ~4 s of
// each test. The writes that can run twice are the ones in flight at the cut (at most 2 × IN_FLIGHT);
// 500 completed before it are to be replayed, 500 after it to fail closed and then run once: a
// write run twice among any of them fails the test, as among 1,500.
const WRITES = 1_000;
const IN_FLIGHT = 25; // per process
const LEASE_MS = 1_000;
const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});
const probe = await startReplication();
await probe?.stop();
const pool: Replica[] = [];
beforeAll(async () => {
  if (probe !== undefined) pool.push(...(await startReplicas(4)));
}, 60_000);
afterAll(() => Promise.all(pool.map((replica) => replica.kill())));

interface PayEach {
  runs: Record<string, number>;
  outcomes: Record<string, number>;
}

/** Two processes of the pool, `first` (0: the two before the failover) or 2 (the two after), each given a new client, stores and plugin. */
async function processes(
  first: 0 | 2,
  kind: "node-redis" | "ioredis",
  url: string,
  replicas?: { count: number; timeoutMs: number },
): Promise<Replica[]> {
  for (let i = first; i < first + 2; i++) if ((pool[i] as Replica).exited) pool[i] = await startReplica();
  const started = pool.slice(first, first + 2);
  cleanups.push(() => Promise.all(started.map((replica) => (replica.exited ? undefined : replica.ask("close")))));
  await Promise.all(started.map((replica) => replica.ask("init", { url, client: kind, prefix: "fp:", leaseMs: LEASE_MS, replicas })));
  return started;
}

/** Every key once, split between the processes: the runs of each process, and the outcomes summed. */
async function payEach(
  replicas: Replica[],
  keys: string[],
): Promise<{ runs: Array<Record<string, number>>; outcomes: Record<string, number> }> {
  const halves = replicas.map((_, index) => keys.filter((__, at) => at % replicas.length === index));
  const results = await Promise.all(
    replicas.map((replica, index) => replica.ask<PayEach>("payEach", { keys: halves[index], inFlight: IN_FLIGHT })),
  );
  const outcomes: Record<string, number> = {};
  for (const result of results)
    for (const [label, count] of Object.entries(result.outcomes)) outcomes[label] = (outcomes[label] ?? 0) + count;
  return { runs: results.map((result) => result.runs), outcomes };
}

for (const kind of ["node-redis", "ioredis"] as const) {
  describe.skipIf(probe === undefined)(`failover with writes from separate processes (${kind})`, { timeout: 120_000 }, () => {
    it(`replicas: { count: 1 }: none of ${WRITES} writes runs twice across 4 processes`, async () => {
      const servers = (await startReplication()) as Replication;
      cleanups.push(() => servers.stop());
      const keys = Array.from({ length: WRITES }, (_, index) => `order-${index}`);
      const replicas = { count: 1, timeoutMs: 5 };
      const before = await processes(0, kind, servers.primary.url, replicas);
      const first = await payEach(before, keys.slice(0, WRITES / 2));
      // The link cut while the rest of the writes are in flight.
      const rest = payEach(before, keys.slice(WRITES / 2));
      await new Promise((resolve) => setTimeout(resolve, 20));
      await servers.replica.command("REPLICAOF", "127.0.0.1", String(await freePort()));
      const cut = await rest;
      await servers.failover();
      // The new primary has no replica yet: with `replicas` every new write would fail closed (each
      // WAIT holding its connection up to Redis's timer resolution, ~100 ms), so the new processes
      // run without it, as in failover.test.ts. A lock in doubt is answered as such either way.
      const after = await processes(2, kind, servers.replica.url);
      const second = await payEach(after, keys);
      await new Promise((resolve) => setTimeout(resolve, LEASE_MS));
      const third = await payEach(after, keys);

      const total = new Map<string, number>();
      for (const round of [first, cut, second, third])
        for (const runs of round.runs) for (const [key, count] of Object.entries(runs)) total.set(key, (total.get(key) ?? 0) + count);
      const twice = [...total].filter(([, count]) => count > 1).map(([key]) => key);
      console.log(`[failover, processes, ${kind}] ${twice.length} of ${WRITES} ran twice`, {
        first: first.outcomes,
        cut: cut.outcomes,
        second: second.outcomes,
        third: third.outcomes,
      });
      // Before the cut a write runs, or fails closed when its WAIT (5 ms) saw no acknowledgement yet.
      expect(Object.keys(first.outcomes).filter((label) => label !== "success" && label !== "reflect:STORE_UNAVAILABLE")).toEqual([]);
      // After the cut, writes fail closed until the failover (the replica has not got their locks).
      expect(cut.outcomes["reflect:STORE_UNAVAILABLE"]).toBeGreaterThan(0);
      expect(twice).toEqual([]);
      // Every key in the end: ran once (or replayed), or in doubt (only one in flight at the cut can be).
      const inDoubt = Object.entries(third.outcomes)
        .filter(([label]) => label === "failed:not_recoverable")
        .reduce((sum, [, count]) => sum + count, 0);
      expect(inDoubt).toBeLessThanOrEqual(2 * IN_FLIGHT);
      expect((third.outcomes.success ?? 0) + (third.outcomes.replayed ?? 0) + inDoubt).toBe(WRITES);
    });
  });
}
