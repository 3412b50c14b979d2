import { type RetryReflectOptions, RetryReflectPlugin } from "@retry-reflect/core";
import type { RetryReflectEvent } from "@retry-reflect/core/events";
import { createFakeClock } from "@retry-reflect/core/testing";
import Redis from "ioredis";
import { createClient } from "redis";
import { afterAll, afterEach, describe, expect, it, vi } from "vitest";
import { redisStores } from "../src/index.js";
import { type RedisServer, startRedis } from "./helpers/redis-server.js";

// The local view stands in (DESIGN Part 3, "Redis in production"), against a real redis-server of
// this file's own, stopped or paused (SIGSTOP: a hung server) while a dead tool is called: the
// plugin's local breaker opens at the threshold on its own, and once Redis answers again and the
// local open time is over, the fleet's state in Redis rules again. The plugin and the store share
// a fake clock (the local open time passes by advancing it); the waits are for the server and the
// clients' reconnects, polled briefly.

const redis = await startRedis();
afterAll(() => redis?.stop());

type Kind = "node-redis" | "ioredis";
const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  const server = redis as RedisServer;
  if (server !== undefined && server.pid === 0) await server.restart();
});
// A subscription lost with the server says so: expected here.
vi.spyOn(process, "emitWarning").mockImplementation(() => {});

const COMMAND_TIMEOUT_MS = 100;
let prefixes = 0;

async function connect(kind: Kind, url: string): Promise<{ client: unknown; ping(): Promise<unknown> }> {
  if (kind === "ioredis") {
    const client = new Redis(url, { enableOfflineQueue: false, maxRetriesPerRequest: 0, lazyConnect: true, retryStrategy: () => 20 });
    client.on("error", () => {});
    await client.connect();
    cleanups.push(() => client.disconnect());
    return { client, ping: () => client.ping() };
  }
  const client = createClient({ url, disableOfflineQueue: true, socket: { reconnectStrategy: () => 20 } });
  client.on("error", () => {});
  await client.connect();
  cleanups.push(() => (client.isOpen ? client.destroy() : undefined));
  return { client, ping: () => client.ping() };
}

/**
 * A plugin over this file's server, on a fake clock; `options` go to the plugin (a breaker of 3
 * failures, 10 s, by default; a call at an open circuit turned away at once, not held for the probe).
 */
async function replica(kind: Kind, options: RetryReflectOptions = {}) {
  const server = redis as RedisServer;
  const prefix = `out${++prefixes}:`;
  const { client, ping } = await connect(kind, server.url);
  const clock = createFakeClock();
  const stores = redisStores({ client, prefix, commandTimeoutMs: COMMAND_TIMEOUT_MS, clock });
  cleanups.push(() => stores.close());
  await stores.circuitBreaker.subscribed;
  const events: RetryReflectEvent[] = [];
  const plugin = RetryReflectPlugin.create({
    clock,
    circuitBreakerThreshold: 3,
    circuitBreakerResetMs: 10_000,
    waitForRecovery: false,
    circuitBreakerStore: stores.circuitBreaker,
    observers: [{ onEvent: (event) => events.push(event) }],
    ...options,
  });
  let runs = 0;
  let scopes = 0;
  const deadTool = () =>
    plugin.execute({ toolName: "search", args: {}, scope: `s${++scopes}` }, async () => {
      runs++;
      throw new Error("upstream exploded");
    });
  const count = (type: string) => events.filter((event) => event.type === type).length;
  /** The circuit's fields in Redis (raw RESP of `HGET`), read over a connection of its own. */
  const fleet = async (field: "state" | "failures") => {
    const reply = await server.command("HGET", stores.circuitBreaker.keyOf("search"), field);
    return reply.split("\r\n")[1];
  };
  return { clock, stores, plugin, events, count, deadTool, fleet, ping, runs: () => runs };
}

/** Polls `ready` (a reconnect, a server's answer) for at most 5 s. */
async function until(ready: () => Promise<boolean>): Promise<void> {
  for (let i = 0; i < 250; i++) {
    if (await ready().catch(() => false)) return;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error("not ready within 5 s");
}

/** A call turned away at an open circuit without running: the temporary text, to call again after the open time. */
const TURNED_AWAY = { status: "reflect", error: { code: "CIRCUIT_OPEN", recoverable: true } };

/** 20 calls of the dead tool: it runs 3 times, the circuit opens once (locally), store_error says why. */
async function twentyCallsOpenLocally(a: Awaited<ReturnType<typeof replica>>) {
  const outcomes = [];
  for (let i = 0; i < 20; i++) outcomes.push(await a.deadTool());
  expect(a.runs()).toBe(3);
  expect(a.count("circuit_opened")).toBe(1);
  expect(a.events.find((event) => event.type === "circuit_opened")?.fields).toMatchObject({ tool_name: "search", failures: 3 });
  const errors = a.events.filter((event) => event.type === "store_error").map((event) => event.fields.operation);
  // Each failure's record lost (a first use of the tool may also ask Redis, and fail, on acquire).
  expect(errors.filter((operation) => operation === "record")).toHaveLength(3);
  expect(errors.every((operation) => operation === "record" || operation === "acquire")).toBe(true);
  // The third failure opens it (the tool's own failure, to call again after the open time); the 17 calls after are turned away.
  expect(outcomes[2]).toMatchObject({ status: "reflect", error: { code: "TOOL_FAILED", retryAfterMs: 10_000 } });
  for (const outcome of outcomes.slice(3)) expect(outcome).toMatchObject(TURNED_AWAY);
  expect(a.plugin.circuits.state("search")).toBe("open");
}

/** The local open time is over and Redis answers: the failures count in Redis, which opens the circuit fleet-wide. */
async function fleetCountsAgain(a: Awaited<ReturnType<typeof replica>>) {
  expect((await a.deadTool()).status).toBe("reflect"); // the local probe: its failure is Redis's to count
  expect(await a.fleet("failures")).toBe("1");
  expect(a.plugin.circuits.state("search")).toBe("closed");
  expect((await a.deadTool()).status).toBe("reflect");
  expect(await a.deadTool()).toMatchObject({ status: "reflect", error: { code: "TOOL_FAILED", retryAfterMs: 10_000 } }); // the third opens it
  expect(await a.fleet("state")).toBe("open");
  expect(a.count("circuit_opened")).toBe(2);
  expect(a.runs()).toBe(6);
}

for (const kind of ["node-redis", "ioredis"] as const) {
  describe.skipIf(redis === undefined)(`the local view stands in while Redis cannot answer (${kind})`, () => {
    it("Redis stopped: the circuit opens at the threshold (3 runs of 20 calls); Redis back: open until the local reset, then Redis counts again", async () => {
      const server = redis as RedisServer;
      const a = await replica(kind);
      await server.stop();
      try {
        await twentyCallsOpenLocally(a);
      } finally {
        await server.restart();
      }
      await until(async () => (await a.ping()) === "PONG");
      await a.clock.advance(5_000);
      expect(await a.deadTool()).toMatchObject({ ...TURNED_AWAY, error: { ...TURNED_AWAY.error, retryAfterMs: 5_000 } });
      expect(a.runs()).toBe(3);
      await a.clock.advance(5_000);
      await fleetCountsAgain(a);
    });

    it("Redis stopped: the retry budget is judged here (store_error budget); back, the retries taken meanwhile count fleet-wide", async () => {
      const server = redis as RedisServer;
      const { plugin, stores, events, ping } = await replica(kind, {
        maxRetries: 10,
        initialBackoffMs: 0,
        circuitBreakerThreshold: 100,
        retryBudget: { ratio: 0, minPerSecond: 0.3, windowMs: 10_000 }, // 3 retries per window
      });
      let runs = 0;
      const unavailable = () =>
        plugin.execute({ toolName: "search", args: {}, scope: `s${runs}` }, async () => {
          runs++;
          throw Object.assign(new Error("503 Service Unavailable"), { status: 503 });
        });
      await server.stop();
      try {
        const outcome = await unavailable();
        expect(outcome.status === "reflect" && outcome.error.code).toBe("RETRY_BUDGET_SPENT");
        expect(runs).toBe(4); // the first attempt and the 3 retries this process allows alone
        const budgetErrors = events.filter((event) => event.type === "store_error" && event.fields.operation === "budget");
        expect(budgetErrors.length).toBeGreaterThanOrEqual(1);
      } finally {
        await server.restart();
      }
      await until(async () => (await ping()) === "PONG");
      // Back: the 3 retries go to Redis with the next share, and spend the fleet's budget there.
      const again = await unavailable();
      expect(again.status === "reflect" && again.error.code).toBe("RETRY_BUDGET_SPENT");
      expect(runs).toBe(5);
      // The tool's window in Redis (raw RESP of HGETALL: field, value, ...): 3 retries, 2 calls.
      const raw = await server.command("HGETALL", stores.circuitBreaker.budgetKeyOf("search"));
      const items = raw.split("\r\n").filter((line) => line !== "" && !/^[*$]/.test(line));
      const sum = (kind: string) =>
        items.reduce((total, item, index) => (index % 2 === 0 && item.startsWith(kind) ? total + Number(items[index + 1]) : total), 0);
      expect([sum("r"), sum("c")]).toEqual([3, 2]);
    });

    it("Redis hung (SIGSTOP): 3 failures wait the command timeout, the 17 calls after wait for nothing; resumed: after the local reset, Redis's open circuit rejects", async () => {
      const server = redis as RedisServer;
      const a = await replica(kind);
      server.pause();
      let took: number;
      try {
        const started = Date.now();
        await twentyCallsOpenLocally(a);
        took = Date.now() - started;
      } finally {
        server.resume();
      }
      expect(took).toBeGreaterThanOrEqual(3 * COMMAND_TIMEOUT_MS - 10);
      expect(took).toBeLessThan(3 * COMMAND_TIMEOUT_MS + 1000);
      // The three records sent while it hung run when it resumes: Redis opens the circuit, and says so.
      await until(async () => a.stores.circuitBreaker.state("search") === "open");
      expect(await a.fleet("state")).toBe("open");
      await a.clock.advance(10_000); // the local open time is over; Redis's (on the server's clock) is not
      const outcome = await a.deadTool();
      expect(outcome).toMatchObject(TURNED_AWAY);
      expect(a.runs()).toBe(3);
      expect(a.plugin.circuits.state("search")).toBe("open");
      expect(a.plugin.circuits.retryAfterMs("search")).toBeGreaterThan(5_000);
      expect(a.count("circuit_opened")).toBe(1);
    });
  });
}
