// The client layer against a real redis-server, for node-redis v5 (RESP2 and RESP3) and ioredis,
// configured as the README tells users to, and with the clients' defaults; node-redis 5.0 and 6 and
// ioredis 5.0 and 6 (the ends of the peer ranges, devDependency aliases) configured as the README says.
import Redis from "ioredis";
import Redis50 from "ioredis-5.0";
import Redis6 from "ioredis-6";
import { createClient, createClientPool, createCluster } from "redis";
import { createClient as createClient50 } from "redis-5.0";
import { createClient as createClient6, createCluster as createCluster6 } from "redis-6";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { scriptClient } from "../src/detect-client.js";
import type { IoRedisLike } from "../src/ioredis-transport.js";
import { script } from "../src/lua-script.js";
import type { NodeRedisLike } from "../src/node-redis-transport.js";
import { RedisTimeoutError, RedisUnavailableError } from "../src/redis-errors.js";
import type { ScriptClient } from "../src/script-client.js";
import { type RedisServer, startRedis } from "./helpers/redis-server.js";

const redis = await startRedis();
afterAll(() => redis?.stop());

const LIMIT_MS = 50;
const ANSWER_MS = 5000;
// Upper bounds leave room for a loaded CI machine (2 cores, other test files running meanwhile).
const SLACK_MS = 400;
/** "At once": no round trip to Redis, no timer; just the promise settling. */
const AT_ONCE_MS = 50;

/** A connected client of one kind, how to see that it is ready, and how to close it. */
interface Connected {
  readonly client: unknown;
  isReady(): boolean;
  close(): void;
}

type Factory = (url: string) => Promise<Connected>;

async function nodeRedis(url: string, options: Record<string, unknown>, create = createClient): Promise<Connected> {
  const client = create({ url, ...options });
  client.on("error", () => {}); // node-redis throws an `error` event that has no listener
  await client.connect();
  return {
    client,
    isReady: () => client.isReady,
    close: () => {
      if (client.isOpen) client.destroy();
    },
  };
}

async function ioredis(url: string, options: Record<string, unknown>, Client = Redis): Promise<Connected> {
  const client = new Client(url, { lazyConnect: true, ...options });
  client.on("error", () => {});
  await client.connect();
  return { client, isReady: () => client.status === "ready", close: () => client.disconnect() };
}

// As the README tells users: no offline queue, a short reconnect backoff (and for ioredis, at most
// one retry of a command across reconnects).
const recommended: Record<string, Factory> = {
  "node-redis": (url) =>
    nodeRedis(url, { disableOfflineQueue: true, socket: { reconnectStrategy: (retries: number) => Math.min(20 * 2 ** retries, 200) } }),
  "node-redis (RESP3)": (url) =>
    nodeRedis(url, {
      RESP: 3,
      disableOfflineQueue: true,
      socket: { reconnectStrategy: (retries: number) => Math.min(20 * 2 ** retries, 200) },
    }),
  ioredis: (url) =>
    ioredis(url, { enableOfflineQueue: false, maxRetriesPerRequest: 1, retryStrategy: (times: number) => Math.min(20 * times, 200) }),
  "node-redis 5.0": (url) =>
    nodeRedis(
      url,
      { disableOfflineQueue: true, socket: { reconnectStrategy: (retries: number) => Math.min(20 * 2 ** retries, 200) } },
      createClient50 as unknown as typeof createClient,
    ),
  "node-redis 6": (url) =>
    nodeRedis(
      url,
      { disableOfflineQueue: true, socket: { reconnectStrategy: (retries: number) => Math.min(20 * 2 ** retries, 200) } },
      createClient6 as unknown as typeof createClient,
    ),
  "ioredis 5.0": (url) =>
    ioredis(
      url,
      { enableOfflineQueue: false, maxRetriesPerRequest: 1, retryStrategy: (times: number) => Math.min(20 * times, 200) },
      Redis50 as unknown as typeof Redis,
    ),
  "ioredis 6": (url) =>
    ioredis(
      url,
      { enableOfflineQueue: false, maxRetriesPerRequest: 1, retryStrategy: (times: number) => Math.min(20 * times, 200) },
      Redis6 as unknown as typeof Redis,
    ),
};

// The clients' defaults: node-redis queues offline forever, ioredis retries a command 20 times.
const defaults: Record<string, Factory> = {
  "node-redis": (url) => nodeRedis(url, {}),
  ioredis: (url) => ioredis(url, {}),
};

const echo = script("return ARGV[1]");
const setGet = script("redis.call('SET', KEYS[1], ARGV[1]); return redis.call('GET', KEYS[1])");

async function elapsed<T>(promise: Promise<T>): Promise<{ ms: number; error: unknown; value: T | undefined }> {
  const start = performance.now();
  try {
    const value = await promise;
    return { ms: performance.now() - start, error: undefined, value };
  } catch (error) {
    return { ms: performance.now() - start, error, value: undefined };
  }
}

function commandCalls(info: string, command: string): number {
  const match = new RegExp(`cmdstat_${command}:calls=(\\d+)`).exec(info);
  return match ? Number(match[1]) : 0;
}

async function waitReady(connected: Connected): Promise<void> {
  await vi.waitFor(() => expect(connected.isReady()).toBe(true), { timeout: 10_000, interval: 20 });
}

describe.skipIf(!redis)("scriptClient against redis-server", () => {
  const server = redis as RedisServer;
  let open: Connected[] = [];

  const connect = async (factory: Factory): Promise<Connected> => {
    const connected = await factory(server.url);
    open.push(connected);
    return connected;
  };

  afterEach(async () => {
    for (const connected of open) connected.close();
    open = [];
    // A test that stops or pauses the server leaves it running again.
    if (server.pid === 0) await server.restart();
  });

  describe.each(Object.entries(recommended))("%s, configured as the README says", (name, factory) => {
    let connected: Connected;
    /** A limit for a loaded machine (2 cores, test files in parallel): the commands that must answer. */
    let client: ScriptClient;
    /** The short limit the timeout tests measure against. */
    let quick: ScriptClient;

    beforeAll(async () => {
      connected = await factory(server.url);
      client = scriptClient(connected.client, ANSWER_MS);
      quick = scriptClient(connected.client, LIMIT_MS);
    });
    afterAll(() => connected.close());
    // After a test that stopped or paused the server, the client reconnects before the next test.
    beforeEach(() => waitReady(connected));

    it("is detected as its kind", () => {
      expect(client.kind).toBe(name.startsWith("ioredis") ? "ioredis" : "node-redis");
    });

    it("runs a script with keys and arguments (numbers sent as strings)", async () => {
      await expect(client.run(setGet, [`k:${name}`], ["v1"])).resolves.toBe("v1");
      const add = script("return tonumber(ARGV[1]) + tonumber(ARGV[2])");
      await expect(client.run(add, [], [40, "2"])).resolves.toBe(42);
      await expect(client.run(add, [], [Number.NaN, 1])).rejects.toThrow(TypeError);
    });

    it("runs a script again after SCRIPT FLUSH (EVALSHA gets NOSCRIPT, EVAL runs and caches it)", async () => {
      const flushed = script(`return 'flushed ${name}'`);
      await expect(client.run(flushed, [], [])).resolves.toBe(`flushed ${name}`);
      await server.flushScripts();
      expect(await server.command("SCRIPT", "EXISTS", flushed.sha)).toBe("*1\r\n:0\r\n");
      await server.command("CONFIG", "RESETSTAT");
      await expect(client.run(flushed, [], [])).resolves.toBe(`flushed ${name}`);
      const info = await server.command("INFO", "commandstats");
      expect(commandCalls(info, "evalsha")).toBe(1);
      expect(commandCalls(info, "eval")).toBe(1);
      expect(await server.command("SCRIPT", "EXISTS", flushed.sha)).toBe("*1\r\n:1\r\n");
      // Cached again: the next run is one EVALSHA.
      await server.command("CONFIG", "RESETSTAT");
      await expect(client.run(flushed, [], [])).resolves.toBe(`flushed ${name}`);
      expect(commandCalls(await server.command("INFO", "commandstats"), "eval")).toBe(0);
    });

    it("normalises replies: integers, strings, nil, false, status replies, nested arrays", async () => {
      await expect(client.run(script("return 7"), [], [])).resolves.toBe(7);
      await expect(client.run(script("return -3"), [], [])).resolves.toBe(-3);
      await expect(client.run(script("return 3.9"), [], [])).resolves.toBe(3); // Lua numbers become integers
      await expect(client.run(script("return 'héllo'"), [], [])).resolves.toBe("héllo");
      await expect(client.run(script("return nil"), [], [])).resolves.toBeNull();
      await expect(client.run(script("return false"), [], [])).resolves.toBeNull();
      await expect(client.run(script("return true"), [], [])).resolves.toBe(1);
      await expect(client.run(script("return redis.status_reply('OK')"), [], [])).resolves.toBe("OK");
      await expect(client.run(script("return {}"), [], [])).resolves.toEqual([]);
      await expect(client.run(script("return {1, 'two', false, {3, 'four', {5}}, redis.call('GET', 'missing')}"), [], [])).resolves.toEqual(
        [1, "two", null, [3, "four", [5]], null],
      );
      await expect(client.run(script("return ARGV"), [], ["a", 1, ""])).resolves.toEqual(["a", "1", ""]);
      await expect(client.run(script("return KEYS"), ["k1", "k2"], [])).resolves.toEqual(["k1", "k2"]);
    });

    it("passes an error reply from the script through as the client raised it (not as unavailable)", async () => {
      const failing = await elapsed(client.run(script("return redis.error_reply('MYERR boom')"), [], []));
      expect(failing.error).toBeInstanceOf(Error);
      expect((failing.error as Error).message).toMatch(/^MYERR boom/);
      expect(RedisUnavailableError.isInstance(failing.error)).toBe(false);
      const runtime = await elapsed(client.run(script("return redis.call('NOSUCHCOMMAND')"), [], []));
      expect((runtime.error as Error).message).toMatch(/^ERR/);
      expect(RedisTimeoutError.isInstance(runtime.error)).toBe(false);
      // The connection is still fine.
      await expect(client.run(echo, [], ["still ok"])).resolves.toBe("still ok");
    });

    it("rejects with RedisTimeoutError at the limit when the server hangs, and works again after it resumes", async () => {
      await expect(client.run(echo, [], ["before"])).resolves.toBe("before");
      server.pause();
      try {
        // Measured from before the call starts its timer (`elapsed` starts after its argument ran):
        // not before the limit (1 ms for the timer's granularity).
        const began = performance.now();
        const hung = await elapsed(quick.run(echo, [], ["while paused"]));
        const sinceCall = performance.now() - began;
        expect(hung.error).toBeInstanceOf(RedisTimeoutError);
        expect((hung.error as RedisTimeoutError).command).toBe("EVALSHA");
        expect((hung.error as RedisTimeoutError).timeoutMs).toBe(LIMIT_MS);
        expect((hung.error as Error).message).toBe(`Redis EVALSHA got no reply within ${LIMIT_MS} ms`);
        expect(sinceCall).toBeGreaterThanOrEqual(LIMIT_MS - 1);
        expect(hung.ms).toBeLessThan(LIMIT_MS + SLACK_MS);
        const publish = await elapsed(quick.publish("hung", "x"));
        expect(publish.error).toBeInstanceOf(RedisTimeoutError);
        expect((publish.error as RedisTimeoutError).command).toBe("PUBLISH");
      } finally {
        server.resume();
      }
      // The late replies to the timed-out commands are dropped: each new call gets its own reply.
      await expect(client.run(echo, [], ["after 1"])).resolves.toBe("after 1");
      await expect(client.run(echo, [], ["after 2"])).resolves.toBe("after 2");
    });

    it("rejects quickly when the server is stopped, never hangs, and works again on a new server", async () => {
      const subscribed: string[] = [];
      const unsubscribe = await client.subscribe(`drop:${name}`, (message) => subscribed.push(message));
      await server.stop();
      const down = await elapsed(quick.run(echo, [], ["down"]));
      expect(RedisUnavailableError.isInstance(down.error) || RedisTimeoutError.isInstance(down.error)).toBe(true);
      expect(down.ms).toBeLessThan(LIMIT_MS + SLACK_MS);
      // Once the client has seen the connection go, calls are refused at once, unsent.
      await vi.waitFor(() => expect(connected.isReady()).toBe(false), { timeout: 2000, interval: 5 });
      const refused = await elapsed(client.run(echo, [], ["refused"]));
      expect(refused.error).toBeInstanceOf(RedisUnavailableError);
      expect((refused.error as RedisUnavailableError).sent).toBe(false);
      expect((refused.error as RedisUnavailableError).command).toBe("EVALSHA");
      expect(refused.ms).toBeLessThan(AT_ONCE_MS);
      await expect(client.publish("down", "x")).rejects.toBeInstanceOf(RedisUnavailableError);
      await expect(client.subscribe("down", () => {})).rejects.toBeInstanceOf(RedisUnavailableError);
      await expect(client.maxmemoryPolicy()).resolves.toBeUndefined();

      await server.restart(); // same port, empty: no scripts cached
      await waitReady(connected);
      await expect(client.run(echo, [], ["new server"])).resolves.toBe("new server");
      // The subscription connection dropped too (without unhandled errors) and resubscribed.
      await vi.waitFor(
        async () => {
          await client.publish(`drop:${name}`, "again");
          expect(subscribed).toContain("again");
        },
        { timeout: 10_000, interval: 50 },
      );
      await unsubscribe();
    });

    it("rejects a command in flight when the connection dies (RedisUnavailableError, sent) within the limit", async () => {
      const patient = scriptClient(connected.client, 3000);
      server.pause();
      const inFlight = elapsed(patient.run(echo, [], ["in flight"]));
      await new Promise((resolve) => setTimeout(resolve, 20));
      process.kill(server.pid, "SIGKILL"); // dies while paused: no reply, the connection resets
      const result = await inFlight;
      await server.stop();
      expect(RedisUnavailableError.isInstance(result.error) || RedisTimeoutError.isInstance(result.error)).toBe(true);
      if (RedisUnavailableError.isInstance(result.error)) expect(result.error.sent).toBe(true);
      expect(result.ms).toBeLessThan(3500);
    });

    it("subscribe receives a publish from another client; the returned function unsubscribes and closes", async () => {
      const channel = `news:${name}`;
      const received: string[] = [];
      const clientsBefore = Number(/connected_clients:(\d+)/.exec(await server.command("INFO", "clients"))?.[1]);
      const unsubscribe = await client.subscribe(channel, (message) => received.push(message));
      expect(await server.command("PUBSUB", "NUMSUB", channel)).toBe(`*2\r\n$${channel.length}\r\n${channel}\r\n:1\r\n`);
      const other = await connect(recommended.ioredis as Factory);
      await (other.client as Redis).publish(channel, "from another client");
      await (other.client as Redis).publish(`${channel}:other`, "another channel");
      await client.publish(channel, "from itself");
      await vi.waitFor(() => expect(received).toEqual(["from another client", "from itself"]), { timeout: 2000, interval: 10 });

      await unsubscribe();
      await unsubscribe(); // idempotent
      expect(await server.command("PUBSUB", "NUMSUB", channel)).toBe(`*2\r\n$${channel.length}\r\n${channel}\r\n:0\r\n`);
      await vi.waitFor(
        async () => {
          const clientsAfter = Number(/connected_clients:(\d+)/.exec(await server.command("INFO", "clients"))?.[1]);
          // `other` is still connected; the subscription connection is gone.
          expect(clientsAfter).toBe(clientsBefore + 1);
        },
        { timeout: 2000, interval: 10 },
      );
      await client.publish(channel, "after unsubscribe");
      await new Promise((resolve) => setTimeout(resolve, 30));
      expect(received).toEqual(["from another client", "from itself"]);
    });

    it("a subscriber that throws does not break the subscription", async () => {
      const channel = `throws:${name}`;
      const received: string[] = [];
      const warnings: string[] = [];
      const onWarning = (warning: Error): void => {
        warnings.push(warning.message);
      };
      process.on("warning", onWarning);
      try {
        const unsubscribe = await client.subscribe(channel, (message) => {
          received.push(message);
          if (message === "boom") throw new Error("listener failed");
        });
        await client.publish(channel, "boom");
        await client.publish(channel, "next");
        await vi.waitFor(() => expect(received).toEqual(["boom", "next"]), { timeout: 2000, interval: 10 });
        await vi.waitFor(() => expect(warnings.some((message) => message.includes("listener failed"))).toBe(true));
        await unsubscribe();
      } finally {
        process.off("warning", onWarning);
      }
    });

    it("maxmemoryPolicy reads CONFIG GET maxmemory-policy: noeviction by default", async () => {
      await expect(client.maxmemoryPolicy()).resolves.toBe("noeviction");
      await server.command("CONFIG", "SET", "maxmemory-policy", "allkeys-lru");
      try {
        await expect(client.maxmemoryPolicy()).resolves.toBe("allkeys-lru");
      } finally {
        await server.command("CONFIG", "SET", "maxmemory-policy", "noeviction");
      }
    });

    it("maxmemoryPolicy waits past a short command limit (a busy server still gets its eviction check), bounded", async () => {
      server.pause();
      let resumed = false;
      try {
        const policy = quick.maxmemoryPolicy();
        await new Promise((resolve) => setTimeout(resolve, LIMIT_MS * 3));
        server.resume();
        resumed = true;
        await expect(policy).resolves.toBe("noeviction");
      } finally {
        if (!resumed) server.resume();
      }
    });

    it("clears its timer when the command settles, and the timer never holds the process open", async () => {
      const limit = 54_321;
      const patient = scriptClient(connected.client, limit);
      const setSpy = vi.spyOn(globalThis, "setTimeout");
      const clearSpy = vi.spyOn(globalThis, "clearTimeout");
      try {
        await expect(patient.run(echo, [], ["timed"])).resolves.toBe("timed");
        const index = setSpy.mock.calls.findIndex((call) => call[1] === limit);
        expect(index).toBeGreaterThanOrEqual(0);
        const timer = setSpy.mock.results[index]?.value as NodeJS.Timeout;
        expect(timer.hasRef()).toBe(false);
        expect(clearSpy.mock.calls.some((call) => call[0] === timer)).toBe(true);
      } finally {
        setSpy.mockRestore();
        clearSpy.mockRestore();
      }
    });
  });

  describe.each(Object.entries(defaults))("%s with the client's defaults", (_name, factory) => {
    it("is still bounded: a hung server times out at the limit, a stopped one is refused", async () => {
      const connected = await connect(factory);
      const client = scriptClient(connected.client, LIMIT_MS);
      await expect(client.run(echo, [], ["ok"])).resolves.toBe("ok");

      server.pause();
      try {
        const hung = await elapsed(client.run(echo, [], ["hung"]));
        expect(hung.error).toBeInstanceOf(RedisTimeoutError);
        expect(hung.ms).toBeLessThan(LIMIT_MS + SLACK_MS);
      } finally {
        server.resume();
      }
      await expect(client.run(echo, [], ["resumed"])).resolves.toBe("resumed");

      await server.stop();
      const down = await elapsed(client.run(echo, [], ["down"]));
      expect(RedisUnavailableError.isInstance(down.error) || RedisTimeoutError.isInstance(down.error)).toBe(true);
      expect(down.ms).toBeLessThan(LIMIT_MS + SLACK_MS);
      // Many calls while it is down: every one settles within the limit (none waits in an offline queue).
      const many = await Promise.all(Array.from({ length: 20 }, () => elapsed(client.run(echo, [], ["queued?"]))));
      for (const result of many) {
        expect(RedisUnavailableError.isInstance(result.error) || RedisTimeoutError.isInstance(result.error)).toBe(true);
        expect(result.ms).toBeLessThan(LIMIT_MS + SLACK_MS);
      }

      await server.restart();
      await waitReady(connected);
      await expect(client.run(echo, [], ["back"])).resolves.toBe("back");
    });
  });

  describe("subscribe on a hung server", () => {
    it("rejects with RedisTimeoutError after max(limit, 2000 ms) and closes its new connection", async () => {
      const clients = await Promise.all([connect(recommended["node-redis"] as Factory), connect(recommended.ioredis as Factory)]);
      const baseline = Number(/connected_clients:(\d+)/.exec(await server.command("INFO", "clients"))?.[1]);
      server.pause();
      let results: Awaited<ReturnType<typeof elapsed>>[];
      try {
        // Both at once: the 2 s floor is paid once.
        results = await Promise.all(clients.map((each) => elapsed(scriptClient(each.client, LIMIT_MS).subscribe("hung", () => {}))));
      } finally {
        server.resume();
      }
      for (const result of results) {
        expect(result.error).toBeInstanceOf(RedisTimeoutError);
        expect((result.error as RedisTimeoutError).command).toBe("SUBSCRIBE");
        expect((result.error as RedisTimeoutError).timeoutMs).toBe(2000);
        expect(result.ms).toBeGreaterThanOrEqual(1990);
        expect(result.ms).toBeLessThan(2000 + SLACK_MS);
      }
      // The connections made for the subscriptions are gone once the server looks again.
      await vi.waitFor(
        async () => expect(Number(/connected_clients:(\d+)/.exec(await server.command("INFO", "clients"))?.[1])).toBe(baseline),
        { timeout: 5000, interval: 20 },
      );
    });
  });

  describe("maxmemoryPolicy on a server that refuses CONFIG (as managed Redis does)", () => {
    it("is undefined", async () => {
      const managed = await startRedis({ args: ["--rename-command", "CONFIG", ""] });
      try {
        expect(managed).toBeDefined();
        for (const factory of Object.values(recommended)) {
          const connected = await connect(async () => factory((managed as RedisServer).url));
          await expect(scriptClient(connected.client, LIMIT_MS).maxmemoryPolicy()).resolves.toBeUndefined();
        }
      } finally {
        await managed?.stop();
      }
    });
  });

  describe("a client that is not connected", () => {
    it("node-redis before connect(): refused at once, naming connect()", async () => {
      const client = createClient({ url: server.url });
      const error = await elapsed(scriptClient(client, LIMIT_MS).run(echo, [], ["x"]));
      expect(error.error).toBeInstanceOf(RedisUnavailableError);
      expect((error.error as Error).message).toContain("client.connect()");
      expect(error.ms).toBeLessThan(AT_ONCE_MS);
    });

    it("ioredis with lazyConnect before connect(): refused at once, naming connect()", async () => {
      const client = new Redis(server.url, { lazyConnect: true });
      const error = await elapsed(scriptClient(client, LIMIT_MS).run(echo, [], ["x"]));
      expect(error.error).toBeInstanceOf(RedisUnavailableError);
      expect((error.error as Error).message).toContain('status "wait"');
      expect(client.status).toBe("wait"); // the command did not make it connect
    });
  });
});

describe("scriptClient with something that is not a client", () => {
  it("accepts the real clients, whose types fit the shapes the layer drives (checked by tsc, tsconfig.test.json)", () => {
    // Neither connects: createClient does not, and ioredis waits with lazyConnect.
    const nodeRedisClient: NodeRedisLike = createClient();
    const nodeRedisResp3: NodeRedisLike = createClient({ RESP: 3 });
    const ioredisClient: IoRedisLike = new Redis({ lazyConnect: true });
    const nodeRedis50: NodeRedisLike = createClient50();
    const nodeRedis6: NodeRedisLike = createClient6();
    const nodeRedis6Resp3: NodeRedisLike = createClient6({ RESP: 3 });
    const ioredis6: IoRedisLike = new Redis6({ lazyConnect: true });
    const ioredis50: IoRedisLike = new Redis50({ lazyConnect: true });
    expect(scriptClient(nodeRedisClient, LIMIT_MS).kind).toBe("node-redis");
    expect(scriptClient(nodeRedisResp3, LIMIT_MS).kind).toBe("node-redis");
    expect(scriptClient(ioredisClient, LIMIT_MS).kind).toBe("ioredis");
    expect(scriptClient(nodeRedis50, LIMIT_MS).kind).toBe("node-redis");
    expect(scriptClient(nodeRedis6, LIMIT_MS).kind).toBe("node-redis");
    expect(scriptClient(nodeRedis6Resp3, LIMIT_MS).kind).toBe("node-redis");
    expect(scriptClient(ioredis6, LIMIT_MS).kind).toBe("ioredis");
    expect(scriptClient(ioredis50, LIMIT_MS).kind).toBe("ioredis");
  });

  it("throws a TypeError naming `client` and describing what was given", () => {
    expect(() => scriptClient({}, LIMIT_MS)).toThrow(TypeError);
    expect(() => scriptClient({}, LIMIT_MS)).toThrow(
      /`client` must be a connected node-redis v5 or v6 client .* or an ioredis v5\/v6 instance .*; got an object with no own keys/,
    );
    expect(() => scriptClient(undefined, LIMIT_MS)).toThrow(/`client` .*; got undefined$/);
    expect(() => scriptClient(Promise.resolve(), LIMIT_MS)).toThrow(/`client` .*got a Promise/);
    expect(() => scriptClient({ isCluster: true }, LIMIT_MS)).toThrow(/`client` .*marked `isCluster` without an ioredis Cluster's methods/);
    expect(() => scriptClient("redis://localhost", LIMIT_MS)).toThrow(/`client` .*got a string/);
    // Real clients of kinds not supported: none of them connects here.
    expect(() => scriptClient(createClientPool(), LIMIT_MS)).toThrow(/`client` .*a node-redis client pool/);
  });

  it("accepts cluster clients: node-redis createCluster and ioredis Cluster (each script goes to the node of its one key)", () => {
    expect(scriptClient(createCluster({ rootNodes: [] }), LIMIT_MS).kind).toBe("node-redis");
    expect(scriptClient(new Redis.Cluster([], { lazyConnect: true }), LIMIT_MS).kind).toBe("ioredis");
    expect(scriptClient(createCluster6({ rootNodes: [] }), LIMIT_MS).kind).toBe("node-redis");
    expect(scriptClient(new Redis6.Cluster([], { lazyConnect: true }), LIMIT_MS).kind).toBe("ioredis");
    expect(() => scriptClient(new Redis.Cluster([], { lazyConnect: true, redisOptions: { stringNumbers: true } }), LIMIT_MS)).toThrow(
      /ioredis Cluster with `stringNumbers: true`/,
    );
  });

  it("refuses ioredis with stringNumbers (integers would come back as strings)", () => {
    const client = new Redis({ lazyConnect: true, stringNumbers: true });
    expect(() => scriptClient(client, LIMIT_MS)).toThrow(/`client` .*stringNumbers/);
  });

  it("refuses a time limit that is not a positive number of milliseconds", () => {
    const client = new Redis({ lazyConnect: true });
    for (const bad of [0, -1, Number.NaN, Number.POSITIVE_INFINITY, 2 ** 31]) {
      expect(() => scriptClient(client, bad)).toThrow(RangeError);
    }
  });

  it("script() hashes the source as Redis does (SHA1 hex)", () => {
    expect(script("return 1").sha).toBe("e0e1f9fabfc9d4800c877a703b823ac0578ff8db");
    expect(() => script("")).toThrow(TypeError);
  });
});
