import { describe, expect, it } from "vitest";
import { RetryBudgets } from "../src/budget/retry-budget.js";
import { InvalidOptionError, RetryReflectPlugin } from "../src/index.js";
import { CircuitBreaker } from "../src/primitives.js";
import type { BudgetShare, BudgetShareReply } from "../src/stores.js";
import { createFakeClock, drive, recordEvents } from "../src/testing.js";
import { RETRY_BUDGET_SPENT_ACTION } from "../src/texts/model-texts.js";

// The retry budget: within the sliding window, a tool's in-place retries are at most
// ratio × its logical calls + minPerSecond × the window's seconds. Spent, a transient failure is
// not retried in place: the call ends `reflect` with RETRY_BUDGET_SPENT and a wait.

const unavailable = () => Object.assign(new Error("503 Service Unavailable"), { status: 503 });

describe("the budget's arithmetic (RetryBudgets, on a fake clock's times)", async () => {
  it("allows ratio × calls retries in the window, then says how long until it has room", async () => {
    const budgets = new RetryBudgets(100);
    const settings = { ratio: 0.5, minPerSecond: 0, windowMs: 10_000 };
    for (let call = 0; call < 10; call++) budgets.recordCall("t", settings, 0);
    const taken = await Promise.all(Array.from({ length: 6 }, () => budgets.takeRetry("t", settings, 500)));
    // Spent; with no floor, only new calls make room: the hint is one window.
    expect(taken).toEqual([0, 0, 0, 0, 0, 10_000]);
    budgets.recordCall("t", settings, 600);
    budgets.recordCall("t", settings, 600);
    expect(await budgets.takeRetry("t", settings, 600)).toBe(0); // 12 calls: 6 retries
  });

  it("has a floor of minPerSecond × the window's seconds, whatever the calls", async () => {
    const budgets = new RetryBudgets(100);
    const settings = { ratio: 0, minPerSecond: 0.5, windowMs: 4_000 }; // 2 retries per window
    // The window slides in tenths (400 ms here): the retries taken at 1 000 ms (800-1 200) leave it at 4 800 ms.
    expect(await Promise.all([0, 1, 2].map(() => budgets.takeRetry("t", settings, 1_000)))).toEqual([0, 0, 3_800]);
    expect(await budgets.takeRetry("t", settings, 4_000)).toBe(800);
    expect(await budgets.takeRetry("t", settings, 4_800)).toBe(0);
  });

  it("slides: old calls stop counting, old retries stop costing", async () => {
    const budgets = new RetryBudgets(100);
    const settings = { ratio: 0.1, minPerSecond: 0, windowMs: 10_000 };
    for (let call = 0; call < 20; call++) budgets.recordCall("t", settings, 0); // 2 retries
    expect(await budgets.takeRetry("t", settings, 0)).toBe(0);
    expect(await budgets.takeRetry("t", settings, 0)).toBe(0);
    for (let call = 0; call < 10; call++) budgets.recordCall("t", settings, 5_000); // +1 retry
    expect(await budgets.takeRetry("t", settings, 5_000)).toBe(0);
    // 30 calls, 3 retries: spent, and old buckets leaving would not help (no floor): the hint is one window.
    expect(await budgets.takeRetry("t", settings, 5_000)).toBe(10_000);
    // At 10 s bucket 0 (20 calls, 2 retries) has left: 10 calls, 1 retry: still spent.
    expect(await budgets.takeRetry("t", settings, 10_000)).toBe(10_000);
    for (let call = 0; call < 10; call++) budgets.recordCall("t", settings, 10_000);
    expect(await budgets.takeRetry("t", settings, 10_000)).toBe(0); // 20 calls, 2 retries
  });

  it("counts each tool on its own", async () => {
    const budgets = new RetryBudgets(100);
    const settings = { ratio: 0, minPerSecond: 0.1, windowMs: 10_000 }; // 1 retry per window
    expect(await budgets.takeRetry("a", settings, 0)).toBe(0);
    expect(await budgets.takeRetry("a", settings, 0)).toBeGreaterThan(0);
    expect(await budgets.takeRetry("b", settings, 0)).toBe(0);
  });
});

describe("a plugin with a retry budget", () => {
  function setup(options: Parameters<typeof RetryReflectPlugin.create>[0] = {}) {
    const clock = createFakeClock();
    const events = recordEvents();
    const plugin = RetryReflectPlugin.create({ clock, observers: [events], maxRetries: 3, ...options });
    const runs = new Map<string, number>();
    let failing = true;
    const call = (toolName = "search") =>
      plugin.execute({ toolName, args: {}, scope: "run-1" }, () => {
        runs.set(toolName, (runs.get(toolName) ?? 0) + 1);
        if (failing) throw unavailable();
        return "ok";
      });
    return {
      clock,
      events,
      plugin,
      call,
      runs: (toolName = "search") => runs.get(toolName) ?? 0,
      heal: () => {
        failing = false;
      },
    };
  }

  it("turns an in-place retry it cannot afford into a recoverable failure that says when to call again", async () => {
    // 1 retry per 10 s window, whatever the calls; the wait's spread at its least (random 0): the
    // window has room again in 9.5 s, the wait told and kept at the gate.
    const { clock, events, call, runs } = setup({ retryBudget: { ratio: 0, minPerSecond: 0.1, windowMs: 10_000 }, random: () => 0 });

    const outcome = await drive(clock, call());

    expect(runs()).toBe(2); // the first attempt and the one retry the budget allows
    expect(outcome.status).toBe("reflect");
    if (outcome.status !== "reflect") return;
    expect(outcome.error.toJSON()).toEqual({
      error_code: "RETRY_BUDGET_SPENT",
      message: "503 Service Unavailable",
      recoverable: true,
      suggested_action: RETRY_BUDGET_SPENT_ACTION,
      retry_after_ms: 9_500,
      details: { last_error_code: "TRANSIENT" },
    });
    expect(outcome.message).toMatch(
      /^The tool 'search' is temporarily unavailable: "503 Service Unavailable"\. It may work again in about 10 s: call it again then with the same arguments/,
    );
    expect(outcome.message).not.toMatch(/\bdo not\b[^.\n]*\bagain\b/i);
    expect(events.lines().filter((line) => line.includes("retry budget spent"))).toEqual([
      'WARN retry budget spent tool_name="search" window_ms=10000 retry_after_ms=9500',
    ]);
  });

  it("retries in place again once the window has room", async () => {
    const { clock, call, runs, heal } = setup({ retryBudget: { ratio: 0, minPerSecond: 0.1, windowMs: 10_000 } });
    await drive(clock, call()); // spends the one retry
    expect(runs()).toBe(2);
    await clock.advance(10_000);
    heal();
    // Healthy now: the call after the wait succeeds (no retry needed); a failing one could retry again.
    const outcome = await drive(clock, call());
    expect(outcome).toMatchObject({ status: "success", value: "ok" });
  });

  it("counts the healthy calls made directly: ratio × calls retries for a tool that starts failing", async () => {
    const clock = createFakeClock();
    // No backoff and a breaker that stays closed: only the budget stops the retries.
    const plugin = RetryReflectPlugin.create({
      clock,
      maxRetries: 50,
      initialBackoffMs: 0,
      circuitBreakerThreshold: 1_000,
      retryBudget: { ratio: 0.1, minPerSecond: 0, windowMs: 10_000 },
    });
    let executions = 0;
    const run = (fail: boolean) =>
      plugin.execute({ toolName: "search", args: {}, scope: "run-1" }, () => {
        executions += 1;
        if (fail) throw unavailable();
        return "ok";
      });
    for (let index = 0; index < 99; index++) expect((await run(false)).status).toBe("success");
    const outcome = await drive(clock, run(true));
    expect(executions - 99).toBe(11); // 100 calls in the window: its first attempt and 10 retries
    expect(outcome.status === "reflect" && outcome.error.code).toBe("RETRY_BUDGET_SPENT");
  });

  it("caps the retries of many calls in flight at once: the budget, not calls × maxRetries", async () => {
    const { clock, plugin, events } = setup({
      circuitBreakerThreshold: 1_000, // the budget alone, not the breaker
      retryBudget: { ratio: 0.1, minPerSecond: 0, windowMs: 10_000 },
    });
    let executions = 0;
    const calls = Array.from({ length: 200 }, (_, index) =>
      plugin.execute({ toolName: "search", args: { index }, scope: `run-${index}` }, () => {
        executions += 1;
        throw unavailable();
      }),
    );
    const outcomes = await drive(clock, Promise.all(calls));
    // 200 calls allow 20 retries; without the budget it would be 200 × 3 = 600 more executions.
    expect(executions).toBe(220);
    expect(outcomes.every((outcome) => outcome.status === "reflect" && outcome.error.code === "RETRY_BUDGET_SPENT")).toBe(true);
    expect(events.types().filter((type) => type === "retry_budget_spent")).toHaveLength(200);
  });

  it("spreads the callers it turns away together over [the window's wait, that wait + the window], so that they do not come back as one herd", async () => {
    // 1 retry per 10 s window: of 100 callers failing at once, 99 are turned away in the same ms
    // (and the one that retried, when its retry fails at 500 ms).
    let draw = 0;
    const { clock, plugin, events } = setup({
      circuitBreakerThreshold: 1_000,
      maxRetries: 1,
      retryBudget: { ratio: 0, minPerSecond: 0.1, windowMs: 10_000 },
      random: () => (draw++ * 0.618_034) % 1, // an even spread, known in advance
    });
    const outcomes = await drive(
      clock,
      Promise.all(
        Array.from({ length: 100 }, (_, index) =>
          plugin.execute({ toolName: "search", args: { index }, scope: `run-${index}` }, () => {
            throw unavailable();
          }),
        ),
      ),
    );
    const waits = outcomes.flatMap((outcome) =>
      outcome.status === "reflect" && outcome.error.code === "RETRY_BUDGET_SPENT" ? [outcome.error.retryAfterMs ?? -1] : [],
    );
    expect(waits).toHaveLength(100);
    // Never sooner than the window has room (10 s from 0, the retry taken at 500 ms), never more than a window later.
    expect(Math.min(...waits)).toBeGreaterThanOrEqual(9_500);
    expect(Math.max(...waits)).toBeLessThan(20_000);
    // Spread: about a tenth of them in each second of that window (they came back in one ms before).
    const perSecond = new Map<number, number>();
    for (const wait of waits) perSecond.set(Math.floor(wait / 1000), (perSecond.get(Math.floor(wait / 1000)) ?? 0) + 1);
    expect(perSecond.size).toBe(10);
    expect(Math.max(...perSecond.values())).toBeLessThanOrEqual(12);
    // The model is told the wait its next call will meet at the gate, and so is the event.
    const told = events.events.filter((event) => event.type === "retry_budget_spent").map((event) => event.fields.retry_after_ms);
    const ascending = (values: readonly unknown[]) => values.map(Number).sort((a, b) => a - b);
    expect(ascending(told)).toEqual(ascending(waits)); // the events in time order, the outcomes in call order
  });

  it("is per tool: a tool's own budget, and false to turn the plugin's off for one tool", async () => {
    const { clock, call, runs } = setup({
      retryBudget: { ratio: 0, minPerSecond: 0.1, windowMs: 10_000 },
      tools: { lookup: { retryBudget: false }, fetch: { retryBudget: { minPerSecond: 0.2 } } },
    });
    await drive(clock, call("search"));
    await drive(clock, call("lookup"));
    await drive(clock, call("fetch"));
    expect(runs("search")).toBe(2); // the plugin's budget: 1 retry
    expect(runs("lookup")).toBe(6); // no budget: in place within the patience (at 0, 0.5, 1.5, 3.5, 7.5 and 11.5 s)
    expect(runs("fetch")).toBe(3); // its own: 2 retries (windowMs and ratio from the plugin's)
  });

  it("never throttles a reflection (bad arguments go back to the model, as without a budget)", async () => {
    const clock = createFakeClock();
    const plugin = RetryReflectPlugin.create({ clock, retryBudget: { ratio: 0, minPerSecond: 0, windowMs: 10_000 } });
    const outcome = await plugin.execute({ toolName: "geocode", args: {}, scope: "s" }, () => {
      throw new Error("Invalid input: city must be a city name");
    });
    expect(outcome.status === "reflect" && outcome.error.code).toBe("INVALID_ARGUMENTS");
  });

  it("refuses a bad retryBudget when the plugin is made, naming the option and the value", () => {
    const create = (retryBudget: unknown, tools?: unknown) =>
      RetryReflectPlugin.create({ retryBudget, ...(tools === undefined ? {} : { tools }) } as never);
    expect(() => create(5)).toThrow(InvalidOptionError);
    expect(() => create(5)).toThrow(/`retryBudget`.*5/);
    expect(() => create(true)).toThrow(/`retryBudget`/);
    expect(() => create({ ratio: -1 })).toThrow(/`retryBudget.ratio`.*-1/);
    expect(() => create({ windowMs: 0 })).toThrow(/`retryBudget.windowMs`.*> 0/);
    expect(() => create({ minPerSecond: Number.NaN })).toThrow(/`retryBudget.minPerSecond`/);
    expect(() => create({ perSecond: 1 })).toThrow(/`retryBudget.perSecond`/);
    expect(() => create(undefined, { pay: { retryBudget: { ratio: "10%" } } })).toThrow(/`tools.pay.retryBudget.ratio`/);
    // Members left out take the default's.
    expect(RetryReflectPlugin.create({ retryBudget: {} }).options.retryBudget).toEqual({ ratio: 0.05, minPerSecond: 1, windowMs: 10_000 });
  });
});

/**
 * A fleet's shared windows in memory, as the Redis store keeps them: counts per bucket of the
 * store's own clock (`now`), the ten newest live, one retry taken atomically when there is room.
 * `io` counts the shares.
 */
function memoryFleet(now: () => number) {
  const windows = new Map<string, Map<number, [number, number]>>();
  const fleet = {
    io: 0,
    down: false,
    share: async (key: string, share: BudgetShare): Promise<BudgetShareReply> => {
      fleet.io += 1;
      await Promise.resolve(); // the round trip
      if (fleet.down) throw new Error("connect ECONNREFUSED 127.0.0.1:6379");
      const bucket = Math.floor((now() * 10) / share.windowMs);
      const window = windows.get(key) ?? new Map<number, [number, number]>();
      windows.set(key, window);
      for (let at = 0; at < share.counts.length; at += 3) {
        const [age, calls, retries] = share.counts.slice(at, at + 3) as [number, number, number];
        const counts = window.get(bucket - age) ?? [0, 0];
        window.set(bucket - age, [counts[0] + calls, counts[1] + retries]);
      }
      for (const index of window.keys()) if (index <= bucket - 10) window.delete(index);
      let calls = 0;
      let retries = 0;
      for (const [c, r] of window.values()) {
        calls += c;
        retries += r;
      }
      const taken = share.take && retries + 1 <= share.ratio * calls + (share.minPerSecond * share.windowMs) / 1000;
      if (taken) {
        const counts = window.get(bucket) ?? [0, 0];
        window.set(bucket, [counts[0], counts[1] + 1]);
      }
      return { taken, buckets: [...window].flatMap(([index, [c, r]]) => [bucket - index, c, r]) };
    },
    total: (key: string) => [...(windows.get(key)?.values() ?? [])].reduce((sum, [, retries]) => sum + retries, 0),
  };
  return fleet;
}

describe("a budget shared by a fleet (CircuitBreakerStore.shareBudget)", () => {
  const settings = { ratio: 0, minPerSecond: 1, windowMs: 10_000 }; // 10 retries per window, fleet-wide

  it("is one budget for 4 processes: each retry is taken by the store, atomically", async () => {
    const fleet = memoryFleet(() => 500);
    const processes = Array.from({ length: 4 }, () => new RetryBudgets(100, fleet.share));
    // 40 retries asked at once, 10 per process: alone, each process would allow its own 10.
    const asked = processes.flatMap((budgets) => Array.from({ length: 10 }, () => budgets.takeRetry("search", settings, 500)));
    const waits = await Promise.all(asked);
    expect(waits.filter((wait) => wait === 0)).toHaveLength(10);
    expect(fleet.total("search")).toBe(10);
    expect(waits.filter((wait) => wait > 0)).toEqual(Array.from({ length: 30 }, () => 9_500));
  });

  it("tells the fleet the calls of a tool that failed here, at most once a second; a healthy tool costs no share", async () => {
    let now = 0;
    const fleet = memoryFleet(() => now);
    const failing = new RetryBudgets(100, fleet.share);
    const healthy = new RetryBudgets(100, fleet.share);
    const ratio = { ratio: 0.5, minPerSecond: 0, windowMs: 10_000 };
    for (let call = 0; call < 100; call++) healthy.recordCall("lookup", ratio, call * 10);
    expect(fleet.io).toBe(0);
    for (let call = 0; call < 10; call++) failing.recordCall("search", ratio, 0);
    expect(await failing.takeRetry("search", ratio, 0)).toBe(0); // 10 calls: 5 retries; the calls go with it
    expect(fleet.io).toBe(1);
    for (let call = 0; call < 100; call++) failing.recordCall("search", ratio, 10 + call); // within the second: no share
    expect(fleet.io).toBe(1);
    now = 1_000;
    failing.recordCall("search", ratio, 1_000); // a second on: one share of the 101 calls
    await Promise.resolve();
    expect(fleet.io).toBe(2);
    // The fleet now holds 111 calls: 55 retries in all.
    now = 1_100;
    const waits = await Promise.all(Array.from({ length: 60 }, () => failing.takeRetry("search", ratio, 1_100)));
    expect(waits.filter((wait) => wait === 0)).toHaveLength(54);
  });

  it("is judged here when the store does not answer, and the counts go with the next share", async () => {
    let now = 0;
    const fleet = memoryFleet(() => now);
    const errors: string[] = [];
    const budgets = new RetryBudgets(100, fleet.share, (key, error) => errors.push(`${key}: ${(error as Error).message}`));
    fleet.down = true;
    // Alone: 10 retries here.
    const waits = await Promise.all(Array.from({ length: 12 }, () => budgets.takeRetry("search", settings, 0)));
    expect(waits.filter((wait) => wait === 0)).toHaveLength(10);
    expect(errors[0]).toBe("search: connect ECONNREFUSED 127.0.0.1:6379");
    fleet.down = false;
    now = 2_000;
    // Back: the 10 retries taken meanwhile reach the fleet with the next share, and count there.
    expect(await budgets.takeRetry("search", settings, 2_000)).toBe(8_000);
    expect(fleet.total("search")).toBe(10);
  });
});

describe("a plugin over a store that shares budgets", () => {
  it("asks the store for each in-place retry, and shares nothing for a healthy tool", async () => {
    const clock = createFakeClock();
    const fleet = memoryFleet(() => clock.now());
    const store = new CircuitBreaker({ clock }) as unknown as Record<string, unknown>;
    const breakerStore = {
      isClosed: (key: string) => (store.isClosed as (key: string) => boolean).call(store, key),
      peek: (key: string) => (store.peek as (key: string) => number | undefined).call(store, key),
      state: (key: string) => (store.state as (key: string) => "closed").call(store, key),
      acquire: async () => ({ admitted: true as const, permit: { probe: 0 } }),
      record: async () => undefined,
      isolate: async () => undefined,
      reset: async () => undefined,
      shareBudget: fleet.share,
    };
    const plugins = [0, 1].map(() =>
      RetryReflectPlugin.create({
        clock,
        circuitBreakerStore: breakerStore,
        maxRetries: 5,
        retryBudget: { ratio: 0, minPerSecond: 0.2, windowMs: 10_000 }, // 2 retries per window, fleet-wide
      }),
    );
    let executions = 0;
    const call = (plugin: RetryReflectPlugin, fail: boolean) =>
      plugin.execute({ toolName: "search", args: {}, scope: "s" }, () => {
        executions += 1;
        if (fail) throw unavailable();
        return "ok";
      });
    for (const plugin of plugins) await call(plugin, false);
    expect(fleet.io).toBe(0);
    const outcomes = await drive(clock, Promise.all(plugins.map((plugin) => call(plugin, true))));
    expect(executions - 2).toBe(4); // 2 first attempts, 2 retries fleet-wide (4 if each process had its own)
    expect(outcomes.map((outcome) => outcome.status === "reflect" && outcome.error.code)).toEqual([
      "RETRY_BUDGET_SPENT",
      "RETRY_BUDGET_SPENT",
    ]);
  });
});

it("refuses a circuitBreakerStore whose shareBudget is not a function", () => {
  const store = {
    isClosed: () => true,
    peek: () => undefined,
    state: () => "closed",
    acquire: () => undefined,
    record: () => undefined,
    isolate: () => undefined,
    reset: () => undefined,
  };
  expect(() => RetryReflectPlugin.create({ circuitBreakerStore: { ...store, shareBudget: 1 } as never })).toThrow(
    /`circuitBreakerStore.shareBudget`.*1/,
  );
  expect(() => RetryReflectPlugin.create({ circuitBreakerStore: store as never })).not.toThrow();
});
