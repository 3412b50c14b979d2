import { RetryReflectPlugin } from "@retry-reflect/core";
import { createFakeClock } from "@retry-reflect/core/testing";
import { Redis } from "ioredis";
import { createClient } from "redis";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { RECORD } from "../src/breaker-scripts.js";
import { type RedisStores, redisStores } from "../src/index.js";
import { type RedisServer, startRedis } from "./helpers/redis-server.js";

// The breaker store's subscription holds, and a replica learns the fleet's state: on first use of a
// tool, after every (re)subscribe, and when it starts before Redis does. Against a real
// redis-server of this file's own (it is stopped and restarted here); the clients are built as the
// README shows them. The waits are for the server and the clients' reconnects, polled briefly.

const redis = await startRedis();
afterAll(() => redis?.stop());

type Kind = "node-redis" | "ioredis";
const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});
// A store whose subscription cannot hold says so once per outage: expected here.
let warnings: ReturnType<typeof vi.spyOn> | undefined;
beforeAll(() => {
  warnings = vi.spyOn(process, "emitWarning").mockImplementation(() => {});
});
afterAll(() => warnings?.mockRestore());

/** The client as packages/redis/README.md's setup builds it (connect not awaited: Redis may be down). */
function readmeClient(kind: Kind, url: string): unknown {
  if (kind === "ioredis") {
    const client = new Redis(url, { enableOfflineQueue: false, maxRetriesPerRequest: 0 });
    client.on("error", () => {});
    cleanups.push(() => client.disconnect());
    return client;
  }
  const client = createClient({ url, disableOfflineQueue: true, socket: { reconnectStrategy: (retries) => Math.min(retries * 50, 1000) } });
  client.on("error", () => {});
  client.connect().catch(() => {});
  cleanups.push(() => (client.isOpen ? client.destroy() : undefined));
  return client;
}

let prefixes = 0;

/** A call turned away at an open circuit without running: the temporary text, to call again after the open time. */
const TURNED_AWAY = { status: "reflect", error: { code: "CIRCUIT_OPEN", recoverable: true } };

function replica(kind: Kind, prefix: string) {
  const server = redis as RedisServer;
  const stores: RedisStores = redisStores({
    client: readmeClient(kind, server.url),
    prefix,
    commandTimeoutMs: 500,
    clock: createFakeClock(),
  });
  cleanups.push(() => stores.close());
  const plugin = RetryReflectPlugin.create({
    toolEffects: { pay: "write" },
    circuitBreakerThreshold: 2,
    circuitBreakerResetMs: 60_000,
    // A call at an open circuit is turned away at once (the temporary CIRCUIT_OPEN text), not held for the probe.
    waitForRecovery: false,
    idempotency: { store: stores.idempotency },
    circuitBreakerStore: stores.circuitBreaker,
  });
  let runs = 0;
  let scopes = 0;
  const search = (result: "ok" | "fail") =>
    plugin.execute({ toolName: "search", args: {}, scope: `s${++scopes}` }, async () => {
      runs++;
      if (result === "fail") throw new Error("upstream exploded");
      return "ok";
    });
  const pay = (key: string) => plugin.execute({ toolName: "pay", args: { idempotency_key: key, amount: 5 } }, async () => ++runs);
  return { stores, plugin, search, pay, runs: () => runs };
}

const until = async (check: () => boolean, timeoutMs = 5000) => {
  const started = Date.now();
  while (!check()) {
    if (Date.now() - started > timeoutMs) throw new Error(`timed out after ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
};

/** Settles within `ms`, or says it did not. */
const within = <T>(promise: Promise<T> | undefined, ms: number) =>
  Promise.race([Promise.resolve(promise).then(() => "settled"), new Promise((resolve) => setTimeout(() => resolve("pending"), ms))]);

/** Opens a circuit as another replica would, its publish sent on a channel nobody hears (a publish this process missed). */
async function openUnheard(stores: RedisStores, tool: string): Promise<void> {
  const key = stores.circuitBreaker.keyOf(tool);
  await (redis as RedisServer).command("EVAL", RECORD.source, "1", key, "nobody-listens", tool, "f", "0", "1", "60000", "0", "0");
}

for (const kind of ["node-redis", "ioredis"] as const) {
  describe.skipIf(redis === undefined)(`the breaker's subscription (${kind}, the README's setup)`, { timeout: 30_000 }, () => {
    it("made while the client is still connecting: the subscription holds (stores.ready resolves) and hears a circuit opened elsewhere", async () => {
      const prefix = `sub${++prefixes}:`;
      const b = replica(kind, prefix); // the client has not connected yet
      expect(await within(b.stores.ready, 5000)).toBe("settled");
      const a = replica(kind, prefix);
      await a.stores.ready;
      await a.search("fail");
      await a.search("fail"); // opens it
      await until(() => b.plugin.circuits.state("search") === "open");
      expect(await b.search("ok")).toMatchObject(TURNED_AWAY);
      expect(b.runs()).toBe(0);
    });

    it("a replica started after a circuit opened: 20 calls at once on its first use are rejected, the dead tool never runs; one script read the state", async () => {
      const prefix = `sub${++prefixes}:`;
      const a = replica(kind, prefix);
      await a.stores.ready;
      await a.search("fail");
      await a.search("fail");
      const b = replica(kind, prefix);
      await b.stores.ready;
      await (redis as RedisServer).command("CONFIG", "RESETSTAT");
      const outcomes = await Promise.all(Array.from({ length: 20 }, () => b.search("ok")));
      for (const outcome of outcomes) expect(outcome).toMatchObject(TURNED_AWAY);
      expect(b.runs()).toBe(0);
      const stats = await (redis as RedisServer).command("INFO", "commandstats");
      expect(Number(/cmdstat_evalsha:calls=(\d+)/.exec(stats)?.[1] ?? 0) + Number(/cmdstat_eval:calls=(\d+)/.exec(stats)?.[1] ?? 0)).toBe(
        1,
      );
    });

    it("a replica whose first calls come before its client has connected: they wait for it (up to commandTimeoutMs) and are rejected, the dead tool never runs", async () => {
      const prefix = `sub${++prefixes}:`;
      const a = replica(kind, prefix);
      await a.stores.ready;
      await a.search("fail");
      await a.search("fail");
      const b = replica(kind, prefix); // its client is connecting: the calls below go out at once
      const outcomes = await Promise.all(Array.from({ length: 20 }, () => b.search("ok")));
      for (const outcome of outcomes) expect(outcome).toMatchObject(TURNED_AWAY);
      expect(b.runs()).toBe(0);
    });

    it("after the subscription connection drops and comes back, a circuit opened elsewhere meanwhile is learned", async () => {
      const prefix = `sub${++prefixes}:`;
      const b = replica(kind, prefix);
      await b.stores.ready;
      expect(await b.search("ok")).toMatchObject({ status: "success" }); // a tool b uses
      await openUnheard(b.stores, "search");
      await (redis as RedisServer).command("CLIENT", "KILL", "TYPE", "pubsub");
      await until(() => b.plugin.circuits.state("search") === "open");
      expect(await b.search("ok")).toMatchObject(TURNED_AWAY);
      expect(b.runs()).toBe(1);
    });

    it("a row's first failure is heard by every replica; a success there ends the row: one script for 20 calls at once, which do not wait for it (server paused: they end before commandTimeoutMs)", async () => {
      const server = redis as RedisServer;
      const prefix = `sub${++prefixes}:`;
      const [a, b] = [replica(kind, prefix), replica(kind, prefix)];
      await Promise.all([a.stores.ready, b.stores.ready]);
      await b.search("ok"); // b's first call: it reads the circuit (closed, no row)
      const key = b.stores.circuitBreaker.keyOf("search");
      for (const paused of [false, true]) {
        await a.search("fail");
        await until(() => b.stores.circuitBreaker.failingTools === 1);
        await server.command("CONFIG", "RESETSTAT");
        if (paused) server.pause();
        const started = performance.now();
        try {
          const outcomes = await Promise.all(Array.from({ length: 20 }, () => b.search("ok")));
          expect(outcomes.every((outcome) => outcome.status === "success")).toBe(true);
          if (paused) expect(performance.now() - started).toBeLessThan(250);
        } finally {
          if (paused) server.resume();
        }
        await until(() => b.stores.circuitBreaker.failingTools === 0);
        if (!paused) expect(await server.command("INFO", "commandstats")).toMatch(/cmdstat_evalsha:calls=1,/);
        await vi.waitFor(async () => expect(await server.command("EXISTS", key)).toBe(":0\r\n"), { timeout: 2000, interval: 10 }); // the row ended
      }
    });

    it("started while Redis is down: reads run, writes fail closed; Redis comes: stores.ready resolves, the subscription holds, writes run", async () => {
      const server = redis as RedisServer;
      const prefix = `sub${++prefixes}:`;
      await server.stop();
      let b: ReturnType<typeof replica>;
      try {
        b = replica(kind, prefix);
        expect(await b.search("ok")).toMatchObject({ status: "success" });
        expect(await b.pay("down-1")).toMatchObject({ status: "reflect", error: { code: "STORE_UNAVAILABLE" } });
        expect(b.runs()).toBe(1);
        expect(await within(b.stores.ready, 300)).toBe("pending");
      } finally {
        await server.restart();
      }
      expect(await within(b.stores.ready, 10_000)).toBe("settled");
      const a = replica(kind, prefix);
      await a.stores.ready;
      await a.search("fail");
      await a.search("fail");
      await until(() => b.plugin.circuits.state("search") === "open");
      expect(await b.pay("up-1")).toMatchObject({ status: "success" });
    });
  });
}
