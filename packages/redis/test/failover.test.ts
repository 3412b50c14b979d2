import { type ExecuteOutcome, RetryReflectPlugin } from "@retry-reflect/core";
import Redis from "ioredis";
import { createClient } from "redis";
import { afterEach, describe, expect, it } from "vitest";
import { RedisIdempotencyStore, type RedisStoreOptions } from "../src/index.js";
import { RedisReplicasError } from "../src/replica-waits.js";
import { type Replication, startReplication } from "./helpers/redis-replication.js";
import { freePort } from "./helpers/redis-server.js";

// Replication (DESIGN Part 3, "Redis in production"), against a real primary and replica. The
// replica loses the last writes as in a real failover: its link is cut (REPLICAOF to a port where
// nothing listens: it stops reading the primary at once, whatever sits in its socket unread is
// dropped) while writes go on on the primary; then the primary is killed and the replica promoted.
// Every key is then asked again on the new primary, as a model or a queue retries after a failover.

type Kind = "node-redis" | "ioredis";
const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const COMMAND_TIMEOUT_MS = 2_000; // a loaded CI machine, not a hung server
const WRITES = 1_500; // a third before the cut, two thirds after: enough that "many" is hundreds
// With `replicas`, each write after the cut holds the store's one connection for its WAIT's timeout
// (~7 ms, one at a time): 1,000 of them were ~7.5 s of each such test. Half before the cut and half
// after: the writes that can run twice are the ones in flight at the cut (at most IN_FLIGHT, 50),
// with 500 completed before it (each to be replayed after the failover, not run) and 500 after it
// (each to fail closed, not run, then run once on the new primary): a write that runs twice among
// any of them fails the test, as among 1,500.
const REPLICATED_WRITES = 1_000;
const IN_FLIGHT = 50;
const probe = await startReplication();
await probe?.stop();

async function connect(kind: Kind, url: string): Promise<unknown> {
  if (kind === "ioredis") {
    const client = new Redis(url, { enableOfflineQueue: false, maxRetriesPerRequest: 0, lazyConnect: true, retryStrategy: () => 20 });
    client.on("error", () => {});
    await client.connect();
    cleanups.push(() => client.disconnect());
    return client;
  }
  const client = createClient({ url, disableOfflineQueue: true, socket: { reconnectStrategy: () => 20 } });
  client.on("error", () => {});
  await client.connect();
  cleanups.push(() => (client.isOpen ? client.destroy() : undefined));
  return client;
}

async function replication(): Promise<Replication> {
  const started = (await startReplication()) as Replication;
  cleanups.push(() => started.stop());
  return started;
}

const LEASE_MS = 1_000;

/** A plugin whose `pay` tool counts its runs per key; `unacknowledged` holds the keys whose completion failed. */
function payments(store: RedisIdempotencyStore, runs: Map<string, number>, unacknowledged: Set<string>) {
  const plugin = RetryReflectPlugin.create({
    toolEffects: { pay: "write" },
    idempotency: { store, leaseMs: LEASE_MS },
    // Short pauses between in-place retries: the test's time goes to the servers, not to backoffs.
    initialBackoffMs: 1,
    maxBackoffMs: 10,
    observers: [
      {
        onEvent: (event) => {
          if (event.type === "store_error" && event.fields.operation === "complete" && event.call) unacknowledged.add(event.call.scope);
        },
      },
    ],
  });
  return (key: string): Promise<ExecuteOutcome<unknown>> =>
    // Each key its own scope (a conversation): one that gave up on a call must not hold back the others.
    plugin.execute({ toolName: "pay", args: { idempotency_key: key, order: key }, scope: key }, async () => {
      runs.set(key, (runs.get(key) ?? 0) + 1);
      return { paid: key };
    });
}

/** Calls `pay` for each of `writes` keys, `IN_FLIGHT` at a time; `onDone(n)` after each. */
async function payAll(
  pay: (key: string) => Promise<ExecuteOutcome<unknown>>,
  writes: number,
  onDone: (done: number) => Promise<void> | void = () => {},
) {
  const outcomes: Record<string, number> = {};
  let next = 0;
  let done = 0;
  const worker = async (): Promise<void> => {
    while (next < writes) {
      const outcome = await pay(`order-${next++}`);
      const label =
        outcome.status === "reflect"
          ? `reflect:${outcome.error.code}`
          : outcome.status === "failed"
            ? `failed:${outcome.reason}:${String((outcome as { error?: { message?: string } }).error?.message).slice(0, 80)}`
            : outcome.status;
      outcomes[label] = (outcomes[label] ?? 0) + 1;
      await onDone(++done);
    }
  };
  await Promise.all(Array.from({ length: IN_FLIGHT }, worker));
  return outcomes;
}

/**
 * `writes` writes on the primary, the replica's link cut after `cutAfter` of them, a failover, then
 * every key again, and again once every lease taken before the failover is over.
 */
async function failoverRound(kind: Kind, replicas: RedisStoreOptions["replicas"], writes: number, cutAfter: number) {
  const servers = await replication();
  const deadPort = String(await freePort());
  const runs = new Map<string, number>();
  const unacknowledged = new Set<string>();
  const options = { prefix: "fo:", commandTimeoutMs: COMMAND_TIMEOUT_MS };
  const before = payments(
    new RedisIdempotencyStore({ ...options, client: await connect(kind, servers.primary.url), replicas }),
    runs,
    unacknowledged,
  );
  const first = await payAll(before, writes, async (done) => {
    if (done === cutAfter) await servers.replica.command("REPLICAOF", "127.0.0.1", deadPort);
  });
  await servers.failover();
  const after = payments(new RedisIdempotencyStore({ ...options, client: await connect(kind, servers.replica.url) }), runs, unacknowledged);
  const second = await payAll(after, writes);
  await new Promise((resolve) => setTimeout(resolve, LEASE_MS));
  const third = await payAll(after, writes);
  const twice = [...runs].filter(([, count]) => count > 1).map(([key]) => key);
  return { twice, first, second, third, unacknowledged };
}

describe("the replicas option", () => {
  const client = createClient({ url: "redis://127.0.0.1:1" }); // never connected: options are checked first
  it.each([
    ["replicas", 1],
    ["replicas", null],
    ["replicas.count", { count: 0, timeoutMs: 10 }],
    ["replicas.count", { count: 1.5, timeoutMs: 10 }],
    ["replicas.timeoutMs", { count: 1, timeoutMs: 0 }],
    ["replicas.timeoutMs", { count: 1 }],
    ["replicas.inDoubtMs", { count: 1, timeoutMs: 10, inDoubtMs: 0 }],
    ["replicas.inDoubtMs", { count: 1, timeoutMs: 10, inDoubtMs: 1.5 }],
    ["replicas.inDoubtMs", { count: 1, timeoutMs: 10, inDoubtMs: "1d" }],
    ["replicas.extra", { count: 1, timeoutMs: 10, extra: true }],
  ])("rejects %s = %j with InvalidOptionError naming it", (option, replicas) => {
    expect(() => new RedisIdempotencyStore({ client, replicas: replicas as never })).toThrow(
      expect.objectContaining({ name: "InvalidOptionError", option }),
    );
  });
  it("refuses a cluster client (WAIT has no key to route by)", () => {
    const cluster = { isCluster: true, status: "ready", options: {}, call: () => Promise.resolve(null) };
    expect(() => new RedisIdempotencyStore({ client: cluster, replicas: { count: 1, timeoutMs: 10 } })).toThrow(
      expect.objectContaining({ option: "replicas" }),
    );
  });
});

for (const kind of ["node-redis", "ioredis"] as const) {
  describe.skipIf(probe === undefined)(`failover with a primary and a replica (${kind})`, { timeout: 120_000 }, () => {
    it("replicas: { count: 1 } with the replica paused: a write does not run (STORE_UNAVAILABLE), and its lock is released", async () => {
      const servers = await replication();
      const client = await connect(kind, servers.primary.url);
      const store = new RedisIdempotencyStore({
        client,
        prefix: "p:",
        commandTimeoutMs: COMMAND_TIMEOUT_MS,
        replicas: { count: 1, timeoutMs: 500 },
      });
      const runs = new Map<string, number>();
      const pay = payments(store, runs, new Set());
      expect(await pay("up")).toMatchObject({ status: "success" });
      servers.replica.pause();
      await expect(store.begin("k", "fp", 10_000)).rejects.toBeInstanceOf(RedisReplicasError);
      expect(await pay("paused")).toMatchObject({ status: "reflect", error: { code: "STORE_UNAVAILABLE" } });
      expect(runs.get("paused")).toBeUndefined();
      await store.ownerReleases.settled();
      servers.replica.resume();
      // Released: the key is free at once, not held for its 10 s lease.
      expect(await store.begin("k", "fp", 10_000)).toMatchObject({ status: "acquired" });
      expect(await pay("paused")).toMatchObject({ status: "success" });
      expect(runs.get("paused")).toBe(1);
    });

    it("replicas: a lock whose lease ended with no result is in doubt: refused (WRITE_IN_DOUBT), never run again; its holder's late result still lands", async () => {
      const servers = await replication();
      const client = await connect(kind, servers.primary.url);
      const lease = 150;
      const store = new RedisIdempotencyStore({
        client,
        prefix: "d:",
        commandTimeoutMs: COMMAND_TIMEOUT_MS,
        // Long enough that a loaded machine's slow WAITs never let it end within this test.
        replicas: { count: 1, timeoutMs: 1_000, inDoubtMs: 60_000 },
      });
      // A holder that stopped after its lock (a killed process): its lease ends with no result.
      const stopped = await store.begin("stopped", "fp", lease);
      expect(stopped).toMatchObject({ status: "acquired" });
      const late = await store.begin("late", "fp", lease);
      await new Promise((resolve) => setTimeout(resolve, lease + 50));
      expect(await store.begin("stopped", "fp", lease)).toEqual({ status: "in_doubt", fingerprint: "fp" });
      // A holder slower than its lease still completes its own write: nobody else could take it.
      if (late.status !== "acquired") throw new Error("unreachable");
      expect(await store.complete("late", late.token, { paid: true }, 60_000)).toBe(true);
      expect(await store.begin("late", "fp", lease)).toMatchObject({ status: "completed", value: { paid: true } });

      // Through the plugin: a process that ran the write and stopped before its result reached
      // Redis (its completion never sent), then another process asked for the same write.
      let runs = 0;
      const payWith = (idempotencyStore: RedisIdempotencyStore | object) => {
        const plugin = RetryReflectPlugin.create({
          toolEffects: { pay: "write" },
          idempotency: { store: idempotencyStore as never, leaseMs: lease },
        });
        return plugin.execute({ toolName: "pay", args: { idempotency_key: "k-1", order: 1 }, scope: "s" }, () => {
          runs++;
          return "paid";
        });
      };
      const stoppedProcess = { begin: store.begin.bind(store), complete: async () => true, release: async () => true };
      expect(await payWith(stoppedProcess)).toMatchObject({ status: "success", value: "paid" });
      await new Promise((resolve) => setTimeout(resolve, lease + 50));
      const again = await payWith(store);
      expect(again).toMatchObject({ status: "failed", reason: "not_recoverable", error: { code: "WRITE_IN_DOUBT", recoverable: false } });
      expect(runs).toBe(1);
      // After inDoubtMs the key is free again (counted from its own begin's reply, at the latest).
      const shortDoubt = new RedisIdempotencyStore({
        client,
        prefix: "d:",
        commandTimeoutMs: COMMAND_TIMEOUT_MS,
        replicas: { count: 1, timeoutMs: 1_000, inDoubtMs: 300 },
      });
      expect(await shortDoubt.begin("expires", "fp", lease)).toMatchObject({ status: "acquired" });
      await new Promise((resolve) => setTimeout(resolve, lease + 300 + 50));
      expect(await shortDoubt.begin("expires", "fp", lease)).toMatchObject({ status: "acquired" });
    });

    it(`without replicas: a failover that lost the last writes runs many of ${WRITES} writes twice (the README's stated risk)`, async () => {
      const round = await failoverRound(kind, undefined, WRITES, WRITES / 3);
      console.log(`[failover ${kind}] without replicas: ${round.twice.length} of ${WRITES} ran twice`, { ...round, twice: undefined });
      // Every write completed after the cut, acknowledged to its caller, runs again on the new primary.
      expect(round.twice.length).toBeGreaterThan(WRITES / 3);
      expect(round.unacknowledged.size).toBe(0);
    });

    it(`replicas: { count: 1 }: the same failover runs none of ${REPLICATED_WRITES} writes twice`, async () => {
      // WAIT blocks the connection it is sent on: a short timeout keeps the failed begins quick.
      const round = await failoverRound(kind, { count: 1, timeoutMs: 5 }, REPLICATED_WRITES, REPLICATED_WRITES / 2);
      console.log(`[failover ${kind}] replicas 1: ${round.twice.length} of ${REPLICATED_WRITES} ran twice`, {
        ...round,
        twice: round.twice.length,
      });
      // Writes after the cut did not run (the replica did not have their locks).
      expect(round.first["reflect:STORE_UNAVAILABLE"]).toBeGreaterThan(0);
      // A write running at the cut, whose completion could not reach the replica (its caller got a
      // store_error), is in doubt on the new primary once its lease is over: refused, not run again.
      expect(round.twice).toEqual([]);
      expect(round.unacknowledged.size).toBeLessThanOrEqual(IN_FLIGHT);
      const inDoubt = Object.entries(round.third)
        .filter(([label]) => label.startsWith("failed:not_recoverable"))
        .reduce((sum, [, count]) => sum + count, 0);
      // Only a write in flight at the cut can be in doubt (one per worker): one whose completion was
      // lost, or one whose lock reached the replica while its WAIT did not see it (it did not run,
      // and its release stayed on the old primary). Every other key succeeds: ran once, or replayed.
      expect(inDoubt).toBeLessThanOrEqual(IN_FLIGHT);
      expect((round.third.success ?? 0) + inDoubt).toBe(REPLICATED_WRITES);
    });
  });
}
