import type { CircuitAdmission, CircuitStoreSettings } from "@retry-reflect/core/stores";
import { createFakeClock } from "@retry-reflect/core/testing";
import { afterAll, afterEach, describe, expect, it, vi } from "vitest";
import { ACQUIRE, MAX_MARKS } from "../src/breaker-scripts.js";
import { scriptClient } from "../src/detect-client.js";
import { RedisCircuitBreakerStore } from "../src/index.js";
import { type ClientKind, connectTo, sleep, whilePaused } from "./helpers/paused-server.js";
import { type RedisServer, startRedis } from "./helpers/redis-server.js";

// An `acquire` of the half-open probe whose reply comes after the command timeout (a paused
// server, SIGSTOP) must not hold the probe slot: its caller was told nothing, so a probe held for
// the whole reset period would half-reject every replica while nobody probes. Each acquire carries
// an owner id; after a timeout the store releases that owner until Redis answers. The server is
// paused for real; an open time passes by ageing the record on the server; the waits below are for
// the server (its pause, its replies), never for a timer of the store.

const redis = await startRedis();
afterAll(() => redis?.stop());

const opened: Array<() => unknown> = [];
afterEach(async () => {
  (redis as RedisServer | undefined)?.resume(); // a failed test must not leave the server stopped
  for (const close of opened.splice(0).reverse()) await close();
});

const RESET_MS = 10_000;
const SETTINGS: CircuitStoreSettings = { threshold: 1, resetMs: RESET_MS, maxResetMs: undefined };
const TIMEOUT_MS = 50;
const TOOL = "search";
let prefixes = 0;

/** A replica's breaker store with a fake local clock, subscribed, its scripts cached on the server (a late EVALSHA runs). */
async function replica(kind: ClientKind, prefix: string, commandTimeoutMs: number) {
  const clock = createFakeClock(0);
  const client = await connectTo(redis as RedisServer, kind, opened);
  const store = new RedisCircuitBreakerStore({ client, prefix, commandTimeoutMs, clock });
  opened.push(() => store.close());
  await store.subscribed;
  const raw = scriptClient(client, 1000);
  await raw.run(ACQUIRE, [`${prefix}warm`], ["", "", RESET_MS, "warm-owner"]);
  return { store, clock, raw };
}

type Replica = Awaited<ReturnType<typeof replica>>;

/** Opens TOOL's circuit from `a` (every replica has read it closed first) and ages it on the server past its open time; the local clocks follow. */
async function openAndAge(a: Replica, ...others: Replica[]): Promise<void> {
  for (const each of [a, ...others])
    expect(await each.store.acquire(TOOL, SETTINGS)).toMatchObject({ admitted: true, permit: { probe: 0 } });
  expect(await a.store.record(TOOL, { probe: 0 }, "failure", SETTINGS)).toMatchObject({ to: "open" });
  await (redis as RedisServer).command("HINCRBY", a.store.keyOf(TOOL), "opened", String(-RESET_MS));
  for (const each of [a, ...others]) await each.clock.advance(RESET_MS);
}

/** Two replicas of a fresh prefix, TOOL's circuit open and aged past its open time (the probe free); `key` is its Redis key. */
async function twoAtTheProbe(kind: ClientKind) {
  const prefix = `lateacq${++prefixes}:`;
  const a = await replica(kind, prefix, 1000);
  const b = await replica(kind, prefix, 1000);
  await openAndAge(a, b);
  return { prefix, a, b, key: a.store.keyOf(TOOL) };
}

/** Asks `store` for the probe until it is admitted; how long it took, or -1 past `limitMs`. */
async function probeWithin(limitMs: number, store: RedisCircuitBreakerStore): Promise<{ after: number; last: CircuitAdmission }> {
  const started = Date.now();
  let last = await store.acquire(TOOL, SETTINGS);
  while (!last.admitted && Date.now() - started <= limitMs) {
    await sleep(5);
    last = await store.acquire(TOOL, SETTINGS);
  }
  return { after: last.admitted ? Date.now() - started : -1, last };
}

/** The release mode of ACQUIRE for `owner` (what a store of `prefix` sends after a timeout). */
const releaseArgs = (prefix: string, owner: string, leaseMs: number) => [`${prefix}circuits`, TOOL, leaseMs, owner, "release"];

for (const kind of ["node-redis", "ioredis"] as const) {
  describe.skipIf(redis === undefined)(`an acquire answered after the command timeout (${kind})`, () => {
    it("a 500 ms pause while the probe is asked: another replica gets the probe within the command timeout and a round trip (not half-rejected for the reset period)", async () => {
      const prefix = `lateacq${++prefixes}:`;
      const late = await replica(kind, prefix, TIMEOUT_MS);
      const other = await replica(kind, prefix, 1000);
      await openAndAge(late, other);

      await whilePaused(redis as RedisServer, 500, () =>
        expect(Promise.resolve(late.store.acquire(TOOL, SETTINGS))).rejects.toThrow(/no reply within 50 ms/),
      );
      const { after, last } = await probeWithin(TIMEOUT_MS + 200, other.store);
      expect(last).toMatchObject({ admitted: true });
      expect(after).toBeGreaterThanOrEqual(0);
      // That probe is the live one: its success closes the circuit.
      expect(await other.store.record(TOOL, (last as { permit: { probe: number } }).permit, "success", SETTINGS)).toMatchObject({
        to: "closed",
      });
    });

    it("a burst of acquires from two replicas (50 each) while the server is paused past the command timeout: the probe is free once it answers, the marks stay bounded", async () => {
      const prefix = `lateacq${++prefixes}:`;
      const first = await replica(kind, prefix, TIMEOUT_MS);
      const second = await replica(kind, prefix, TIMEOUT_MS);
      const other = await replica(kind, prefix, 1000);
      await openAndAge(first, other, second);

      const asked = await whilePaused(redis as RedisServer, 500, () =>
        Promise.allSettled(
          Array.from({ length: 100 }, (_, i) => Promise.resolve((i % 2 === 0 ? first : second).store.acquire(TOOL, SETTINGS))),
        ),
      );
      expect(asked.filter((each) => each.status === "fulfilled")).toHaveLength(0);
      const { after, last } = await probeWithin(TIMEOUT_MS + 500, other.store);
      expect({ after, admitted: last.admitted }).toEqual({ after: expect.any(Number), admitted: true });
      expect(after).toBeGreaterThanOrEqual(0);
      await Promise.all([first.store.ownerReleases.settled(), second.store.ownerReleases.settled()]);
      const marks = await (redis as RedisServer).command("HGET", other.store.keyOf(TOOL), "abandoned");
      expect(Object.keys(JSON.parse(marks.split("\r\n")[1] || "{}")).length).toBeLessThanOrEqual(MAX_MARKS);
    });

    it("close() stops the releases: none starts after it", async () => {
      const { a, key } = await twoAtTheProbe(kind);
      await a.store.close();
      a.store.ownerReleases.release(key, "owner-1", RESET_MS, TOOL);
      expect(a.store.ownerReleases.pending).toBe(0);
    });

    it("a stale release never frees another owner's probe", async () => {
      const { prefix, a, b, key } = await twoAtTheProbe(kind);
      const probe = await b.store.acquire(TOOL, SETTINGS);
      expect(probe).toMatchObject({ admitted: true });

      expect(await a.raw.run(ACQUIRE, [key], releaseArgs(prefix, "stale-owner", RESET_MS))).toBe(0);
      const third = await a.raw.run(ACQUIRE, [key], ["", TOOL, RESET_MS, "third-owner"]);
      expect((third as unknown[])[0]).toBe("half");
      expect(await b.store.record(TOOL, (probe as { permit: { probe: number } }).permit, "success", SETTINGS)).toMatchObject({
        to: "closed",
      });
    });

    it("a release that frees a probe is published: a replica told 'half' meanwhile asks again and gets the probe", async () => {
      const { prefix, a, b, key } = await twoAtTheProbe(kind);
      expect(((await a.raw.run(ACQUIRE, [key], ["", TOOL, RESET_MS, "late-owner"])) as unknown[])[0]).toBe("probe");
      expect(await b.store.acquire(TOOL, SETTINGS)).toMatchObject({ admitted: false, state: "half-open" });

      expect(await a.raw.run(ACQUIRE, [key], releaseArgs(prefix, "late-owner", RESET_MS))).toBe(1);
      await vi.waitFor(() => expect(b.store.peek(TOOL)).toBeUndefined(), { interval: 1 });
      expect(await b.store.acquire(TOOL, SETTINGS)).toMatchObject({ admitted: true });
    });

    it("a release that comes before its acquire (reordered by a reconnect): that acquire takes nothing, another replica takes the probe", async () => {
      const { prefix, a, b, key } = await twoAtTheProbe(kind);

      expect(await a.raw.run(ACQUIRE, [key], releaseArgs(prefix, "gone-owner", RESET_MS))).toBe(0);
      expect(await a.raw.run(ACQUIRE, [key], releaseArgs(prefix, "gone-too", RESET_MS))).toBe(0);
      const late = await a.raw.run(ACQUIRE, [key], ["", TOOL, RESET_MS, "gone-owner"]);
      expect((late as unknown[])[0]).toBe("abandoned");
      expect(await b.store.acquire(TOOL, SETTINGS)).toMatchObject({ admitted: true });
    });
  });
}
