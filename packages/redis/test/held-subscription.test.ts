import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { FIRST_RETRY_MS, HeldSubscription, MAX_RETRY_MS } from "../src/held-subscription.js";
import type { ScriptClient } from "../src/script-client.js";

// The subscription's retry schedule and its life cycle, over a fake ScriptClient and fake timers
// (no Redis, no waiting): the real-server cases are in subscription.test.ts.

interface FakeRedis {
  client: ScriptClient;
  /** When each subscribe was asked for (fake ms). */
  attempts: number[];
  /** Whether subscribe succeeds now. */
  up: boolean;
  /** Drops the current subscription connection (its onLost). */
  drop(): void;
  stops: number;
}

function fakeRedis(): FakeRedis {
  let lost: (() => void) | undefined;
  const fake: FakeRedis = {
    attempts: [],
    up: false,
    stops: 0,
    drop: () => lost?.(),
    client: {
      kind: "node-redis",
      run: () => Promise.reject(new Error("not used")),
      publish: () => Promise.resolve(),
      maxmemoryPolicy: () => Promise.resolve(undefined),
      async subscribe(_channel, _onMessage, onLost) {
        fake.attempts.push(Date.now());
        if (!fake.up) throw new Error("not ready");
        lost = onLost;
        return async () => {
          fake.stops++;
        };
      },
    },
  };
  return fake;
}

beforeEach(() => {
  vi.useFakeTimers({ now: 0 });
  vi.spyOn(Math, "random").mockReturnValue(1); // the jitter's top: each wait is its ceiling
});
afterEach(() => {
  vi.useRealTimers();
  vi.restoreAllMocks();
});

function held(redis: FakeRedis, onHeld = vi.fn(() => Promise.resolve())) {
  const onFailing = vi.fn();
  const subscription = new HeldSubscription({ redis: redis.client, channel: "c", onMessage: () => {}, onHeld, onFailing });
  let ready = false;
  subscription.ready.then(() => (ready = true), ignoreRejection);
  return { subscription, onHeld, onFailing, isReady: () => ready };
}
const ignoreRejection = () => {};

describe("HeldSubscription", () => {
  it("retries with doubling waits (50 ms up to 1 s) until it holds; warns once; ready resolves after onHeld", async () => {
    const redis = fakeRedis();
    const { onHeld, onFailing, isReady } = held(redis);
    await vi.advanceTimersByTimeAsync(4_000);
    const waits = redis.attempts.slice(1).map((at, i) => at - (redis.attempts[i] as number));
    expect(waits.slice(0, 6)).toEqual([FIRST_RETRY_MS, 100, 200, 400, 800, MAX_RETRY_MS]);
    expect(onFailing).toHaveBeenCalledTimes(1);
    expect(isReady()).toBe(false);
    redis.up = true;
    await vi.advanceTimersByTimeAsync(MAX_RETRY_MS);
    expect(isReady()).toBe(true);
    expect(onHeld).toHaveBeenCalledTimes(1);
    const count = redis.attempts.length;
    await vi.advanceTimersByTimeAsync(10_000);
    expect(redis.attempts.length).toBe(count); // held: no more attempts
  });

  it("a lost connection is closed and made again (from the first wait), onHeld runs again; warns again only for a new outage", async () => {
    const redis = fakeRedis();
    redis.up = true;
    const { onHeld, onFailing } = held(redis);
    await vi.advanceTimersByTimeAsync(0);
    expect(onHeld).toHaveBeenCalledTimes(1);
    redis.up = false;
    redis.drop();
    expect(redis.stops).toBe(1);
    await vi.advanceTimersByTimeAsync(FIRST_RETRY_MS + 100); // two failed attempts
    expect(onFailing).toHaveBeenCalledTimes(1);
    redis.up = true;
    await vi.advanceTimersByTimeAsync(200);
    expect(onHeld).toHaveBeenCalledTimes(2);
  });

  it("an onHeld that fails is a failed attempt: the connection is closed and the whole attempt retried", async () => {
    const redis = fakeRedis();
    redis.up = true;
    const onHeld = vi.fn().mockRejectedValueOnce(new Error("read timed out")).mockResolvedValue(undefined);
    const { isReady } = held(redis, onHeld);
    await vi.advanceTimersByTimeAsync(0);
    expect(isReady()).toBe(false);
    expect(redis.stops).toBe(1);
    await vi.advanceTimersByTimeAsync(FIRST_RETRY_MS);
    expect(isReady()).toBe(true);
    expect(redis.attempts).toHaveLength(2);
  });

  it("close() stops the retries, ends a held subscription, and rejects ready if it never held", async () => {
    const redis = fakeRedis();
    const { subscription } = held(redis);
    await vi.advanceTimersByTimeAsync(200);
    const count = redis.attempts.length;
    await subscription.close();
    await expect(subscription.ready).rejects.toThrow(/closed before it held/);
    await vi.advanceTimersByTimeAsync(10_000);
    expect(redis.attempts.length).toBe(count);

    const up = fakeRedis();
    up.up = true;
    const second = held(up);
    await vi.advanceTimersByTimeAsync(0);
    await second.subscription.close();
    expect(up.stops).toBe(1);
    await second.subscription.close(); // idempotent
    expect(up.stops).toBe(1);
  });
});
