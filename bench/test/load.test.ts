// The load section of `npm run bench:agents` (issue 26): the load model (failure probability
// against load, the sliding window the load is counted in), the amplification accounting, and a
// few small fleets end to end, reproducible from their seed.

import type { RetryReflectOptions } from "@retry-reflect/core";
import { describe, expect, it } from "vitest";
import { CANDIDATES, candidate, DEFAULT_RUN } from "../src/agents/candidates.js";
import { CONTESTANTS, INFORMATION } from "../src/agents/contestants.js";
import { GOALS, loadGoalOf } from "../src/agents/goals.js";
import {
  arrivals,
  COLLAPSE,
  type FleetRecord,
  failureProbability,
  LOAD,
  LOADS,
  LoadedService,
  type LoadSpec,
  loadCell,
  runFleet,
  summariseLoad,
  withAgents,
} from "../src/agents/load.js";
import { loadGoalLine, loadSection } from "../src/agents/load-report.js";
import { runsIn } from "../src/agents/run-grid.js";
import { perceive } from "../src/agents/simulated-model.js";

const model = { capacityPerSecond: 40, maxFailure: 0.9, windowMs: 1_000 };

const contestant = (name: string) => {
  const found = [...CONTESTANTS, ...INFORMATION].find((entry) => entry.name === name);
  if (found === undefined) throw new Error(`no contestant ${name}`);
  return found;
};

/** retry-reflect with `options`, as a candidate of the load sections. */
const withOptions = (options: Partial<RetryReflectOptions>) =>
  candidate({ family: "test", options, cells: LOADS.map((spec) => spec.name), why: "a test" });

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
    for (const row of [contestant("no middleware + 10 s tool timeout"), contestant("retry-reflect"), withOptions({ retryBudget: {} })]) {
      const name = row.name;
      const fleet = await runFleet(healthy, row, 1, 0);
      expect(fleet.failures, name).toBe(0);
      expect(
        fleet.results.every((result) => result.success),
        name,
      ).toBe(true);
      expect(fleet.executions, name).toBeLessThanOrEqual(fleet.calls);
    }
  });

  it("is reproducible from its seed", { timeout: 60_000 }, async () => {
    const budget = withOptions({ circuitBreakerFailureRate: 0.9, retryBudget: {} });
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
    await runFleet(strained, withOptions({ circuitBreakerFailureRate: 0.9, retryBudget: {} }), 1, 0, {
      onFailureText: (text) => texts.push(text),
    });
    const spent = texts.filter((text) => text.includes('"error_code":"RETRY_BUDGET_SPENT"'));
    expect(spent.length).toBeGreaterThan(0);
    for (const text of spent) expect(perceive(text)).toBe("transient");
    const careful: string[] = [];
    await runFleet(strained, contestant("toolRetryMiddleware (careful) + 10 s tool timeout"), 1, 0, {
      onFailureText: (text) => careful.push(text),
    });
    expect(careful.length).toBeGreaterThan(0);
    expect(careful.every((text) => perceive(text) === "transient")).toBe(true);
  });
});

describe("the load section of the report", () => {
  const fleet = (contestantName: string, successes: number, calls: number, executions: number, seed = 1): FleetRecord => ({
    seed,
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

  it("judges retry-reflect's rows by the goal: amplification ≤ 1.1× and task success within 2 points of the best row run", () => {
    const spec = withAgents(LOAD, 10);
    const rows = [
      summariseLoad(spec, "toolRetryMiddleware (careful) + 10 s tool timeout", [
        fleet("toolRetryMiddleware (careful) + 10 s tool timeout", 8, 12, 30),
      ]),
      summariseLoad(spec, "retry-reflect", [fleet("retry-reflect", 8, 12, 13)]),
      summariseLoad(spec, "retry-reflect (retryBudget: {})", [fleet("retry-reflect (retryBudget: {})", 6, 12, 12)]),
    ];
    expect(rows[0]?.amplification).toBe(2.5);
    const [careful, ours, tuned] = rows as [(typeof rows)[0], (typeof rows)[0], (typeof rows)[0]];
    // 1.083× and level with the best row (the careful peer's 80 %): met.
    expect(loadGoalOf(rows, ours)).toMatchObject({ met: true, amplificationMet: true, successMet: true, points: 0 });
    // 1.0× but 20 points behind: missed.
    const behind = loadGoalLine(rows, tuned, 1);
    expect(behind.met).toBe(false);
    expect(behind.text).toContain("(within 2: missed)");
    // The best row is the best of all rows run, its own included: a row that is the best meets the success half.
    expect(loadGoalOf([ours], ours)).toMatchObject({ successMet: true, points: 0 });
    expect(loadGoalOf(rows, careful)).toMatchObject({ amplificationMet: false, successMet: true, met: false });
    expect(GOALS.amplification).toBe(1.1);
    const markdown = loadSection(spec, [{ spec, seed: 1, seconds: 1, summaries: rows }]).join("\n");
    expect(markdown).toContain("## Degraded under load");
    expect(markdown).toContain("- **retry-reflect**, seed 1: amplification 1.083× (≤ 1.1×: met)");
    expect(markdown).toContain(`| ${careful.summary.contestant} | 1 | 2.500× |`);
    expect(markdown).not.toContain("- **toolRetryMiddleware");
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
    const markdown = loadSection(spec, [{ spec, seed: 1, seconds: 1, summaries: rows }]).join("\n");
    expect(markdown).toContain("## Degraded under load, collapsing");
    expect(markdown).toContain("p = min(1, load / 36)");
    expect(markdown).toContain("--cells=degraded-under-load-collapse --out=none");
    const capped = loadSection(withAgents(LOAD, 10), [
      { spec: withAgents(LOAD, 10), seed: 1, seconds: 1, summaries: [rows[0] as (typeof rows)[0]] },
    ]);
    expect(capped.join("\n")).toContain("the next section (`degraded-under-load-collapse`)");
  });

  it("runs the peers and the defaults in both sections, and at most two candidates of the default run in each", () => {
    for (const spec of LOADS) {
      for (const row of CONTESTANTS) expect(runsIn(row, loadCell(spec)), `${row.name} in ${spec.name}`).toBe(true);
      const candidates = CANDIDATES.filter((entry) => DEFAULT_RUN.includes(entry.family) && entry.cells.includes(spec.name));
      expect(candidates.length, spec.name).toBeLessThanOrEqual(2);
    }
  });
});
