import { createServer, type Server, type Socket, connect as tcpConnect } from "node:net";
import { InvalidOptionError, RetryReflectPlugin } from "@retry-reflect/core";
import { Redis } from "ioredis";
import { createClient } from "redis";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { redisStores } from "../src/index.js";
import { type RedisServer, startRedis } from "./helpers/redis-server.js";

// A subscription connection dropped without a close (a NAT or load balancer that forgets an idle
// connection): nothing arrives on it and nothing says it is gone. The replica here reaches Redis
// through a TCP proxy that can go silent on one connection (it stops forwarding both ways and keeps
// the sockets open). The waits are real and short: the PING interval and its reply limit.

const redis = await startRedis();
afterAll(() => redis?.stop());

type Kind = "node-redis" | "ioredis";
const cleanups: Array<() => unknown> = [];
/** The proxies' ends, before the rest: a store closing over a still-silent connection waits for it (2 s, its limit). */
const proxies: Array<() => unknown> = [];
afterEach(async () => {
  for (const cleanup of proxies.splice(0)) await cleanup();
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});
let warnings: ReturnType<typeof vi.spyOn> | undefined;
beforeAll(() => {
  warnings = vi.spyOn(process, "emitWarning").mockImplementation(() => {});
});
afterAll(() => warnings?.mockRestore());

/** A proxy to `port`; `silence(n)` makes its n-th connection (from 0) forward nothing any more, silently. */
async function silentProxy(port: number): Promise<{ url: string; connections: () => number; silence: (n: number) => void }> {
  const pairs: Array<{ silent: boolean }> = [];
  const sockets: Socket[] = [];
  const server: Server = createServer((downstream) => {
    const pair = { silent: false };
    pairs.push(pair);
    const upstream = tcpConnect(port, "127.0.0.1");
    sockets.push(downstream, upstream);
    downstream.on("data", (chunk) => pair.silent || upstream.write(chunk));
    upstream.on("data", (chunk) => pair.silent || downstream.write(chunk));
    downstream.on("error", () => upstream.destroy());
    upstream.on("error", () => downstream.destroy());
    downstream.on("close", () => upstream.destroy());
    upstream.on("close", () => downstream.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  proxies.push(() => {
    for (const socket of sockets) socket.destroy();
    return new Promise<void>((resolve) => server.close(() => resolve()));
  });
  const address = server.address() as { port: number };
  return {
    url: `redis://127.0.0.1:${address.port}`,
    connections: () => pairs.length,
    silence: (n) => {
      (pairs[n] as { silent: boolean }).silent = true;
    },
  };
}

async function client(kind: Kind, url: string): Promise<unknown> {
  if (kind === "ioredis") {
    const connection = new Redis(url, { enableOfflineQueue: false, maxRetriesPerRequest: 0, lazyConnect: true });
    connection.on("error", () => {});
    await connection.connect();
    cleanups.push(() => connection.disconnect());
    return connection;
  }
  const connection = createClient({ url, disableOfflineQueue: true });
  connection.on("error", () => {});
  await connection.connect();
  cleanups.push(() => (connection.isOpen ? connection.destroy() : undefined));
  return connection;
}

async function replica(kind: Kind, url: string, prefix: string, subscriptionPingMs?: number) {
  const stores = redisStores({
    client: await client(kind, url),
    prefix,
    commandTimeoutMs: 2_000,
    ...(subscriptionPingMs === undefined ? {} : { subscriptionPingMs }),
  });
  cleanups.push(() => stores.close());
  await stores.ready;
  const plugin = RetryReflectPlugin.create({
    circuitBreakerThreshold: 3,
    circuitBreakerResetMs: 60_000,
    circuitBreakerStore: stores.circuitBreaker,
    // A call at an open circuit is turned away at once (the temporary CIRCUIT_OPEN text), not held for the probe.
    waitForRecovery: false,
    // A failing call's in-place retries (each one more failure towards the threshold) without backoffs waited in real time.
    initialBackoffMs: 1,
    maxBackoffMs: 1,
  });
  return plugin;
}

const until = async (check: () => boolean, timeoutMs: number): Promise<boolean> => {
  const started = Date.now();
  while (!check()) {
    if (Date.now() - started > timeoutMs) return false;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return true;
};

let prefixes = 0;

for (const kind of ["node-redis", "ioredis"] as const) {
  describe.skipIf(redis === undefined)(`a subscription connection that goes silent (${kind})`, { timeout: 30_000 }, () => {
    it("is pinged, found lost within the PING interval + its limit, and made again: the replica learns a circuit opened meanwhile", async () => {
      const server = redis as RedisServer;
      const prefix = `silent${++prefixes}:`;
      const proxy = await silentProxy(server.port);
      const b = await replica(kind, proxy.url, prefix, 200);
      // The client's connection first, then the subscription's duplicate.
      expect(proxy.connections()).toBe(2);
      let runs = 0;
      const search = (plugin: RetryReflectPlugin, scope: string, fail: boolean) =>
        plugin.execute({ toolName: "search", args: {}, scope }, async () => {
          runs++;
          if (fail) throw Object.assign(new Error("HTTP 503 Service Unavailable"), { status: 503 });
          return "ok";
        });
      expect(await search(b, "b0", false)).toMatchObject({ status: "success" }); // B uses the tool: its circuit is read on every resubscribe
      proxy.silence(1);
      const a = await replica(kind, server.url, prefix);
      for (let call = 0; call < 3; call++) await search(a, `a${call}`, true);
      expect(a.circuits.state("search")).toBe("open");
      // The publish went into the silent connection. Red before: B's view stayed closed for good.
      expect(await until(() => b.circuits.state("search") === "open", 6_000)).toBe(true);
      const before = runs;
      expect(await search(b, "b1", false)).toMatchObject({ status: "reflect", error: { code: "CIRCUIT_OPEN", recoverable: true } });
      expect(runs).toBe(before);
      expect(proxy.connections()).toBeGreaterThan(2); // a new subscription connection
    });

    it("subscriptionPingMs: 0 sends no PING (the silent connection stays, as before)", async () => {
      const server = redis as RedisServer;
      const prefix = `silent${++prefixes}:`;
      const proxy = await silentProxy(server.port);
      const b = await replica(kind, proxy.url, prefix, 0);
      await b.execute({ toolName: "search", args: {}, scope: "b0" }, async () => "ok");
      proxy.silence(1);
      const a = await replica(kind, server.url, prefix);
      for (let call = 0; call < 3; call++)
        await a.execute({ toolName: "search", args: {}, scope: `a${call}` }, async () => {
          throw Object.assign(new Error("HTTP 503"), { status: 503 });
        });
      expect(await until(() => b.circuits.state("search") === "open", 1_000)).toBe(false);
      expect(proxy.connections()).toBe(2);
    });
  });
}

describe("the subscriptionPingMs option", () => {
  const never = createClient({ url: "redis://127.0.0.1:1" }); // never connected: options are checked first
  it.each([-1, 1.5, "10", Number.NaN, 2 ** 31])("rejects %j with InvalidOptionError naming it", (value) => {
    expect(() => redisStores({ client: never, subscriptionPingMs: value as number })).toThrow(InvalidOptionError);
    expect(() => redisStores({ client: never, subscriptionPingMs: value as number })).toThrow(/subscriptionPingMs/);
  });
});
