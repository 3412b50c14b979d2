import { describe, expect, it } from "vitest";
import { InvalidOptionError } from "../src/index.js";
import { CIRCUIT_BREAKER_DEFAULTS, CircuitBreaker, type CircuitBreakerOptions, type CircuitSnapshot } from "../src/primitives.js";
import type { CircuitTransition } from "../src/stores.js";
import { createFakeClock, type FakeClock } from "../src/testing.js";

type Result = "success" | "failure" | "neutral";

/** A breaker on a fake clock, with its transitions and a helper that runs one call to its end. */
function setup(options: CircuitBreakerOptions, start = 0) {
  const clock = createFakeClock(start);
  const transitions: CircuitTransition[] = [];
  const breaker = new CircuitBreaker({ clock, ...options, onTransition: (transition) => transitions.push(transition) });
  const call = (result: Result, key = "t") => {
    const decision = breaker.acquire(key);
    if (!decision.admitted) return decision;
    if (result === "success") breaker.onSuccess(key, decision.permit);
    else if (result === "failure") breaker.onFailure(key, decision.permit);
    else breaker.onNeutral(key, decision.permit);
    return decision;
  };
  const calls = (results: Result[], key = "t") => {
    for (const result of results) call(result, key);
  };
  const opened = () =>
    transitions.filter((transition) => transition.to === "open").map(({ from, failures, resetMs }) => ({ from, failures, resetMs }));
  return { clock, breaker, transitions, call, calls, opened };
}

const F: Result = "failure";
const S: Result = "success";

describe("options", () => {
  it("defaults: the consecutive count, no growth, 10 calls in 60 s once a rate is set", () => {
    const breaker = new CircuitBreaker({ clock: createFakeClock() });
    expect(breaker.failureRate).toBeUndefined();
    expect(breaker.maxResetMs).toBeUndefined();
    expect(breaker.minimumCalls).toBe(10);
    expect(breaker.windowMs).toBe(60_000);
    expect(CIRCUIT_BREAKER_DEFAULTS).toEqual({ threshold: 5, resetMs: 60_000, maxKeys: 10_000, minimumCalls: 10, windowMs: 60_000 });
  });

  const bad: Array<[keyof CircuitBreakerOptions, unknown, RegExp]> = [
    ["failureRate", 0, /expected a number in \(0, 1\], received 0/],
    ["failureRate", 1.5, /received 1.5/],
    ["failureRate", Number.NaN, /received NaN/],
    ["failureRate", "0.5", /received "0.5"/],
    ["minimumCalls", 0, /an integer >= 1, received 0/],
    ["minimumCalls", 2.5, /received 2.5/],
    ["windowMs", 0, /a finite number > 0, received 0/],
    ["windowMs", Number.POSITIVE_INFINITY, /received Infinity/],
    ["maxResetMs", 999, /a finite number >= resetMs \(1000\), received 999/],
    ["maxResetMs", Number.POSITIVE_INFINITY, /received Infinity/],
  ];
  for (const [option, value, message] of bad) {
    it(`rejects ${option}: ${String(value)}, naming the option and the value`, () => {
      const create = () => new CircuitBreaker({ resetMs: 1000, [option]: value });
      expect(create).toThrow(InvalidOptionError);
      expect(create).toThrow(message);
      try {
        create();
      } catch (error) {
        expect(error).toMatchObject({ option, value });
      }
    });
  }

  it("accepts the bounds: a rate of 1, one call, maxResetMs equal to resetMs", () => {
    expect(() => new CircuitBreaker({ resetMs: 1000, failureRate: 1, minimumCalls: 1, maxResetMs: 1000 })).not.toThrow();
  });
});

describe("the failure-rate breaker", () => {
  it("opens once the window holds minimumCalls calls and failures / calls reaches the rate", () => {
    const { breaker, calls, opened } = setup({ failureRate: 0.5, minimumCalls: 4 });
    calls([F, F, S]); // 2 of 3 failed, but fewer than 4 calls
    expect(breaker.state("t")).toBe("closed");
    calls([S]); // 2 of 4: 0.5
    expect(breaker.state("t")).toBe("open");
    expect(opened()).toEqual([{ from: "closed", failures: 2, resetMs: 60_000 }]);
  });

  it("does not use the consecutive count", () => {
    const { breaker, calls } = setup({ threshold: 1, failureRate: 0.5, minimumCalls: 10 });
    calls([F, F, F, F, F, F, F, F, F]);
    expect(breaker.state("t")).toBe("closed");
    calls([F]);
    expect(breaker.state("t")).toBe("open");
  });

  it("stays closed under the rate, however many failures", () => {
    const { breaker, calls } = setup({ failureRate: 0.5, minimumCalls: 2 });
    for (let round = 0; round < 1000; round++) calls([S, S, F]);
    expect(breaker.state("t")).toBe("closed");
    expect(breaker.snapshot().breakers.t?.failures).toBe(1000);
  });

  it("judges after every recorded call: a success that brings the window to minimumCalls can open it", () => {
    const { breaker, calls } = setup({ failureRate: 0.5, minimumCalls: 3 });
    calls([F, F]);
    calls([S]); // 2 of 3 failed
    expect(breaker.state("t")).toBe("open");
  });

  it("does not count neutral results (bad arguments) as calls", () => {
    const { breaker, calls } = setup({ failureRate: 1, minimumCalls: 2 });
    calls([F, "neutral", "neutral", F]);
    expect(breaker.state("t")).toBe("open");
  });

  it("counts a call for at most windowMs and at least 9/10 of it (10 buckets of windowMs / 10)", async () => {
    const late = setup({ failureRate: 1, minimumCalls: 2, windowMs: 1000 });
    await late.clock.advance(150); // bucket 1: [100, 200)
    late.calls([F]);
    await late.clock.advance(949); // t = 1099: bucket 10, the failure's bucket is still among the 10 newest
    late.calls([F]);
    expect(late.breaker.state("t")).toBe("open");

    const expired = setup({ failureRate: 1, minimumCalls: 2, windowMs: 1000 });
    await expired.clock.advance(150);
    expired.calls([F]);
    await expired.clock.advance(950); // t = 1100: bucket 11, the first failure no longer counts
    expired.calls([F]);
    expect(expired.breaker.state("t")).toBe("closed");
    expect(expired.breaker.snapshot().breakers.t?.failures).toBe(1);
  });

  it("slides: old successes stop diluting new failures, and an idle gap of many windows forgets everything", async () => {
    const { breaker, clock, calls } = setup({ failureRate: 0.5, minimumCalls: 4, windowMs: 10_000 });
    calls([S, S, S, S, S, S]);
    await clock.advance(5000);
    calls([F, F, F]); // 3 of 9
    expect(breaker.state("t")).toBe("closed");
    await clock.advance(5000); // the successes left the window
    calls([F]); // 4 of 4
    expect(breaker.state("t")).toBe("open");

    const idle = setup({ failureRate: 1, minimumCalls: 3, windowMs: 1000 });
    idle.calls([F, F]);
    await idle.clock.advance(1_000_000);
    idle.calls([F]);
    expect(idle.breaker.state("t")).toBe("closed");
    expect(idle.breaker.snapshot().breakers.t?.window).toEqual([{ remainingMs: 1000, successes: 0, failures: 1 }]);
  });

  it("keeps a fixed-size window whatever the call rate: at most 10 buckets", async () => {
    const { breaker, clock, calls } = setup({ failureRate: 0.9, minimumCalls: 1, windowMs: 1000 });
    for (let step = 0; step < 500; step++) {
      calls([S, S, F]);
      await clock.advance(37);
    }
    const window = breaker.snapshot().breakers.t?.window ?? [];
    expect(window.length).toBeLessThanOrEqual(10);
    expect(window.every((bucket) => bucket.remainingMs > 0 && bucket.remainingMs <= 1000)).toBe(true);
  });

  it("lets the probe decide half-open as before; when it closes, the window starts empty", async () => {
    const { breaker, clock, calls, transitions } = setup({ failureRate: 1, minimumCalls: 2, resetMs: 1000 });
    calls([F, F]);
    await clock.advance(1000);
    calls([F]); // the probe fails
    expect(breaker.state("t")).toBe("open");
    await clock.advance(1000);
    calls([S]); // the probe succeeds
    expect(breaker.state("t")).toBe("closed");
    calls([F]); // one call in the new window
    expect(breaker.state("t")).toBe("closed");
    calls([F]);
    expect(breaker.state("t")).toBe("open");
    expect(transitions.map(({ from, to }) => `${from}->${to}`)).toEqual([
      "closed->open",
      "open->half-open",
      "half-open->open",
      "open->half-open",
      "half-open->closed",
      "closed->open",
    ]);
  });

  it("ignores results of calls admitted while closed that end while the circuit is open", () => {
    const { breaker } = setup({ failureRate: 1, minimumCalls: 2 });
    const first = breaker.acquire("t");
    const second = breaker.acquire("t");
    const third = breaker.acquire("t");
    if (!first.admitted || !second.admitted || !third.admitted) throw new Error("closed admits");
    breaker.onFailure("t", first.permit);
    breaker.onFailure("t", second.permit);
    expect(breaker.state("t")).toBe("open");
    breaker.onSuccess("t", third.permit);
    expect(breaker.snapshot().breakers.t).toEqual({ state: "open", failures: 2, remainingMs: 60_000 });
  });

  it("tracks every key called, successes included, within maxKeys; without a rate, a key that only succeeds takes no room", () => {
    const rate = setup({ failureRate: 0.5, maxKeys: 100 });
    const count = setup({});
    for (let index = 0; index < 1000; index++) {
      rate.call(S, `tool-${index}`);
      count.call(S, `tool-${index}`);
    }
    expect(rate.breaker.size).toBe(100);
    expect(count.breaker.size).toBe(0);
  });

  it("isolate and reset report the window's failures, and reset empties the window", () => {
    const { breaker, calls, transitions } = setup({ failureRate: 0.9, minimumCalls: 100 });
    calls([F, S, F]);
    breaker.isolate("t");
    breaker.reset("t");
    expect(transitions.map(({ to, failures }) => `${to}:${failures}`)).toEqual(["open:2", "closed:2"]);
    expect(breaker.snapshot().breakers.t).toBeUndefined();
  });
});

describe("growing open periods (maxResetMs)", () => {
  async function failProbe(clock: FakeClock, breaker: CircuitBreaker, call: (result: Result) => unknown) {
    await clock.advance(breaker.peek("t") ?? 0);
    call(F);
  }

  it("doubles the open time after each failed probe up to maxResetMs; a successful probe starts again from resetMs", async () => {
    const { breaker, clock, call, opened } = setup({ threshold: 1, resetMs: 1000, maxResetMs: 5000 });
    call(F);
    const expected = [1000, 2000, 4000, 5000, 5000];
    for (const openMs of expected.slice(1)) {
      await failProbe(clock, breaker, call);
      expect(breaker.acquire("t")).toEqual({ admitted: false, retryAfterMs: openMs, state: "open" });
      expect(breaker.peek("t")).toBe(openMs);
      await clock.advance(openMs - 1);
      expect(breaker.state("t")).toBe("open");
      await clock.advance(1);
      expect(breaker.state("t")).toBe("half-open");
    }
    call(S);
    expect(breaker.state("t")).toBe("closed");
    call(F);
    await failProbe(clock, breaker, call);
    expect(opened().map((transition) => transition.resetMs)).toEqual([...expected, 1000, 2000]);
  });

  it("reports the open time used in the open->half-open transition too", async () => {
    const { breaker, clock, call, transitions } = setup({ threshold: 1, resetMs: 1000, maxResetMs: 8000 });
    call(F);
    await failProbe(clock, breaker, call);
    await clock.advance(2000);
    breaker.acquire("t");
    expect(transitions.map(({ to, resetMs }) => `${to}:${resetMs}`)).toEqual([
      "open:1000",
      "half-open:1000",
      "open:2000",
      "half-open:2000",
    ]);
  });

  it("keeps every open period at resetMs without maxResetMs", async () => {
    const { breaker, clock, call, opened } = setup({ threshold: 1, resetMs: 1000 });
    call(F);
    for (let probe = 0; probe < 4; probe++) await failProbe(clock, breaker, call);
    expect(opened().map((transition) => transition.resetMs)).toEqual([1000, 1000, 1000, 1000, 1000]);
  });

  it("keeps the probe's lease at resetMs during a long open period: a hung probe frees its slot after resetMs", async () => {
    const { breaker, clock, call } = setup({ threshold: 1, resetMs: 1000, maxResetMs: 60_000 });
    call(F);
    for (let probe = 0; probe < 3; probe++) await failProbe(clock, breaker, call); // open for 8000
    await clock.advance(8000);
    const hung = breaker.acquire("t");
    expect(hung.admitted).toBe(true);
    await clock.advance(400);
    expect(breaker.acquire("t")).toEqual({ admitted: false, retryAfterMs: 600, state: "half-open" });
    await clock.advance(600);
    const next = breaker.acquire("t");
    expect(next.admitted).toBe(true);
    if (!hung.admitted || !next.admitted) return;
    breaker.onFailure("t", hung.permit); // stale: changes nothing
    expect(breaker.state("t")).toBe("half-open");
    breaker.onFailure("t", next.permit);
    expect(breaker.peek("t")).toBe(16_000);
  });

  it("grows in the failure-rate mode too, and reset() starts again from resetMs", async () => {
    const { breaker, clock, call, calls, opened } = setup({ failureRate: 1, minimumCalls: 1, resetMs: 1000, maxResetMs: 3000 });
    call(F);
    await failProbe(clock, breaker, call);
    await failProbe(clock, breaker, call);
    expect(breaker.peek("t")).toBe(3000);
    breaker.reset("t");
    calls([F]);
    expect(opened().map((transition) => transition.resetMs)).toEqual([1000, 2000, 3000, 1000]);
  });
});

describe("snapshots", () => {
  it("carry a grown open period's length (openMs) and remaining time; the next failed probe doubles it again", async () => {
    const source = setup({ threshold: 1, resetMs: 1000, maxResetMs: 10_000 });
    source.call(F);
    await source.clock.advance(1000);
    source.call(F); // open for 2000
    await source.clock.advance(500);
    const snapshot = JSON.parse(JSON.stringify(source.breaker.snapshot())) as CircuitSnapshot;
    expect(snapshot).toEqual({ version: 1, breakers: { t: { state: "open", failures: 2, remainingMs: 1500, openMs: 2000 } } });

    const copy = setup({ threshold: 1, resetMs: 1000, maxResetMs: 10_000 }, 1_000_000);
    copy.breaker.restore(snapshot);
    expect(copy.breaker.peek("t")).toBe(1500);
    await copy.clock.advance(1500);
    copy.call(F);
    expect(copy.breaker.peek("t")).toBe(4000);
    expect(copy.breaker.snapshot()).toEqual(
      expect.objectContaining({ breakers: { t: { state: "open", failures: 3, remainingMs: 4000, openMs: 4000 } } }),
    );
  });

  it("restores a grown half-open period, and bounds openMs by the restoring breaker's resetMs and maxResetMs", () => {
    const snapshot: CircuitSnapshot = {
      version: 1,
      breakers: {
        a: { state: "half-open", failures: 3, openMs: 4000 },
        b: { state: "open", failures: 3, remainingMs: 9000, openMs: 9000 },
      },
    };
    const grows = setup({ threshold: 1, resetMs: 1000, maxResetMs: 5000 });
    grows.breaker.restore(snapshot);
    grows.call(F, "a"); // the probe fails: 2 × 4000, bounded by 5000
    expect(grows.breaker.peek("a")).toBe(5000);
    expect(grows.breaker.peek("b")).toBe(5000);
    const fixed = setup({ threshold: 1, resetMs: 1000 });
    fixed.breaker.restore(snapshot);
    expect(fixed.breaker.peek("b")).toBe(1000);
  });

  it("restore older snapshots (no openMs, no window) as before", () => {
    const old: CircuitSnapshot = {
      version: 1,
      breakers: { a: { state: "open", failures: 5, remainingMs: 700 }, b: { state: "closed", failures: 2 } },
    };
    const grows = setup({ threshold: 3, resetMs: 1000, maxResetMs: 5000 });
    grows.breaker.restore(old);
    expect(grows.breaker.peek("a")).toBe(700);
    grows.calls([F], "b");
    expect(grows.breaker.state("b")).toBe("open");
    const rate = setup({ failureRate: 1, minimumCalls: 1, resetMs: 1000 });
    rate.breaker.restore(old);
    expect(rate.breaker.snapshot()).toEqual({ version: 1, breakers: { a: { state: "open", failures: 5, remainingMs: 700 } } });
  });

  it("carry the window as remaining-time buckets: restored counts keep counting until the same moment", async () => {
    const source = setup({ failureRate: 0.5, minimumCalls: 4, windowMs: 1000 });
    source.calls([S, F]);
    await source.clock.advance(450);
    source.calls([F]);
    await source.clock.advance(100);
    const snapshot = JSON.parse(JSON.stringify(source.breaker.snapshot())) as CircuitSnapshot;
    expect(snapshot.breakers.t).toEqual({
      state: "closed",
      failures: 2,
      window: [
        { remainingMs: 450, successes: 1, failures: 1 },
        { remainingMs: 850, successes: 0, failures: 1 },
      ],
    });

    // Restored at the same bucket phase (t = 70,550 here, 550 there): the same buckets, the same end times.
    const copy = setup({ failureRate: 0.5, minimumCalls: 4, windowMs: 1000 }, 70_550);
    copy.breaker.restore(snapshot);
    expect(copy.breaker.snapshot()).toEqual(snapshot);
    copy.calls([S]); // 2 of 4
    expect(copy.breaker.state("t")).toBe("open");

    // At another phase, each bucket ends at the boundary just before its end time, never after it.
    const shifted = setup({ failureRate: 0.5, minimumCalls: 3, windowMs: 1000 }, 70_000);
    shifted.breaker.restore(snapshot);
    expect(shifted.breaker.snapshot().breakers.t?.window).toEqual([
      { remainingMs: 400, successes: 1, failures: 1 },
      { remainingMs: 800, successes: 0, failures: 1 },
    ]);
    await shifted.clock.advance(400); // the first bucket (S, F) stopped counting
    shifted.calls([S]); // F, S: 2 calls
    expect(shifted.breaker.state("t")).toBe("closed");
    shifted.calls([S]); // F, S, S: 1 of 3
    expect(shifted.breaker.state("t")).toBe("closed");
    expect(shifted.breaker.snapshot().breakers.t?.failures).toBe(1);
  });

  it("say nothing new for a consecutive-count breaker without growth", () => {
    const { breaker, calls } = setup({ threshold: 2, resetMs: 1000 });
    calls([F, F]);
    calls([F], "b");
    expect(breaker.snapshot()).toEqual({
      version: 1,
      breakers: { t: { state: "open", failures: 2, remainingMs: 1000 }, b: { state: "closed", failures: 1 } },
    });
  });

  const bad: unknown[] = [
    { version: 1, breakers: { ok: { state: "open", failures: 1, remainingMs: 10 }, x: { state: "open", failures: 1, openMs: 0 } } },
    { version: 1, breakers: { ok: { state: "open", failures: 1, remainingMs: 10 }, x: { state: "open", failures: 1, openMs: "long" } } },
    { version: 1, breakers: { ok: { state: "open", failures: 1, remainingMs: 10 }, x: { state: "closed", failures: 1, window: {} } } },
    {
      version: 1,
      breakers: {
        ok: { state: "open", failures: 1, remainingMs: 10 },
        x: { state: "closed", failures: 1, window: [{ remainingMs: 5, successes: -1, failures: 1 }] },
      },
    },
    {
      version: 1,
      breakers: {
        ok: { state: "open", failures: 1, remainingMs: 10 },
        x: { state: "closed", failures: 1, window: [{ successes: 1, failures: 1 }] },
      },
    },
  ];
  for (const snapshot of bad) {
    it(`reject ${JSON.stringify(snapshot)} and change nothing`, () => {
      const { breaker, call } = setup({ threshold: 1, failureRate: 1, minimumCalls: 1 });
      call(F, "kept");
      const before = breaker.snapshot();
      expect(() => breaker.restore(snapshot as CircuitSnapshot)).toThrow(TypeError);
      expect(breaker.snapshot()).toEqual(before);
    });
  }
});
