// The verdicts and issue 51's goal checks, from small fixtures of summaries (no episodes run): the
// report's first screen and its met/missed lines are computed from these.

import { describe, expect, it } from "vitest";
import { CANDIDATE_ROWS, CANDIDATES, DEFAULT_RUN, formatOptions, pickCandidates } from "../src/agents/candidates.js";
import { CELLS, type Cell, GRID_OUTAGE_SECONDS, OUTAGE_CELLS, OUTAGE_ONLY_CELLS, OUTAGE_SWEEP_SECONDS } from "../src/agents/cells.js";
import { CONTESTANTS, type Contestant, INFORMATION, OURS, PEERS } from "../src/agents/contestants.js";
import { type Bench, cellVerdicts, doneWhen, GOALS, leads, losses, pairedGap, verdictOf } from "../src/agents/goals.js";
import { LOAD, LOADS, type LoadRun, type LoadSummary } from "../src/agents/load.js";
import { renderOutageSvg } from "../src/agents/outage.js";
import { renderReport } from "../src/agents/report.js";
import { OUTCOMES, type Summary, summarise } from "../src/agents/run-grid.js";

const cell = (name: string): Cell => {
  const found = [...CELLS, ...OUTAGE_ONLY_CELLS].find((entry) => entry.name === name);
  if (found === undefined) throw new Error(`no cell ${name}`);
  return found;
};

/** A summary whose tasks succeeded in these shares (the paired gap reads them), with a few figures set. */
function row(seed: number, cellName: string, contestant: string, perTask: readonly number[], extra: Partial<Summary> = {}): Summary {
  const success = perTask.reduce((sum, value) => sum + value, 0) / perTask.length;
  const outcomes = Object.fromEntries(OUTCOMES.map((outcome) => [outcome, 0])) as Record<(typeof OUTCOMES)[number], number>;
  outcomes.answered = Math.round(success * perTask.length * 4);
  outcomes["gave-up"] = perTask.length * 4 - outcomes.answered;
  return {
    seed,
    cell: cellName,
    contestant,
    episodes: perTask.length * 4,
    tasks: perTask.length,
    success,
    passK: { "pass^1": success },
    modelCalls: 3,
    toolExecutions: 2,
    duplicates: 0,
    duplicatesPer1000: 0,
    virtualSeconds: 6,
    virtualSecondsP95: 9,
    outcomes,
    outlived: 0,
    perTask,
    ...extra,
  };
}

const same = (value: number, tasks = 20) => Array.from({ length: tasks }, () => value);
const [plain, careful, adk] = PEERS as [Contestant, Contestant, Contestant];
const information = INFORMATION[0] as Contestant;

/**
 * Two seeds over explicit-transient, down-for-good and two outage durations, and a load section:
 * the defaults win explicit-transient on seed 1 and lose it to the careful peer on seed 2; an
 * information row is better than every peer and is never the best peer.
 */
function fixture(): Bench {
  const cells = [cell("explicit-transient"), cell("down-for-good"), cell("outage@6s"), cell("outage")];
  const contestants = [...CONTESTANTS, information];
  const runs = [1, 2].map((seed) => {
    const summaries = [
      row(seed, "explicit-transient", OURS.name, same(seed === 1 ? 1 : 0.8)),
      row(seed, "explicit-transient", careful.name, same(0.9)),
      row(seed, "explicit-transient", plain.name, same(0.7)),
      row(seed, "explicit-transient", adk.name, same(0.7)),
      row(seed, "explicit-transient", information.name, same(1), { modelCalls: 1 }),
      row(seed, "down-for-good", OURS.name, same(1), { modelCalls: 2.5, giveUpSeconds: 15, giveUpSecondsP95: seed === 1 ? 20 : 40 }),
      row(seed, "down-for-good", careful.name, same(1), { modelCalls: 4.7, giveUpSeconds: 17, giveUpSecondsP95: 30 }),
      row(seed, "down-for-good", plain.name, same(1), { modelCalls: 4.7, giveUpSeconds: 7, giveUpSecondsP95: 12 }),
      row(seed, "down-for-good", adk.name, same(1), { modelCalls: 4.1, giveUpSeconds: 6, giveUpSecondsP95: 9 }),
      row(seed, "down-for-good", information.name, same(1)),
      ...["outage@6s", "outage"].flatMap((name) => [
        row(seed, name, OURS.name, name === "outage" || seed === 1 ? same(1) : [...same(0.5, 10), ...same(0.75, 10)]),
        row(seed, name, careful.name, name === "outage" || seed === 1 ? same(0.5) : [...same(0.75, 10), ...same(0.5, 10)]),
        row(seed, name, plain.name, same(0)),
        row(seed, name, adk.name, same(0)),
        row(seed, name, information.name, same(0)),
      ]),
    ];
    const load = (contestant: string, success: number, amplification: number): LoadSummary => ({
      summary: row(seed, LOAD.name, contestant, same(success, 10)),
      fleets: 1,
      calls: 100,
      executions: 100 * amplification,
      amplification,
      executionsPerTask: amplification,
      failureRate: 0.5,
      meanLoad: 20,
      peakLoad: 40,
      spanSeconds: 70,
    });
    const loads: LoadRun[] = [
      {
        spec: LOAD,
        seed,
        seconds: 1,
        summaries: [load(careful.name, 0.7, 2.6), load(OURS.name, seed === 1 ? 0.69 : 0.5, 1.05), load(plain.name, 0.3, 1)],
      },
    ];
    return { seed, summaries, loads };
  });
  return { cells, contestants, runs };
}

describe("the verdicts", () => {
  it("a paired gap within twice its standard error, or within half a point, is a tie", () => {
    const steady = row(1, "x", "a", same(1));
    expect(verdictOf(steady, row(1, "x", "b", same(0.9))).verdict).toBe("wins");
    expect(verdictOf(row(1, "x", "b", same(0.9)), steady).verdict).toBe("loses");
    expect(verdictOf(steady, row(1, "x", "b", same(0.996))).verdict).toBe("ties");
    // Gaps of +1 and -1 on alternate tasks: a mean of 0 with a wide margin.
    const swings = row(
      1,
      "x",
      "c",
      Array.from({ length: 20 }, (_, index) => index % 2),
    );
    const against = row(
      1,
      "x",
      "d",
      Array.from({ length: 20 }, (_, index) => 1 - (index % 2)),
    );
    expect(pairedGap(swings, against).gap).toBe(0);
    expect(pairedGap(swings, against).margin).toBeGreaterThan(0.4);
    expect(verdictOf(swings, against).verdict).toBe("ties");
  });

  it("judges the defaults against each peer and the best peer of each cell, never an information row", () => {
    const bench = fixture();
    const verdicts = cellVerdicts(bench, [cell("explicit-transient")]);
    expect(verdicts.map((entry) => [entry.seed, entry.best.contestant, entry.againstBest.verdict])).toEqual([
      [1, careful.name, "wins"],
      [2, careful.name, "loses"],
    ]);
    expect(verdicts[1]?.againstEach.map((against) => [against.peer.contestant, against.verdict])).toEqual([
      [plain.name, "wins"],
      [careful.name, "loses"],
      [adk.name, "wins"],
    ]);
    expect(losses(bench, bench.cells)).toEqual([
      { seed: 2, cell: "explicit-transient", peer: careful.name, gap: expect.closeTo(-0.1, 10), margin: expect.closeTo(0, 10) },
    ]);
  });

  it("the lead is over the comparable cells only (no outage sweep point beyond the grid's), against the best peer of the mean", () => {
    const bench = fixture();
    // Comparable here: explicit-transient, down-for-good and the grid's outage (12 s); outage@6s is the sweep's.
    expect(leads(bench).map((entry) => [entry.seed, entry.best.contestant, Number((entry.lead * 100).toFixed(1))])).toEqual([
      [1, careful.name, 20],
      [2, careful.name, 13.3],
    ]);
  });
});

describe("issue 51's checks", () => {
  it("each goal is met or missed with its figures, per seed", () => {
    const checks = doneWhen(fixture(), { seconds: 512, workers: 2 });
    const by = (start: string) => {
      const check = checks.find((entry) => entry.goal.startsWith(start));
      if (check === undefined) throw new Error(`no check ${start}`);
      return check;
    };
    const cells = by("Every comparable cell won or tied");
    expect(cells.met).toBe(false);
    expect(cells.figures).toBe(`lost 1 of 18: explicit-transient vs ${careful.name}, seed 2 (-10.0 ± 0.0 points)`);
    expect(by("The 3-cell mean leads the best peer by ≥ 5 points").met).toBe(true);
    const outage = by("The outage curve");
    // 6 s on seed 2: +0.0 ± 11.5, a tie, which counts as at.
    expect(outage.met).toBe(true);
    expect(outage.figures).toBe("4 points (6 s, 12 s × 2 seeds); the closest: 6 s, seed 2, 62.5 % vs 62.5 % (+0.0 ± 11.5 points)");
    const dead = by("A dead tool");
    expect(dead.met).toBe(false);
    expect(dead.figures).toBe(
      `seed 1: 100.0 % honest give-ups; give-up time p95 20.0 s (mean 15.0 s) against ${careful.name}'s 30.0 s + 5 s; model calls 2.50 against 4.70; seed 2: 100.0 % honest give-ups; give-up time p95 40.0 s (mean 15.0 s) against ${careful.name}'s 30.0 s + 5 s; model calls 2.50 against 4.70`,
    );
    const load = by("Degraded under load");
    expect(load.met).toBe(false);
    expect(load.figures).toBe(
      `degraded-under-load, seed 1: 1.050×, 69.0 % against 70.0 % (${careful.name}), -1.0 points; degraded-under-load, seed 2: 1.050×, 50.0 % against 70.0 % (${careful.name}), -20.0 points`,
    );
    expect(by("The profile sweep's least favourable point")).toMatchObject({ met: undefined });
    expect(by("No wait outlives the user's deadline")).toMatchObject({
      met: true,
      figures:
        "seed 1: 0 runs reached the deadline, 0 still pending after its abort; seed 2: 0 runs reached the deadline, 0 still pending after its abort",
    });
    expect(by("`npm run bench:agents` takes")).toMatchObject({ met: true, figures: "512 s" });
    const slow = doneWhen(fixture(), { seconds: GOALS.wallSeconds + 1, workers: 2, cpuSeconds: 900 }).at(-1);
    expect(slow).toMatchObject({
      met: false,
      figures: "601 s (its 2 processes used 900 s of CPU, about 450 s each: the wall time on 2 cores of their own)",
    });
  });

  it("a run of the defaults still pending after the deadline's abort misses the deadline check; a run without the count is not measured", () => {
    const bench = fixture();
    const late = {
      ...bench,
      runs: bench.runs.map((run) => ({
        ...run,
        summaries: run.summaries.map((summary) =>
          run.seed === 2 && summary.cell === "explicit-transient" && summary.contestant === OURS.name
            ? { ...summary, outcomes: { ...summary.outcomes, deadline: 3 }, outlived: 1 }
            : summary,
        ),
      })),
    };
    const check = (from: Bench) => doneWhen(from, { seconds: 1, workers: 2 }).find((entry) => entry.goal.startsWith("No wait outlives"));
    expect(check(late)).toMatchObject({
      met: false,
      figures:
        "seed 1: 0 runs reached the deadline, 0 still pending after its abort; seed 2: 3 runs reached the deadline, 1 still pending after its abort",
    });
    const before = {
      ...bench,
      runs: bench.runs.map((run) => ({ ...run, summaries: run.summaries.map(({ outlived: _, ...summary }) => summary) })),
    };
    expect(check(before)).toMatchObject({ met: undefined, figures: "not measured in this run (agents.json from before it was)" });
  });

  it("reads the profile sweep's least favourable point when the sweep ran these peers", () => {
    const result = (path: string, ours: number, best: number) => ({
      path,
      value: 1,
      base: 0.5,
      ours,
      best,
      bestPeer: careful.name,
      oursAll: ours,
      bestAll: best,
    });
    const sweep = {
      contestants: CONTESTANTS.map((entry) => entry.name),
      tasks: 20,
      trials: 2,
      seed: 1,
      seconds: 1,
      results: [result("", 0.8, 0.7), result("reactions.transient.retry", 0.7, 0.72)],
    };
    const check = doneWhen(fixture(), { seconds: 1, workers: 2 }, sweep).find((entry) => entry.goal.startsWith("The profile sweep"));
    expect(check).toMatchObject({
      met: false,
      figures: `-2.0 points at reactions.transient.retry=1 (committed 0.5) (70.0 % vs 72.0 %, ${careful.name})`,
    });
  });

  it("the report's first screen states the lead per seed, its range, the cells lost, then the checks", () => {
    const bench = fixture();
    const markdown = renderReport({
      ...bench,
      run: { seeds: [1, 2], tasks: 20, trials: 4, workers: 2, seconds: 512, node: "v0", date: "2026-12-01" },
    });
    const screen = markdown.slice(0, markdown.indexOf("## Overall"));
    expect(screen).toContain(`seed 1: it leads by 20.0 points (100.0 % vs 80.0 %, ${careful.name}); seed 2: it leads by 13.3 points`);
    expect(screen).toContain("**Its range**: over the seeds, from +13.3 points (seed 2) to +20.0 (seed 1).");
    expect(screen).toContain(
      `**Cells lost** (to any peer, a paired gap below twice its standard error): seed 1: none; seed 2: explicit-transient to ${careful.name} (-10.0 ± 0.0 points).`,
    );
    expect(screen).toContain("## Done when (issue 51): 4 of 8 met");
    expect(screen).toContain("- A dead tool (down-for-good)");
    expect(markdown).toContain("## The outage sweep: how long a tool may be down");
    expect(markdown).toContain(`| ${OURS.name} | 100.0 / 62.5 | 100.0 / 100.0 |`);
    expect(markdown).toContain("## Giving up: how soon, at what cost");
    expect(markdown).toContain(`| down-for-good | ${OURS.name} | 2 | 100.0 % | 15.0 / 40.0 | 2.50 |`);
    expect(markdown).toContain(`| ${information.name} (information) | 1 |`);
    const svg = renderOutageSvg(bench);
    expect(svg.match(/<polyline /g)).toHaveLength(bench.contestants.length * 2);
    expect(svg).toContain(`${OURS.name}, 6 s outage, seed 2: 62.5 %`);
  });
});

describe("the cells and the rows of a run", () => {
  it("sweeps the outage over 3 to 60 s, the grid's 12 s cell one of its points", () => {
    expect(OUTAGE_SWEEP_SECONDS).toEqual([3, 6, 12, 20, 30, 60]);
    expect(OUTAGE_CELLS.map((entry) => entry.outageSeconds)).toEqual(OUTAGE_SWEEP_SECONDS);
    expect(OUTAGE_CELLS.find((entry) => entry.outageSeconds === GRID_OUTAGE_SECONDS)).toBe(cell("outage"));
    expect(OUTAGE_ONLY_CELLS.map((entry) => entry.name)).toEqual(["outage@3s", "outage@6s", "outage@20s", "outage@30s", "outage@60s"]);
    expect(cell("outage@20s").faults).toEqual({ get_weather: [{ kind: "transient", during: { until: 20_000 } }] });
  });

  it("summarises the time to give up over the episodes that gave up only: mean and p95", () => {
    const episode = (outcome: "answered" | "gave-up", virtualMs: number) => ({
      success: outcome === "answered",
      outcome,
      modelCalls: 3,
      toolExecutions: 2,
      duplicates: 0,
      virtualMs,
    });
    const gaveUp = Array.from({ length: 20 }, (_, index) => episode("gave-up", (index + 1) * 1000));
    const summary = summarise("down-for-good", OURS.name, [
      { seed: 2, cell: "down-for-good", contestant: OURS.name, task: 0, results: [...gaveUp, episode("answered", 90_000)] },
    ]);
    expect(summary.seed).toBe(2);
    expect(summary.giveUpSeconds).toBe(10.5);
    expect(summary.giveUpSecondsP95).toBe(20);
    expect(summary.virtualSecondsP95).toBe(20);
  });

  it("candidates: rows named by their options, picked by family or name, in cells that exist", () => {
    expect(formatOptions({ attemptTimeoutMs: 30_000, retryBudget: { minPerSecond: 0.1 }, toolEffects: { send_email: "read" } })).toBe(
      'attemptTimeoutMs: 30_000, retryBudget: { minPerSecond: 0.1 }, toolEffects: { send_email: "read" }',
    );
    expect(formatOptions({ retryBudget: {}, attemptTimeoutMs: [30_000, 60_000] })).toBe(
      "retryBudget: {}, attemptTimeoutMs: [30_000, 60_000]",
    );
    expect(CANDIDATE_ROWS.map((entry) => entry.name)).toContain("retry-reflect (attemptTimeoutMs: [30_000, 60_000])");
    for (const entry of CANDIDATE_ROWS) expect(entry.role).toBe("candidate");
    expect(new Set(CANDIDATE_ROWS.map((entry) => entry.name)).size).toBe(CANDIDATE_ROWS.length);
    const known = [...CELLS, ...OUTAGE_ONLY_CELLS].map((entry) => entry.name).concat(LOADS.map((spec) => spec.name));
    for (const spec of CANDIDATES)
      for (const name of spec.cells) expect(known, `${spec.name ?? formatOptions(spec.options)}: ${name}`).toContain(name);
    expect(pickCandidates(undefined).map((entry) => entry.name)).toEqual(
      CANDIDATE_ROWS.filter((_, index) => DEFAULT_RUN.includes(CANDIDATES[index]?.family ?? "")).map((entry) => entry.name),
    );
    expect(pickCandidates("none")).toEqual([]);
    expect(pickCandidates("attempt-timeout").map((entry) => entry.name)).toEqual([
      "retry-reflect (attemptTimeoutMs: 0)",
      "retry-reflect (attemptTimeoutMs: 10_000)",
      "retry-reflect (attemptTimeoutMs: 60_000)",
      "retry-reflect (attemptTimeoutMs: [30_000, 60_000])",
    ]);
    // A name that holds commas is one name.
    expect(pickCandidates("retry-reflect, 4 replicas sharing a breaker store,nothing-declared").map((entry) => entry.name)).toEqual([
      "retry-reflect, nothing declared",
      "retry-reflect, 4 replicas sharing a breaker store",
    ]);
    expect(() => pickCandidates("patience")).toThrow('--candidates: unknown "patience"');
  });

  it("the peers are the three careful setups with a tool timeout; the judged row is the defaults with no options", () => {
    expect(PEERS.map((entry) => entry.name)).toEqual([
      "no middleware + 10 s tool timeout",
      "toolRetryMiddleware (careful) + 10 s tool timeout",
      "ADK-style reflect-and-retry (no raise) + 10 s tool timeout",
    ]);
    expect(CONTESTANTS).toEqual([...PEERS, OURS]);
    expect(OURS).toMatchObject({ name: "retry-reflect", role: "ours" });
    for (const entry of [...PEERS, OURS]) expect(entry.cells).toBeUndefined();
    for (const entry of INFORMATION) expect(entry.role).toBe("information");
  });
});
