import { afterEach, describe, expect, it, vi } from "vitest";
import { BEGIN, releaseOwnerArgs } from "../src/idempotency-scripts.js";
import type { Script } from "../src/lua-script.js";
import { mayStillRun, OwnerReleases, type ReleaseTiming } from "../src/owner-releases.js";
import { RedisTimeoutError, RedisUnavailableError } from "../src/redis-errors.js";
import type { ScriptClient } from "../src/script-client.js";

// The releases after a begin that got no reply, without a server: the client is scripted (each run
// answers what the test says) and time is injected (a fake monotonic clock; a pause is recorded
// and resolved by the test), so no test waits for a backoff.

const BEGIN_RELEASE = { script: BEGIN, args: releaseOwnerArgs };

type Answer = () => Promise<unknown>;
const timeout: Answer = () => Promise.reject(new RedisTimeoutError("EVALSHA", 50));
const notReady: Answer = () => Promise.reject(new RedisUnavailableError("EVALSHA", "client not ready"));

function scriptedClient(answers: Answer[]) {
  const runs: Array<{ script: Script; keys: readonly string[]; args: readonly (string | number)[] }> = [];
  const client: ScriptClient = {
    kind: "node-redis",
    run(script, keys, args) {
      runs.push({ script, keys, args });
      return (answers.shift() ?? (() => Promise.resolve(0)))();
    },
    publish: () => Promise.resolve(),
    subscribe: () => Promise.resolve(() => Promise.resolve()),
    maxmemoryPolicy: () => Promise.resolve(undefined),
  };
  return { client, runs };
}

function fakeTiming() {
  let now = 0;
  const pauses: Array<{ ms: number; signal: AbortSignal; resolve: () => void }> = [];
  const timing: ReleaseTiming = {
    now: () => now,
    wait: (ms, signal) => new Promise((resolve) => pauses.push({ ms, signal, resolve: () => resolve() })),
    random: () => 1, // the longest pause of each range
  };
  /** Lets the attempt in flight settle, then ends the pause it started, `ms` later. */
  const endPause = async (): Promise<number> => {
    await vi.waitFor(() => expect(pauses.length).toBe(1), { interval: 1 });
    const pause = pauses.shift() as (typeof pauses)[number];
    now += pause.ms;
    pause.resolve();
    return pause.ms;
  };
  return { timing, pauses, endPause };
}

describe("OwnerReleases", () => {
  afterEach(() => vi.restoreAllMocks());

  it("tries again after silence with a doubling pause (20 ms up to 1 s), and stops at the first answer", async () => {
    const { client, runs } = scriptedClient([timeout, timeout, notReady, timeout, timeout, timeout, timeout, timeout]);
    const time = fakeTiming();
    const releases = new OwnerReleases(client, BEGIN_RELEASE, time.timing);
    releases.release("p:idem:{k}", "owner-1", 30_000);
    const pauses: number[] = [];
    for (let i = 0; i < 8; i++) pauses.push(await time.endPause());
    await releases.settled();
    expect(pauses).toEqual([20, 40, 80, 160, 320, 640, 1000, 1000]);
    expect(runs).toHaveLength(9);
    for (const run of runs)
      expect(run).toMatchObject({ script: BEGIN, keys: ["p:idem:{k}"], args: ["", expect.any(Number), "owner-1", "release"] });
    // Each attempt marks the owner abandoned for the lease left, never for longer.
    expect(runs.map((run) => run.args[1])).toEqual([30_000, 29_980, 29_940, 29_860, 29_700, 29_380, 28_740, 27_740, 26_740]);
    expect(releases.pending).toBe(0);
  });

  it("an answer ends it: 1 (released), 0 (nothing of this owner's), or an error reply", async () => {
    for (const answer of [() => Promise.resolve(1), () => Promise.resolve(0), () => Promise.reject(new Error("ERR script error"))]) {
      const { client, runs } = scriptedClient([answer]);
      const time = fakeTiming();
      const releases = new OwnerReleases(client, BEGIN_RELEASE, time.timing);
      releases.release("k", "o", 1000);
      await releases.settled();
      expect(runs).toHaveLength(1);
      expect(time.pauses).toHaveLength(0);
    }
  });

  it("stops when the lease is over (the late lock has expired by itself)", async () => {
    const { client, runs } = scriptedClient(Array.from({ length: 100 }, () => timeout));
    const time = fakeTiming();
    const releases = new OwnerReleases(client, BEGIN_RELEASE, time.timing);
    releases.release("k", "o", 100);
    expect(await time.endPause()).toBe(20);
    expect(await time.endPause()).toBe(40);
    expect(await time.endPause()).toBe(80); // 140 ms gone: the 100 ms lease is over, no attempt after it
    await releases.settled();
    expect(runs).toHaveLength(3);
  });

  it("close() ends a pause at once and sends nothing more; a release after close() sends nothing", async () => {
    const { client, runs } = scriptedClient(Array.from({ length: 100 }, () => timeout));
    const time = fakeTiming();
    const releases = new OwnerReleases(client, BEGIN_RELEASE, time.timing);
    for (let i = 0; i < 50; i++) releases.release(`k${i}`, `o${i}`, 30_000);
    await vi.waitFor(() => expect(time.pauses).toHaveLength(50), { interval: 1 });
    releases.close();
    expect(time.pauses.every((pause) => pause.signal.aborted)).toBe(true);
    for (const pause of time.pauses.splice(0)) pause.resolve();
    await releases.settled();
    releases.release("later", "o", 30_000);
    expect(releases.pending).toBe(0);
    expect(runs).toHaveLength(50);
  });

  it("bad leases start nothing (0, negative, NaN)", () => {
    const { client, runs } = scriptedClient([]);
    const releases = new OwnerReleases(client, BEGIN_RELEASE, fakeTiming().timing);
    for (const lease of [0, -5, Number.NaN]) releases.release("k", "o", lease);
    expect(releases.pending).toBe(0);
    expect(runs).toHaveLength(0);
  });

  it("its pauses never hold the process open (unref'd timers), and close() clears them", async () => {
    const timers: NodeJS.Timeout[] = [];
    const real = globalThis.setTimeout;
    vi.spyOn(globalThis, "setTimeout").mockImplementation(((...args: Parameters<typeof setTimeout>) => {
      const timer = real(...args);
      timers.push(timer);
      return timer;
    }) as typeof setTimeout);
    const { client } = scriptedClient(Array.from({ length: 10 }, () => timeout));
    const releases = new OwnerReleases(client, BEGIN_RELEASE);
    releases.release("k", "o", 30_000);
    await vi.waitFor(() => expect(timers.length).toBeGreaterThan(0), { interval: 1 });
    expect(timers.every((timer) => !timer.hasRef())).toBe(true);
    releases.close();
    await releases.settled();
  });

  it("which failures may still run on the server: a timeout, a connection lost after sending; not a refusal before sending", () => {
    expect(mayStillRun(new RedisTimeoutError("EVALSHA", 100))).toBe(true);
    expect(mayStillRun(new RedisUnavailableError("EVALSHA", "connection lost", { sent: true }))).toBe(true);
    expect(mayStillRun(new RedisUnavailableError("EVALSHA", "client not ready"))).toBe(false);
    expect(mayStillRun(new Error("ERR script"))).toBe(false);
    expect(mayStillRun(undefined)).toBe(false);
  });

  it("the release's arguments: no fingerprint, the lease left, the owner, the mode", () => {
    expect(releaseOwnerArgs("o-1", 250)).toEqual(["", 250, "o-1", "release"]);
  });
});
