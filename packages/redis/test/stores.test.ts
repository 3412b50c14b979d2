import { InvalidOptionError, RetryReflectPlugin } from "@retry-reflect/core";
import type { RetryReflectEvent } from "@retry-reflect/core/events";
import { createFakeClock } from "@retry-reflect/core/testing";
import Redis from "ioredis";
import Redis50 from "ioredis-5.0";
import Redis6 from "ioredis-6";
import { createClient } from "redis";
import { createClient as createClient50 } from "redis-5.0";
import { createClient as createClient6 } from "redis-6";
import { afterAll, afterEach, describe, expect, it, vi } from "vitest";
import { RedisCircuitBreakerStore, RedisIdempotencyStore, redisStores } from "../src/index.js";
import { type RedisServer, startRedis } from "./helpers/redis-server.js";

// The stores in one process against a real redis-server: two plugins with their own clients stand
// for two replicas. Faults are injected into the server (stopped, paused, scripts flushed) while
// calls run. The local view's clock is a fake one; the server's clock is real, so an open time
// passes by ageing the record on the server (`age`), not by waiting.

const redis = await startRedis();
afterAll(() => redis?.stop());

// The devDependencies (node-redis 5.12, ioredis 5.11) and the ends of the peer ranges, as
// devDependency aliases: node-redis 5.0 and 6, ioredis 5.0 and 6.
const KINDS = ["node-redis", "node-redis 5.0", "node-redis 6", "ioredis", "ioredis 5.0", "ioredis 6"] as const;
type Kind = (typeof KINDS)[number];
// The versions' types differ in details this file does not use: each typed as the devDependency's.
const IOREDIS: Partial<Record<Kind, typeof Redis>> = {
  ioredis: Redis,
  "ioredis 5.0": Redis50 as unknown as typeof Redis,
  "ioredis 6": Redis6 as unknown as typeof Redis,
};
const NODE_REDIS: Partial<Record<Kind, typeof createClient>> = {
  "node-redis": createClient,
  "node-redis 5.0": createClient50 as unknown as typeof createClient,
  "node-redis 6": createClient6 as unknown as typeof createClient,
};
const opened: Array<{ close(): unknown }> = [];
afterEach(async () => {
  await Promise.all(opened.splice(0).map((each) => each.close()));
});

async function connect(kind: Kind, url: string): Promise<unknown> {
  if (kind.startsWith("ioredis")) {
    const Client = IOREDIS[kind] as typeof Redis;
    const client = new Client(url, { enableOfflineQueue: false, maxRetriesPerRequest: 0, lazyConnect: true, retryStrategy: () => 20 });
    client.on("error", () => {});
    await client.connect();
    opened.push({ close: () => client.disconnect() });
    return client;
  }
  const create = NODE_REDIS[kind] as typeof createClient;
  const client = create({ url, disableOfflineQueue: true, socket: { reconnectStrategy: () => 20 } });
  client.on("error", () => {});
  await client.connect();
  opened.push({ close: () => (client.isOpen ? client.destroy() : undefined) });
  return client;
}

let prefixes = 0;

async function replica(kind: Kind, prefix: string, options: Parameters<typeof RetryReflectPlugin.create>[0] = {}, commandTimeoutMs = 200) {
  const server = redis as RedisServer;
  const client = await connect(kind, server.url);
  const clock = createFakeClock();
  const stores = redisStores({ client, prefix, commandTimeoutMs, clock });
  opened.push({ close: () => stores.close() });
  await stores.circuitBreaker.subscribed;
  const events: RetryReflectEvent[] = [];
  const plugin = RetryReflectPlugin.create({
    toolEffects: { pay: "write" },
    circuitBreakerThreshold: 3,
    circuitBreakerResetMs: 10_000,
    idempotency: { store: stores.idempotency },
    circuitBreakerStore: stores.circuitBreaker,
    observers: [{ onEvent: (event) => events.push(event) }],
    ...options,
  });
  let runs = 0;
  let scopes = 0;
  /** `held`: the tool does not answer until it settles (a probe that is still running). */
  const search = (result: "ok" | "fail", held?: Promise<void>) =>
    plugin.execute({ toolName: "search", args: {}, scope: `s${++scopes}` }, async () => {
      runs++;
      if (held !== undefined) await held;
      if (result === "fail") throw new Error("upstream exploded");
      return "ok";
    });
  const pay = (key: string, amount = 5) =>
    plugin.execute({ toolName: "pay", args: { idempotency_key: key, amount } }, async () => {
      runs++;
      return { paid: amount, key };
    });
  return { client, clock, stores, plugin, events, search, pay, runs: () => runs };
}

/** Moves a circuit's open time into the past on the server (the server's clock cannot be faked). */
async function age(store: RedisCircuitBreakerStore, tool: string, ms: number): Promise<void> {
  const server = redis as RedisServer;
  await server.command("HINCRBY", store.keyOf(tool), "opened", String(-ms));
}

type Replica = Awaited<ReturnType<typeof replica>>;

const until = async (check: () => boolean, timeoutMs = 5000) => {
  const started = Date.now();
  while (!check()) {
    if (Date.now() - started > timeoutMs) throw new Error("timed out waiting");
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
};

for (const kind of KINDS) {
  describe.skipIf(redis === undefined)(`the Redis stores (${kind})`, () => {
    it("the breaker: opens for both replicas at the threshold; one probe after the open time; a success closes it for both", async () => {
      const prefix = `st${++prefixes}:`;
      // Calls turned away at once (fail fast), not waiting for the circuit: see the test after this one.
      const a = await replica(kind, prefix, { waitForRecovery: false });
      const b = await replica(kind, prefix, { waitForRecovery: false });
      expect((await a.search("fail")).status).toBe("reflect");
      expect((await b.search("fail")).status).toBe("reflect");
      // The third failure, across both, opens it: the tool's own failure, to call again after the open time.
      expect(await a.search("fail")).toMatchObject({ status: "reflect", error: { code: "TOOL_FAILED", retryAfterMs: 10_000 } });
      expect(a.events.filter((event) => event.type === "circuit_opened")).toHaveLength(1);
      await until(() => b.plugin.circuits.state("search") === "open");
      const before = b.runs();
      expect(await b.search("ok")).toMatchObject({
        status: "reflect",
        error: { code: "CIRCUIT_OPEN", recoverable: true, retryAfterMs: 10_000 },
      });
      expect(b.runs()).toBe(before);

      await age(a.stores.circuitBreaker, "search", 10_000);
      const runsBefore = a.runs() + b.runs();
      await a.clock.advance(10_000);
      await b.clock.advance(10_000);
      // Four calls at once while the probe is still running (a call that comes after the probe
      // closed the circuit is rightly let through): exactly one runs, the others fail fast.
      let release!: () => void;
      const held = new Promise<void>((resolve) => (release = resolve));
      const ended: string[] = [];
      const probes = [a.search("ok", held), b.search("ok", held), a.search("ok", held), b.search("ok", held)].map((call) =>
        call.then((outcome) => {
          ended.push(outcome.status === "success" ? outcome.status : outcome.error.code);
          return outcome;
        }),
      );
      await until(() => ended.length === 3);
      expect(ended).toEqual(["CIRCUIT_OPEN", "CIRCUIT_OPEN", "CIRCUIT_OPEN"]);
      expect(a.runs() + b.runs()).toBe(runsBefore + 1);
      release();
      const outcomes = await Promise.all(probes);
      expect(outcomes.filter((outcome) => outcome.status === "success")).toHaveLength(1);
      await until(() => a.plugin.circuits.state("search") === "closed" && b.plugin.circuits.state("search") === "closed");
      expect((await b.search("ok")).status).toBe("success");
    });

    /** Opens `search` fleet-wide from `a` (3 failures), then lets its open time pass: on the server (aged) and in both local views. */
    async function openedThenDue(a: Replica, b: Replica, resetMs: number) {
      for (let i = 0; i < 3; i++) await a.search("fail");
      await until(() => b.plugin.circuits.state("search") === "open");
      await age(a.stores.circuitBreaker, "search", resetMs);
      await a.clock.advance(resetMs);
      await b.clock.advance(resetMs);
    }

    /** Starts a call of `search` on `a` that takes the probe and holds it until `release()`. */
    async function heldProbe(a: Replica) {
      let release!: () => void;
      const held = new Promise<void>((resolve) => (release = resolve));
      const runs = a.runs();
      const probe = a.search("ok", held);
      await until(() => a.runs() === runs + 1); // the probe is running
      expect(a.events.filter((event) => event.type === "circuit_half_opened")).toHaveLength(1);
      return { probe, release };
    }

    it("waiting for recovery, fleet-wide: a call on B that meets A's running probe waits for it (no run, no rejection), and runs once A's probe closes the circuit through Redis", async () => {
      const prefix = `st${++prefixes}:`;
      // The plugin's defaults (waitForRecovery, patienceMs 15 s): the probe's lease (resetMs, 10 s) fits in B's patience.
      const a = await replica(kind, prefix);
      const b = await replica(kind, prefix);
      await openedThenDue(a, b, 10_000);
      const { probe, release } = await heldProbe(a);
      let settled = false;
      const waiting = b.search("ok").finally(() => {
        settled = true;
      });
      try {
        await until(() => b.events.some((event) => event.type === "waiting_for_recovery"));
        // Redis told B that A's probe is running: B waits for it, for at most the probe's lease.
        const wait = b.events.find((event) => event.type === "waiting_for_recovery")?.fields;
        expect(wait).toMatchObject({ tool_name: "search" });
        expect(wait?.wait_ms).toBeGreaterThan(9_000);
        expect(wait?.wait_ms).toBeLessThanOrEqual(10_000);
        await new Promise((resolve) => setTimeout(resolve, 300));
        expect(settled).toBe(false);
        expect(b.runs()).toBe(0);
      } finally {
        release();
      }
      const released = Date.now();
      expect(await probe).toMatchObject({ status: "success" });
      // A's success closed the circuit in Redis; B heard the publish, and its waiting call ran at its next look (at most a second).
      expect(await waiting).toMatchObject({ status: "success", value: "ok", attempt: 1 });
      expect(Date.now() - released).toBeLessThan(2_000);
      expect(b.runs()).toBe(1);
      expect(a.runs()).toBe(4); // 3 failures and the probe: nothing else ran on A
      expect(b.events.filter((event) => event.type === "waiting_for_recovery")).toHaveLength(1);
      expect(b.events.some((event) => event.type === "call_rejected")).toBe(false);
      expect(b.plugin.circuits.state("search")).toBe("closed");
    });

    it("waiting for recovery, fleet-wide, with the default resetMs (60 s): a probe's lease longer than the patience still holds B's call for the probe's result, not a 60 s refusal", async () => {
      const prefix = `st${++prefixes}:`;
      const a = await replica(kind, prefix, { circuitBreakerResetMs: 60_000 });
      const b = await replica(kind, prefix, { circuitBreakerResetMs: 60_000 });
      await openedThenDue(a, b, 60_000);
      const { probe, release } = await heldProbe(a);
      let settled = false;
      const waiting = b.search("ok").finally(() => {
        settled = true;
      });
      try {
        await until(() => b.events.some((event) => event.type === "waiting_for_recovery"));
        await new Promise((resolve) => setTimeout(resolve, 300));
        // Before the fix: turned away at once, told "about 60 s", and its scope's next call held 60 s at the gate.
        expect(settled).toBe(false);
        expect(b.runs()).toBe(0);
      } finally {
        release();
      }
      expect(await probe).toMatchObject({ status: "success" });
      expect(await waiting).toMatchObject({ status: "success", value: "ok" });
      expect(b.runs()).toBe(1);
      expect(b.events.some((event) => event.type === "call_rejected")).toBe(false);
    });

    it("a success anywhere resets the shared count: failures on either side of it never add up to the threshold", async () => {
      const prefix = `st${++prefixes}:`;
      const a = await replica(kind, prefix);
      const b = await replica(kind, prefix);
      await a.search("fail");
      await a.search("fail");
      expect((await b.search("ok")).status).toBe("success"); // b read the failing row on first use: its success ends it at once
      expect((await b.search("fail")).status).toBe("reflect");
      expect((await a.search("ok")).status).toBe("success"); // a recorded failures: tells Redis at once
      expect((await b.search("fail")).status).toBe("reflect");
      expect((await b.search("fail")).status).toBe("reflect");
      expect(a.plugin.circuits.state("search")).toBe("closed");
    });

    it("healthy calls make no round trip: after the first call (one script reads the tool's circuit), 500 successes, no script run, no key in Redis", async () => {
      const prefix = `st${++prefixes}:`;
      const a = await replica(kind, prefix);
      const server = redis as RedisServer;
      await server.command("CONFIG", "RESETSTAT");
      await a.search("ok");
      expect(await server.command("INFO", "commandstats")).toMatch(/cmdstat_evalsha:calls=1,/);
      await server.command("CONFIG", "RESETSTAT");
      for (let i = 0; i < 500; i++) await a.search("ok");
      const stats = await server.command("INFO", "commandstats");
      expect(stats).not.toMatch(/cmdstat_(evalsha|eval):/);
      expect(await server.command("EVAL", `return #redis.call('KEYS', '${prefix}*')`, "0")).toBe(":0\r\n");
    });

    it("idempotency: a write runs once across replicas, replays with its value, and Redis holds no raw key", async () => {
      const prefix = `st${++prefixes}:`;
      const a = await replica(kind, prefix);
      const b = await replica(kind, prefix);
      const secretKey = "order-4242-secret";
      const first = await a.pay(secretKey);
      expect(first).toMatchObject({ status: "success", replayed: false, value: { paid: 5, key: secretKey } });
      const second = await b.pay(secretKey);
      expect(second).toMatchObject({ status: "success", replayed: true, value: { paid: 5, key: secretKey } });
      expect(b.runs()).toBe(0);
      const reused = await b.pay(secretKey, 500);
      expect(reused).toMatchObject({ status: "reflect", error: { code: "IDEMPOTENCY_KEY_REUSED" } });
      const server = redis as RedisServer;
      const keys = await server.command("KEYS", `${prefix}*`);
      expect(keys).toContain(`${prefix}idem:{`);
      expect(keys).not.toContain(secretKey);
    });

    it("SCRIPT FLUSH while calls run breaks nothing", async () => {
      const prefix = `st${++prefixes}:`;
      // 100 writes at once, each script sent again in full after the flush: on a loaded 2-core
      // machine some took over 200 ms (STORE_UNAVAILABLE, a timeout, not a NOSCRIPT), so a longer limit.
      const a = await replica(kind, prefix, {}, 2000);
      const server = redis as RedisServer;
      const writes = Array.from({ length: 50 }, (_, i) => a.pay(`k${i}`));
      await server.flushScripts();
      const more = Array.from({ length: 50 }, (_, i) => a.pay(`k${i + 50}`));
      const outcomes = await Promise.all([...writes, ...more]);
      expect(outcomes.filter((outcome) => outcome.status !== "success")).toEqual([]);
      await server.flushScripts();
      expect(await a.pay("k1")).toMatchObject({ status: "success", replayed: true });
    });

    it("Redis stopped mid-run: reads go on from the local view, writes fail closed without running, nothing waits past the limit; Redis back: all works", async () => {
      const prefix = `st${++prefixes}:`;
      const a = await replica(kind, prefix);
      const server = redis as RedisServer;
      expect((await a.pay("before")).status).toBe("success");
      await server.stop();
      try {
        const started = Date.now();
        expect((await a.search("ok")).status).toBe("success"); // closed circuit: no I/O
        const failedRead = await a.search("fail");
        expect(failedRead.status).toBe("reflect");
        const runsBefore = a.runs();
        const write = await a.pay("during");
        expect(write).toMatchObject({ status: "reflect", error: { code: "STORE_UNAVAILABLE" } });
        expect(a.runs()).toBe(runsBefore); // the write did not run
        expect(Date.now() - started).toBeLessThan(2000);
        const errors = a.events.filter((event) => event.type === "store_error").map((event) => event.fields.operation);
        expect(errors).toEqual(expect.arrayContaining(["record", "begin"]));
      } finally {
        await server.restart();
      }
      // The restarted server is empty: the clients reconnect by themselves.
      let after: Awaited<ReturnType<typeof a.pay>> | undefined;
      for (let i = 0; i < 100 && after?.status !== "success"; i++) {
        after = await a.pay(`after-${i}`);
        if (after.status !== "success") await new Promise((resolve) => setTimeout(resolve, 20));
      }
      expect(after?.status).toBe("success");
    });

    it("Redis paused (a hung server): a write fails closed after commandTimeoutMs, not later", async () => {
      const prefix = `st${++prefixes}:`;
      const a = await replica(kind, prefix);
      const server = redis as RedisServer;
      server.pause();
      try {
        const started = Date.now();
        const write = await a.pay("hung");
        const took = Date.now() - started;
        expect(write).toMatchObject({ status: "reflect", error: { code: "STORE_UNAVAILABLE" } });
        expect(took).toBeGreaterThanOrEqual(150);
        expect(took).toBeLessThan(1500);
      } finally {
        server.resume();
      }
    });
  });
}

describe.skipIf(redis === undefined)("the Redis stores' options", () => {
  it("fail early, naming the option and the value", async () => {
    const server = redis as RedisServer;
    const client = await connect("node-redis", server.url);
    expect(() => redisStores({ client: {} })).toThrow(InvalidOptionError);
    expect(() => redisStores({ client: {} })).toThrow(/`client`/);
    expect(() => new RedisIdempotencyStore({ client, prefix: "" })).toThrow(/`prefix`/);
    expect(() => new RedisCircuitBreakerStore({ client, commandTimeoutMs: 0 })).toThrow(/`commandTimeoutMs`.*0/);
    expect(() => redisStores({ client, prefx: "x" } as never)).toThrow(/prefx/);
    for (const bad of [0, 1.5, -1, Number.NaN, "100"]) {
      expect(() => new RedisCircuitBreakerStore({ client, maxFailingTools: bad as number })).toThrow(InvalidOptionError);
      expect(() => new RedisCircuitBreakerStore({ client, maxFailingTools: bad as number })).toThrow(/`maxFailingTools`/);
    }
    expect(() => redisStores({ client, maxFailingTools: 0 })).toThrow(/`maxFailingTools`.*0/);
  });

  it("close() ends both stores: the breaker's subscription and the idempotency store's releases (none is started after)", async () => {
    const server = redis as RedisServer;
    const client = await connect("node-redis", server.url);
    const stores = redisStores({ client, prefix: `close${++prefixes}:` });
    await stores.ready;
    await stores.close();
    stores.idempotency.ownerReleases.release("close:k", "owner-1", 30_000);
    expect(stores.idempotency.ownerReleases.pending).toBe(0);
  });

  it("warns when the server may evict keys (maxmemory-policy other than noeviction)", async () => {
    const evicting = await startRedis({ args: ["--maxmemory-policy", "allkeys-lru"] });
    try {
      const warn = vi.spyOn(process, "emitWarning").mockImplementation(() => {});
      const client = await connect("node-redis", (evicting as RedisServer).url);
      const stores = redisStores({ client });
      await until(() => warn.mock.calls.length > 0);
      expect(String(warn.mock.calls[0]?.[0])).toMatch(/allkeys-lru.*noeviction/);
      warn.mockRestore();
      await stores.close();
    } finally {
      await evicting?.stop();
    }
  });
});
