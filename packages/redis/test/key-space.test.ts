import { RetryReflectPlugin } from "@retry-reflect/core";
import { createFakeClock } from "@retry-reflect/core/testing";
import { createClient } from "redis";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { RedisCircuitBreakerStore, RedisIdempotencyStore, redisStores } from "../src/index.js";
import { type RedisServer, startRedis } from "./helpers/redis-server.js";

// What the stores leave in Redis (the README's "What is stored where, and for how long"), read
// back from a real redis-server with SCAN: which keys, how their names are made, how long each
// lives (PTTL values, never a wait), and how many tools a process tracks. A tool name is chosen by
// the model (an MCP client's model picks it): it must never reach a key name.

const redis = await startRedis();
afterAll(() => redis?.stop());

const DAY_MS = 86_400_000;
const HOSTILE = "../../etc {x}";
const LONG = `${"tool-".repeat(2048)}end`; // 10 KB
/** A key name as the stores make it: the prefix, the kind, and a hash as the hash tag. */
const HASHED = (prefix: string) => new RegExp(`^${prefix}(cb|idem):\\{[0-9a-f]{40}\\}$`);

const opened: Array<() => unknown> = [];
afterEach(async () => {
  await Promise.all(opened.splice(0).map((close) => close()));
});

async function connect() {
  const client = createClient({ url: (redis as RedisServer).url, disableOfflineQueue: true });
  client.on("error", () => {});
  await client.connect();
  opened.push(() => (client.isOpen ? client.destroy() : undefined));
  return client;
}

type Client = Awaited<ReturnType<typeof connect>>;

/** Every key under `prefix` (SCAN, as an operator would; never KEYS) with its PTTL (-1: none). */
async function keysOf(client: Client, prefix: string): Promise<Map<string, number>> {
  const keys: string[] = [];
  let cursor = "0";
  do {
    const [next, batch] = (await client.sendCommand(["SCAN", cursor, "MATCH", `${prefix}*`, "COUNT", "1000"])) as [string, string[]];
    keys.push(...batch);
    cursor = next;
  } while (cursor !== "0");
  const ttls = await Promise.all(keys.map((key) => client.pTTL(key)));
  return new Map(keys.map((key, i) => [key, ttls[i] as number]));
}

let prefixes = 0;
const SETTINGS = { threshold: 3, resetMs: 10_000, maxResetMs: undefined };

describe.skipIf(redis === undefined)("what the Redis stores keep, under which names, for how long", () => {
  it("the failing tools a process tracks stay at maxFailingTools (default 10,000): 12,000 tools failing once each", async () => {
    const client = await connect();
    const store = new RedisCircuitBreakerStore({ client, prefix: `ks${++prefixes}:`, commandTimeoutMs: 10_000 });
    opened.push(() => store.close());
    await Promise.all(Array.from({ length: 12_000 }, (_, i) => store.record(`tool-${i}`, { probe: 0 }, "failure", SETTINGS)));
    expect(store.failingTools).toBe(10_000);
  });

  it("beyond maxFailingTools the oldest failing tool is forgotten here: the newest's success still ends its row at once", async () => {
    const client = await connect();
    const prefix = `ks${++prefixes}:`;
    const store = new RedisCircuitBreakerStore({ client, prefix, commandTimeoutMs: 10_000, maxFailingTools: 100 });
    opened.push(() => store.close());
    for (let i = 0; i < 1000; i += 100) {
      await Promise.all(Array.from({ length: 100 }, (_, j) => store.record(`tool-${i + j}`, { probe: 0 }, "failure", SETTINGS)));
    }
    expect(store.failingTools).toBe(100);
    await store.record("tool-999", { probe: 0 }, "success", SETTINGS);
    expect(await client.exists(store.keyOf("tool-999"))).toBe(0); // told Redis at once: the row ended
    expect(store.failingTools).toBe(99);
    // The oldest was dropped here: its success is told with its next failure (as when another replica counted its failures).
    await store.record("tool-0", { probe: 0 }, "success", SETTINGS);
    expect(await client.exists(store.keyOf("tool-0"))).toBe(1);
    await store.record("tool-0", { probe: 0 }, "failure", SETTINGS);
    expect(await client.hGet(store.keyOf("tool-0"), "failures")).toBe("1");
  });

  it("a tool name (`../../etc {x}`, 10 KB) never appears in a key name; another replica still learns that its circuit opened", async () => {
    const client = await connect();
    const prefix = `ks${++prefixes}:`;
    const plugins = [0, 1].map(() => {
      const stores = redisStores({ client, prefix, clock: createFakeClock() });
      opened.push(() => stores.close());
      return {
        stores,
        plugin: RetryReflectPlugin.create({
          toolEffects: { [`${HOSTILE} pay`]: "write" },
          circuitBreakerThreshold: 3,
          idempotency: { store: stores.idempotency },
          circuitBreakerStore: stores.circuitBreaker,
        }),
      };
    });
    const [a, b] = plugins as [(typeof plugins)[0], (typeof plugins)[0]];
    await Promise.all([a.stores.circuitBreaker.subscribed, b.stores.circuitBreaker.subscribed]);
    let scopes = 0;
    const fail = (toolName: string) =>
      a.plugin.execute({ toolName, args: {}, scope: `s${++scopes}` }, async () => {
        throw new Error("upstream exploded");
      });
    for (let i = 0; i < 3; i++) await fail(LONG); // opens its circuit
    await fail(HOSTILE);
    expect(await a.plugin.execute({ toolName: `${HOSTILE} pay`, args: { idempotency_key: "k1" } }, async () => "done")).toMatchObject({
      status: "success",
    });
    await a.plugin.circuits.isolate(`${HOSTILE}-isolated`);

    const keys = [...(await keysOf(client, prefix)).keys()];
    expect(keys).toHaveLength(4); // LONG's open circuit, HOSTILE's failing row, the write of `${HOSTILE} pay`, the isolated circuit
    for (const key of keys) {
      expect(key).toMatch(HASHED(prefix));
      expect(key).not.toContain("etc");
      expect(key).not.toContain("tool-");
    }
    expect(keys).toContain(a.stores.circuitBreaker.keyOf(LONG));
    expect(keys).toContain(a.stores.circuitBreaker.keyOf(HOSTILE));
    // The publish carries the name (data, not a key name): the other replica's local view maps it back.
    const started = Date.now();
    while (b.plugin.circuits.state(LONG) !== "open" && Date.now() - started < 5000) await new Promise((resolve) => setTimeout(resolve, 1));
    expect(b.plugin.circuits.state(LONG)).toBe("open");
  });

  it("every key has a TTL (an isolated circuit, held until reset, is the one documented exception)", async () => {
    const client = await connect();
    const prefix = `ks${++prefixes}:`;
    const clock = createFakeClock();
    const circuits = new RedisCircuitBreakerStore({ client, prefix, clock });
    const writes = new RedisIdempotencyStore({ client, prefix });
    opened.push(() => circuits.close());
    // A failing row, an open circuit, a probe, an isolated circuit, a write in progress, a write done, a released one.
    await circuits.record("failing", { probe: 0 }, "failure", SETTINGS);
    for (let i = 0; i < 3; i++) await circuits.record("open", { probe: 0 }, "failure", SETTINGS);
    for (let i = 0; i < 3; i++) await circuits.record("probing", { probe: 0 }, "failure", SETTINGS);
    await client.hIncrBy(circuits.keyOf("probing"), "opened", -SETTINGS.resetMs); // its open time over on the server's clock
    await clock.advance(SETTINGS.resetMs); // and on the local view's
    expect(await circuits.acquire("probing", SETTINGS)).toMatchObject({ admitted: true, permit: { probe: expect.any(Number) } });
    await circuits.isolate("isolated");
    const lock = await writes.begin("running", "fp", 30_000);
    expect(lock.status).toBe("acquired");
    const done = await writes.begin("done", "fp", 30_000);
    expect(await writes.complete("done", (done as { token: string }).token, { ok: true }, 3_600_000)).toBe(true);
    const released = await writes.begin("released", "fp", 30_000);
    expect(await writes.release("released", (released as { token: string }).token)).toBe(true);

    const ttls = await keysOf(client, prefix);
    const expected: Record<string, [string, number, number]> = {
      [circuits.keyOf("failing")]: ["failing row: a day past its last failure", DAY_MS - 60_000, DAY_MS],
      [circuits.keyOf("open")]: ["open circuit: a day, or twice its open time if longer", DAY_MS - 60_000, DAY_MS],
      [circuits.keyOf("probing")]: ["half-open circuit: a day, or twice its open time", DAY_MS - 60_000, DAY_MS],
      [writes.keyOf("running")]: ["write in progress: its lease", 1, 30_000],
      [writes.keyOf("done")]: ["write done: idempotency.ttlMs", 3_600_000 - 60_000, 3_600_000],
    };
    expect([...ttls.keys()].sort()).toEqual([...Object.keys(expected), circuits.keyOf("isolated")].sort());
    for (const [key, [what, low, high]] of Object.entries(expected)) {
      const ttl = ttls.get(key) as number;
      expect({ what, ttl, inRange: ttl >= low && ttl <= high }).toEqual({ what, ttl, inRange: true });
    }
    expect(ttls.get(circuits.keyOf("isolated"))).toBe(-1);
    await circuits.reset("isolated");
    expect(await client.exists(circuits.keyOf("isolated"))).toBe(0);
  });
});
