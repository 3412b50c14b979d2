// The load section of `npm run bench:agents` (issue 26): the load model (failure probability
// against load, the sliding window the load is counted in), the amplification accounting, and a
// few small fleets end to end, reproducible from their seed.

import { describe, expect, it } from "vitest";
import { CONTESTANTS } from "../src/agents/contestants.js";
import {
  arrivals,
  COLLAPSE,
  type FleetRecord,
  failureProbability,
  LOAD,
  LOAD_CONTESTANTS,
  LOADS,
  LoadedService,
  type LoadSpec,
  runFleet,
  summariseLoad,
  withAgents,
} from "../src/agents/load.js";
import { LOAD_GOAL, loadGoal, loadSection } from "../src/agents/report.js";
import { perceive } from "../src/agents/simulated-model.js";

const model = { capacityPerSecond: 40, maxFailure: 0.9, windowMs: 1_000 };

const contestant = (name: string) => {
  const found = LOAD_CONTESTANTS.find((entry) => entry.name === name);
  if (found === undefined) throw new Error(`no contestant ${name}`);
  return found;
};

/** A service on a clock the test moves, and a generator that returns `draw`. */
function service(draw = 0.5) {
  let now = 0;
  const loaded = new LoadedService(
    model,
    () => now,
    () => draw,
  );
  return {
    loaded,
    at: (ms: number) => {
      now = ms;
    },
    run: () =>
      loaded
        .execute(async () => "ok")
        .then(
          () => "ok" as const,
          (error: unknown) => (error as { status?: number }).status,
        ),
  };
}

describe("the load model", () => {
  it("fails with probability load / capacity, capped at maxFailure, never below 0", () => {
    expect(failureProbability(model, 0)).toBe(0);
    expect(failureProbability(model, 10)).toBeCloseTo(0.25, 12);
    expect(failureProbability(model, 20)).toBeCloseTo(0.5, 12);
    expect(failureProbability(model, 36)).toBeCloseTo(0.9, 12);
    expect(failureProbability(model, 400)).toBe(0.9);
    expect(failureProbability(model, -5)).toBe(0);
    const loads = Array.from({ length: 100 }, (_, index) => index);
    const ps = loads.map((load) => failureProbability(model, load));
    for (let index = 1; index < ps.length; index++) expect(ps[index]).toBeGreaterThanOrEqual(ps[index - 1] ?? 0);
  });

  it("counts the load as the executions started in the last window, the new one included, per second", async () => {
    const { loaded, at, run } = service(1); // a draw of 1 never fails
    for (let index = 0; index < 10; index++) await run();
    expect(loaded.peakLoad).toBe(10);
    at(999);
    await run(); // the ten at 0 ms are still within (−1 ms, 999 ms]
    expect(loaded.peakLoad).toBe(11);
    at(1_000);
    await run(); // the ten at 0 ms have left: the ones at 999 and 1 000 ms
    expect(loaded.meanLoad).toBeCloseTo((10 * 5.5 + 11 + 2) / 12, 12);
    expect(loaded.executions).toBe(12);
    expect(loaded.failures).toBe(0);
  });

  it("fails an execution when its draw falls below the probability of the load it meets, with a 503 the model reads as transient", async () => {
    const { loaded, run } = service(0.5);
    const outcomes = [];
    // Loads 1..30 per second: p = load / 40 passes 0.5 at the 21st (p = 0.525).
    for (let index = 0; index < 30; index++) outcomes.push(await run());
    expect(outcomes.slice(0, 20).every((outcome) => outcome === "ok")).toBe(true);
    expect(outcomes.slice(20).every((outcome) => outcome === 503)).toBe(true);
    expect(loaded.failures).toBe(10);
    const error = await loaded.execute(async () => "ok").catch((caught: unknown) => caught as Error);
    expect(perceive(String(error))).toBe("transient");
  });

  it("amplification is the executions per logical call: 1 with nothing retried, more with retries in place, less with refusals", () => {
    const { loaded } = service();
    expect(loaded.amplification).toBe(1);
    loaded.countCall();
    loaded.countCall();
    loaded.executions = 2;
    expect(loaded.amplification).toBe(1);
    loaded.executions = 5; // two calls, three retries in place
    expect(loaded.amplification).toBe(2.5);
    loaded.executions = 1; // one call refused without running
    expect(loaded.amplification).toBe(0.5);
  });

  it("a fleet's arrivals are seeded, within the arrival span; --agents keeps the rate", () => {
    const spec = withAgents(LOAD, 100);
    expect(spec.arrivalMs).toBe(6_000);
    expect(spec.capacityPerSecond).toBe(LOAD.capacityPerSecond);
    const times = arrivals(spec, 1, 0);
    expect(times).toHaveLength(100);
    expect(times.every((time) => time >= 0 && time < spec.arrivalMs)).toBe(true);
    expect(arrivals(spec, 1, 0)).toEqual(times);
    expect(arrivals(spec, 1, 1)).not.toEqual(times);
    expect(withAgents(LOAD, LOAD.agents)).toBe(LOAD);
  });
});

describe("fleets (small ones, end to end through createAgent)", () => {
  const small: LoadSpec = { ...withAgents(LOAD, 40), name: LOAD.name };

  it("counts every logical call once: the plain agent never runs a call twice, toolRetryMiddleware does in place", {
    timeout: 60_000,
  }, async () => {
    const plain = await runFleet(small, contestant("no middleware"), 1, 0);
    expect(plain.results).toHaveLength(40);
    expect(plain.calls).toBeGreaterThanOrEqual(40);
    // A slip the schema refuses is a call without an execution; nothing runs twice.
    expect(plain.executions).toBeLessThanOrEqual(plain.calls);
    expect(plain.failures).toBeGreaterThan(0);
    const retrying = await runFleet(small, contestant("toolRetryMiddleware"), 1, 0);
    expect(retrying.executions).toBeGreaterThan(retrying.calls);
    const summary = summariseLoad(small, "toolRetryMiddleware", [retrying]);
    expect(summary.amplification).toBeCloseTo(retrying.executions / retrying.calls, 12);
    expect(summary.executionsPerTask).toBeCloseTo(retrying.executions / 40, 12);
    expect(summary.failureRate).toBeCloseTo(retrying.failures / retrying.executions, 12);
    expect(summary.summary.episodes).toBe(40);
  });

  it("against a service that never fails, every task succeeds at no amplification, for peers and retry-reflect with one shared plugin", {
    timeout: 60_000,
  }, async () => {
    const healthy: LoadSpec = { ...small, capacityPerSecond: 1e12 };
    for (const name of ["no middleware", "retry-reflect", "retry-reflect (retryBudget: {})"]) {
      const fleet = await runFleet(healthy, contestant(name), 1, 0);
      expect(fleet.failures, name).toBe(0);
      expect(
        fleet.results.every((result) => result.success),
        name,
      ).toBe(true);
      expect(fleet.executions, name).toBeLessThanOrEqual(fleet.calls);
    }
  });

  it("is reproducible from its seed", { timeout: 60_000 }, async () => {
    const budget = contestant("retry-reflect (circuitBreakerFailureRate: 0.9, retryBudget: {})");
    const first = await runFleet(small, budget, 3, 0);
    const again = await runFleet(small, budget, 3, 0);
    expect(again).toEqual(first);
  });

  it("a budget spent ends calls with RETRY_BUDGET_SPENT, which the model reads by its 503 (transient), as the peers' texts", {
    timeout: 60_000,
  }, async () => {
    // A smaller service, so that the careful peer's three attempts run out too.
    const strained: LoadSpec = { ...small, capacityPerSecond: 5 };
    const texts: string[] = [];
    await runFleet(strained, contestant("retry-reflect (circuitBreakerFailureRate: 0.9, retryBudget: {})"), 1, 0, {
      onFailureText: (text) => texts.push(text),
    });
    const spent = texts.filter((text) => text.includes('"error_code":"RETRY_BUDGET_SPENT"'));
    expect(spent.length).toBeGreaterThan(0);
    for (const text of spent) expect(perceive(text)).toBe("transient");
    const careful: string[] = [];
    await runFleet(strained, contestant("toolRetryMiddleware (careful)"), 1, 0, { onFailureText: (text) => careful.push(text) });
    expect(careful.length).toBeGreaterThan(0);
    expect(careful.every((text) => perceive(text) === "transient")).toBe(true);
  });
});

describe("the load section of the report", () => {
  const fleet = (contestantName: string, successes: number, calls: number, executions: number): FleetRecord => ({
    load: LOAD.name,
    contestant: contestantName,
    trial: 0,
    results: Array.from({ length: 10 }, (_, index) => ({
      success: index < successes,
      outcome: index < successes ? "answered" : "gave-up",
      modelCalls: 3,
      toolExecutions: executions / 10,
      duplicates: 0,
      virtualMs: 5_000,
    })),
    calls,
    executions,
    failures: executions / 2,
    peakLoad: 30,
    meanLoad: 20,
    spanMs: 70_000,
  });

  it("judges each row with a budget by issue 26's goal: amplification and task success against the best other row", () => {
    const spec = withAgents(LOAD, 10);
    const rows = [
      summariseLoad(spec, "toolRetryMiddleware (careful)", [fleet("toolRetryMiddleware (careful)", 8, 12, 30)]),
      summariseLoad(spec, "retry-reflect (retryBudget: {})", [fleet("retry-reflect (retryBudget: {})", 8, 12, 13)]),
      summariseLoad(spec, "retry-reflect (retryBudget: { minPerSecond: 0.1 })", [
        fleet("retry-reflect (retryBudget: { minPerSecond: 0.1 })", 6, 12, 12),
      ]),
    ];
    expect(rows[0]?.amplification).toBe(2.5);
    const [careful, spent, tuned] = rows as [(typeof rows)[0], (typeof rows)[0], (typeof rows)[0]];
    expect(loadGoal(rows, spent).met).toBe(true); // 1.083× and 0 points behind
    const behind = loadGoal(rows, tuned);
    expect(behind.met).toBe(false); // 1.0× but 20 points behind
    expect(behind.text).toContain("(within 2: missed)");
    expect(LOAD_GOAL.amplification).toBe(1.1);
    const markdown = loadSection({ spec, seed: 1, workers: 1, seconds: 1, summaries: rows }).join("\n");
    expect(markdown).toContain("## Degraded under load");
    expect(markdown).toContain("met by retry-reflect (retryBudget: {}); missed by the other 1 row with a budget.");
    expect(markdown).toContain(`| ${careful.summary.contestant} | 2.500× |`);
  });

  it("reports the collapsing service as a section of its own: its model, its heading, its own rerun command", () => {
    expect(LOADS).toEqual([LOAD, COLLAPSE]);
    expect(COLLAPSE).toMatchObject({
      agents: LOAD.agents,
      arrivalMs: LOAD.arrivalMs,
      capacityPerSecond: LOAD.capacityPerSecond,
      maxFailure: 1,
    });
    // Past its capacity nothing gets through, where the capped service still answers one in ten.
    expect(failureProbability(COLLAPSE, COLLAPSE.capacityPerSecond)).toBe(1);
    expect(failureProbability(COLLAPSE, 400)).toBe(1);
    expect(failureProbability(LOAD, 400)).toBeCloseTo(0.9, 12);
    const spec = withAgents(COLLAPSE, 10);
    const rows = [summariseLoad(spec, "no middleware", [{ ...fleet("no middleware", 3, 10, 10), load: spec.name }])];
    const markdown = loadSection({ spec, seed: 1, workers: 1, seconds: 1, summaries: rows }).join("\n");
    expect(markdown).toContain("## Degraded under load, collapsing");
    expect(markdown).toContain("p = min(1, load / 36)");
    expect(markdown).toContain("--cells=degraded-under-load-collapse --out=none");
    const capped = loadSection({ spec: withAgents(LOAD, 10), seed: 1, workers: 1, seconds: 1, summaries: [rows[0] as (typeof rows)[0]] });
    expect(capped.join("\n")).toContain("the next section (`degraded-under-load-collapse`)");
  });

  it("runs every grid contestant but the two whose differences never act here, and the budget's candidates", () => {
    const names = LOAD_CONTESTANTS.map((entry) => entry.name);
    expect(names).toContain("retry-reflect");
    expect(names.filter((name) => name.includes("retryBudget")).length).toBeGreaterThanOrEqual(2);
    for (const peer of CONTESTANTS.filter((entry) => !entry.name.startsWith("retry-reflect"))) expect(names).toContain(peer.name);
  });
});
