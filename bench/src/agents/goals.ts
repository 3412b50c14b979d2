// The verdicts and the goal checks of the agent bench, computed from the summaries alone (no
// episodes run here): retry-reflect's defaults against each peer per cell, its lead over the best
// peer, and issue 51's "Done when" checks, each met or missed with its figure.
import { CELLS, type Cell } from "./cells.js";
import type { Contestant } from "./contestants.js";
import { DEADLINE_MS } from "./episode.js";
import { LOADS, type LoadRun, type LoadSummary } from "./load.js";
import { OUTCOMES, type Summary } from "./run-grid.js";
import type { Sweep } from "./sweep.js";

/** The row that is judged: retry-reflect with the core's defaults. */
export const OURS = "retry-reflect";

/** One seed's results: the grid's summaries and the load sections'. */
export interface SeedRun {
  readonly seed: number;
  readonly summaries: readonly Summary[];
  readonly loads: readonly LoadRun[];
}

/** What a report is written from: the cells and contestants that ran, and each seed's results. */
export interface Bench {
  readonly cells: readonly Cell[];
  readonly contestants: readonly Contestant[];
  readonly runs: readonly SeedRun[];
}

export type Verdict = "wins" | "ties" | "loses";

/** Thresholds of issue 51's "Done when". */
export const GOALS = {
  /** The 12-cell mean leads the best peer by at least this (points) on every seed. */
  leadPoints: 5,
  /** A dead tool: the p95 time to give up at most the best peer's p95 plus this (s). */
  giveUpSlackSeconds: 5,
  /** Under load: amplification at most this, task success within this of the best row (points). */
  amplification: 1.1,
  loadPoints: 2,
  /** The profile sweep's least favourable point leads by at least this (points). */
  sweepLeadPoints: 0,
  /** `npm run bench:agents`'s wall time at most this (s). */
  wallSeconds: 600,
} as const;

/**
 * The paired difference in task success between two contestants of one cell, over the same tasks
 * (each task's share of successful trials), and twice its standard error: a gap within that is a
 * tie. Trials of one task share its facts, so the tasks, not the episodes, are the independent units.
 */
export function pairedGap(a: Summary, b: Summary): { gap: number; margin: number } {
  const count = Math.min(a.perTask.length, b.perTask.length);
  if (count === 0) return { gap: a.success - b.success, margin: 0 };
  const differences = Array.from({ length: count }, (_, index) => (a.perTask[index] ?? 0) - (b.perTask[index] ?? 0));
  const gap = differences.reduce((sum, value) => sum + value, 0) / count;
  const variance = count > 1 ? differences.reduce((sum, value) => sum + (value - gap) ** 2, 0) / (count - 1) : 0;
  return { gap, margin: 2 * Math.sqrt(variance / count) };
}

/** The standard error of a cell's task success, over its tasks (each task's share of successful trials). */
export function standardError(summary: Summary): number {
  const count = summary.perTask.length;
  if (count < 2) return 0;
  const mean = summary.perTask.reduce((sum, value) => sum + value, 0) / count;
  const variance = summary.perTask.reduce((sum, value) => sum + (value - mean) ** 2, 0) / (count - 1);
  return Math.sqrt(variance / count);
}

/** `a` against `b` by the tie rule: a gap within twice its standard error (and within half a point) is a tie. */
export function verdictOf(a: Summary, b: Summary): { verdict: Verdict; gap: number; margin: number } {
  const { gap, margin } = pairedGap(a, b);
  const threshold = Math.max(margin, 0.005);
  return { verdict: gap > threshold ? "wins" : gap < -threshold ? "loses" : "ties", gap, margin };
}

/** The cells that compare: the grid's cells but the feature demos (not the outage sweep's other durations). */
export function comparableCells(cells: readonly Cell[]): Cell[] {
  return cells.filter((cell) => CELLS.includes(cell) && cell.featureDemo === undefined);
}

/** The grid's cells that ran (the comparable ones and the feature demos). */
export function gridCells(cells: readonly Cell[]): Cell[] {
  return cells.filter((cell) => CELLS.includes(cell));
}

/** The outage sweep's cells that ran, shortest outage first. */
export function outageCells(cells: readonly Cell[]): Cell[] {
  return cells.filter((cell) => cell.outageSeconds !== undefined).sort((a, b) => (a.outageSeconds ?? 0) - (b.outageSeconds ?? 0));
}

export const peersOf = (contestants: readonly Contestant[]) => contestants.filter((contestant) => contestant.role === "peer");

const find = (summaries: readonly Summary[], cell: string, contestant: string) =>
  summaries.find((summary) => summary.cell === cell && summary.contestant === contestant);

/** The better of two rows of one cell: higher task success, then fewer model calls. */
const better = (a: Summary, b: Summary) => (b.success > a.success || (b.success === a.success && b.modelCalls < a.modelCalls) ? b : a);

/** The best peer of one cell (highest task success, then fewest model calls); undefined without one. */
export function bestPeerIn(bench: Bench, summaries: readonly Summary[], cell: string): Summary | undefined {
  const rows = peersOf(bench.contestants).flatMap((peer) => find(summaries, cell, peer.name) ?? []);
  return rows.length === 0 ? undefined : rows.reduce(better);
}

/** Means over `cells` (each cell weighs the same) for each of `contestants` that ran in all of them. */
export function overall(contestants: readonly Contestant[], summaries: readonly Summary[], cells: readonly Cell[]): Summary[] {
  return contestants.flatMap((contestant) => {
    const mine = cells.map((cell) => find(summaries, cell.name, contestant.name));
    if (cells.length === 0 || mine.some((summary) => summary === undefined)) return [];
    const rows = mine as Summary[];
    const mean = (pick: (summary: Summary) => number) => rows.reduce((sum, summary) => sum + pick(summary), 0) / rows.length;
    const passK = Object.fromEntries(Object.keys(rows[0]?.passK ?? {}).map((key) => [key, mean((summary) => summary.passK[key] ?? 0)]));
    const outcomes = Object.fromEntries(
      OUTCOMES.map((outcome) => [outcome, rows.reduce((sum, summary) => sum + summary.outcomes[outcome], 0)]),
    ) as Summary["outcomes"];
    const duplicates = rows.reduce((sum, summary) => sum + summary.duplicates, 0);
    const episodes = rows.reduce((sum, summary) => sum + summary.episodes, 0);
    return [
      {
        seed: rows[0]?.seed ?? 0,
        cell: "all cells",
        contestant: contestant.name,
        episodes,
        tasks: rows.reduce((sum, summary) => sum + summary.tasks, 0),
        success: mean((summary) => summary.success),
        passK,
        modelCalls: mean((summary) => summary.modelCalls),
        toolExecutions: mean((summary) => summary.toolExecutions),
        duplicates,
        duplicatesPer1000: (duplicates * 1000) / Math.max(1, episodes),
        virtualSeconds: mean((summary) => summary.virtualSeconds),
        virtualSecondsP95: Math.max(...rows.map((summary) => summary.virtualSecondsP95)),
        outcomes,
        perTask: [],
      },
    ];
  });
}

/** retry-reflect's defaults and the best peer over `cells` (means; each cell weighs the same); undefined without either. */
export function againstBestPeer(
  contestants: readonly Contestant[],
  summaries: readonly Summary[],
  cells: readonly Cell[],
): { ours: Summary; best: Summary } | undefined {
  const means = overall(contestants, summaries, cells);
  const ours = means.find((row) => row.contestant === OURS);
  const peers = means.filter((row) => peersOf(contestants).some((peer) => peer.name === row.contestant));
  if (ours === undefined || peers.length === 0) return undefined;
  return { ours, best: peers.reduce((a, b) => (b.success > a.success ? b : a)) };
}

/** One cell of one seed: retry-reflect's defaults against the best peer and against each peer. */
export interface CellVerdict {
  readonly seed: number;
  readonly cell: Cell;
  readonly ours: Summary;
  readonly best: Summary;
  readonly againstBest: { verdict: Verdict; gap: number; margin: number };
  /** Each peer, and how the defaults fare against it. */
  readonly againstEach: ReadonlyArray<{ peer: Summary; verdict: Verdict; gap: number; margin: number }>;
}

/** The defaults against the peers in each of `cells` on each seed (cells where either is missing are left out). */
export function cellVerdicts(bench: Bench, cells: readonly Cell[]): CellVerdict[] {
  return bench.runs.flatMap((run) =>
    cells.flatMap((cell) => {
      const ours = find(run.summaries, cell.name, OURS);
      const best = bestPeerIn(bench, run.summaries, cell.name);
      if (ours === undefined || best === undefined) return [];
      const againstEach = peersOf(bench.contestants).flatMap((peer) => {
        const summary = find(run.summaries, cell.name, peer.name);
        return summary === undefined ? [] : [{ peer: summary, ...verdictOf(ours, summary) }];
      });
      return [{ seed: run.seed, cell, ours, best, againstBest: verdictOf(ours, best), againstEach }];
    }),
  );
}

/** Every (cell, seed, peer) the defaults lose, in `cells`. */
export function losses(
  bench: Bench,
  cells: readonly Cell[],
): Array<{ seed: number; cell: string; peer: string; gap: number; margin: number }> {
  return cellVerdicts(bench, cells).flatMap((entry) =>
    entry.againstEach
      .filter((against) => against.verdict === "loses")
      .map((against) => ({
        seed: entry.seed,
        cell: entry.cell.name,
        peer: against.peer.contestant,
        gap: against.gap,
        margin: against.margin,
      })),
  );
}

/** A goal of issue 51: met, missed, or not measured in this run (undefined), with its figures. */
export interface Check {
  readonly goal: string;
  readonly met: boolean | undefined;
  readonly figures: string;
}

const percent = (value: number) => `${(value * 100).toFixed(1)} %`;
const signed = (value: number, digits = 1) => `${value >= 0 ? "+" : ""}${value.toFixed(digits)}`;
const pointsOf = (gap: number, margin: number) => `${signed(gap * 100)} ± ${(margin * 100).toFixed(1)}`;
const allMet = (flags: readonly boolean[]) => (flags.length === 0 ? undefined : flags.every(Boolean));

/** The lead of the defaults over the best peer on each seed, over the comparable cells. */
export function leads(bench: Bench): Array<{ seed: number; ours: Summary; best: Summary; lead: number }> {
  const cells = comparableCells(bench.cells);
  return bench.runs.flatMap((run) => {
    const pair = againstBestPeer(bench.contestants, run.summaries, cells);
    return pair === undefined ? [] : [{ seed: run.seed, ...pair, lead: pair.ours.success - pair.best.success }];
  });
}

/** The defaults' row of a load section and the best row run there (the best of all rows, the defaults' included). */
export function loadGoalOf(
  rows: readonly LoadSummary[],
  row: LoadSummary,
): { met: boolean; amplificationMet: boolean; successMet: boolean; best: LoadSummary; points: number } {
  const best = rows.reduce((a, b) =>
    b.summary.success > a.summary.success || (b.summary.success === a.summary.success && b.executionsPerTask < a.executionsPerTask) ? b : a,
  );
  const points = (row.summary.success - best.summary.success) * 100;
  const amplificationMet = row.amplification <= GOALS.amplification;
  const successMet = points >= -GOALS.loadPoints;
  return { met: amplificationMet && successMet, amplificationMet, successMet, best, points };
}

/**
 * Issue 51's "Done when", as far as a run of the bench measures it: each goal met or missed with
 * its figures, per seed. `time`: the run's wall time, its processes and their CPU time; `sweep`:
 * agents.sweep.json's profile sweep, when there is one for these peers.
 */
export function doneWhen(
  bench: Bench,
  time: { readonly seconds: number; readonly workers: number; readonly cpuSeconds?: number },
  sweep?: Sweep,
): Check[] {
  const checks: Check[] = [];
  const comparable = comparableCells(bench.cells);
  const seeds = bench.runs.map((run) => run.seed);
  const seedsText = seeds.length === 1 ? `seed ${seeds[0]}` : `seeds ${seeds.join(" and ")}`;

  // Every comparable cell won or tied against each peer.
  const verdicts = cellVerdicts(bench, comparable);
  const lost = losses(bench, comparable);
  const pairs = verdicts.reduce((sum, entry) => sum + entry.againstEach.length, 0);
  checks.push({
    goal: `Every comparable cell won or tied (a paired gap within twice its standard error) against each peer's fixed careful setup, on ${seedsText}`,
    met: pairs === 0 ? undefined : lost.length === 0,
    figures:
      lost.length === 0
        ? `${pairs} comparisons (${comparable.length} cells × ${peersOf(bench.contestants).length} peers × ${seeds.length} seeds), none lost`
        : `lost ${lost.length} of ${pairs}: ${lost.map((loss) => `${loss.cell} vs ${loss.peer}, seed ${loss.seed} (${pointsOf(loss.gap, loss.margin)} points)`).join("; ")}`,
  });

  // The lead over the best peer on every seed.
  const byseed = leads(bench);
  checks.push({
    goal: `The ${comparable.length}-cell mean leads the best peer by ≥ ${GOALS.leadPoints} points on ${seedsText}`,
    met: allMet(byseed.map((entry) => entry.lead * 100 >= GOALS.leadPoints)),
    figures: byseed
      .map(
        (entry) =>
          `seed ${entry.seed}: ${signed(entry.lead * 100)} points (${percent(entry.ours.success)} vs ${percent(entry.best.success)}, ${entry.best.contestant})`,
      )
      .join("; "),
  });

  // The outage curve at or above the best peer at every duration.
  const outages = cellVerdicts(bench, outageCells(bench.cells));
  const below = outages.filter((entry) => entry.againstBest.verdict === "loses");
  const closest = outages.reduce<CellVerdict | undefined>(
    (worst, entry) => (worst === undefined || entry.againstBest.gap < worst.againstBest.gap ? entry : worst),
    undefined,
  );
  checks.push({
    goal: "The outage curve at or above the best peer at every duration (a gap within twice its standard error counts as at)",
    met: outages.length === 0 ? undefined : below.length === 0,
    figures:
      outages.length === 0
        ? "the outage sweep did not run"
        : below.length > 0
          ? `below at ${below.map((entry) => `${entry.cell.outageSeconds} s, seed ${entry.seed} (${percent(entry.ours.success)} vs ${percent(entry.best.success)}, ${pointsOf(entry.againstBest.gap, entry.againstBest.margin)} points)`).join("; ")}`
          : `${outages.length} points (${[...new Set(outages.map((entry) => `${entry.cell.outageSeconds} s`))].join(", ")} × ${seeds.length} seeds); the closest: ${closest?.cell.outageSeconds} s, seed ${closest?.seed}, ${percent(closest?.ours.success ?? 0)} vs ${percent(closest?.best.success ?? 0)} (${pointsOf(closest?.againstBest.gap ?? 0, closest?.againstBest.margin ?? 0)} points)`,
  });

  // A dead tool: every task an honest give-up, no later than the best peer's p95 + 5 s, in no more model calls.
  const dead = bench.runs.flatMap((run) => {
    const ours = find(run.summaries, "down-for-good", OURS);
    const peer = byseed.find((entry) => entry.seed === run.seed)?.best.contestant;
    const theirs = peer === undefined ? undefined : find(run.summaries, "down-for-good", peer);
    if (ours === undefined || theirs === undefined) return [];
    const p95 = ours.giveUpSecondsP95 ?? Number.POSITIVE_INFINITY;
    const limit = (theirs.giveUpSecondsP95 ?? 0) + GOALS.giveUpSlackSeconds;
    const met = ours.success === 1 && p95 <= limit && ours.modelCalls <= theirs.modelCalls;
    const seconds = (value: number | undefined) => (value === undefined ? "–" : `${value.toFixed(1)} s`);
    return [
      {
        met,
        text: `seed ${run.seed}: ${percent(ours.success)} honest give-ups; give-up time p95 ${seconds(ours.giveUpSecondsP95)} (mean ${seconds(ours.giveUpSeconds)}) against ${theirs.contestant}'s ${seconds(theirs.giveUpSecondsP95)} + ${GOALS.giveUpSlackSeconds} s; model calls ${ours.modelCalls.toFixed(2)} against ${theirs.modelCalls.toFixed(2)}`,
      },
    ];
  });
  checks.push({
    goal: `A dead tool (down-for-good): 100 % honest give-ups, p95 time to give up ≤ the best peer's p95 + ${GOALS.giveUpSlackSeconds} s, model calls ≤ that peer's (the best peer of the ${comparable.length}-cell mean)`,
    met: allMet(dead.map((entry) => entry.met)),
    figures: dead.length === 0 ? "down-for-good did not run" : dead.map((entry) => entry.text).join("; "),
  });

  // Degraded under load, both sections: the defaults' amplification and task success against the best row.
  const loads = bench.runs.flatMap((run) =>
    run.loads.flatMap((load) => {
      const ours = load.summaries.find((row) => row.summary.contestant === OURS);
      if (ours === undefined) return [];
      return [{ seed: run.seed, load, ours, ...loadGoalOf(load.summaries, ours) }];
    }),
  );
  checks.push({
    goal: `Degraded under load (${LOADS.map((spec) => spec.name).join(", ")}): load amplification ≤ ${GOALS.amplification}× and task success within ${GOALS.loadPoints} points of the best row, for the defaults`,
    met: allMet(loads.map((entry) => entry.met)),
    figures:
      loads.length === 0
        ? "the load sections did not run"
        : loads
            .map(
              (entry) =>
                `${entry.load.spec.name}, seed ${entry.seed}: ${entry.ours.amplification.toFixed(3)}×, ${percent(entry.ours.summary.success)} against ${percent(entry.best.summary.success)} (${entry.best === entry.ours ? "its own, the best row" : entry.best.summary.contestant}), ${signed(entry.points)} points`,
            )
            .join("; "),
  });

  // The profile sweep's least favourable point.
  const least = sweep?.results.reduce((worst, result) => (result.ours - result.best < worst.ours - worst.best ? result : worst));
  checks.push({
    goal: `The profile sweep's least favourable point still leads (≥ ${GOALS.sweepLeadPoints} points)`,
    met: least === undefined ? undefined : (least.ours - least.best) * 100 >= GOALS.sweepLeadPoints,
    figures:
      least === undefined
        ? "no profile sweep of these contestants (`npm run bench:agents:sweep` writes agents.sweep.json)"
        : `${signed((least.ours - least.best) * 100)} points at ${least.path === "" ? "the committed profile" : `${least.path}=${least.value} (committed ${least.base})`} (${percent(least.ours)} vs ${percent(least.best)}, ${least.bestPeer})`,
  });

  // No wait of the defaults outlives the user's deadline: every run aborted at it has ended.
  const deadlines = bench.runs.flatMap((run) => {
    const rows = run.summaries.filter((summary) => summary.contestant === OURS);
    if (rows.some((summary) => summary.outlived === undefined)) return [];
    const ended = rows.reduce((sum, summary) => sum + summary.outcomes.deadline, 0);
    const outlived = rows.reduce((sum, summary) => sum + (summary.outlived ?? 0), 0);
    return [{ seed: run.seed, ended, outlived }];
  });
  checks.push({
    goal: `No wait outlives the user's deadline in the grid: every run of the defaults that the user's deadline (${DEADLINE_MS / 1000} s) aborts has ended within a few turns of the event loop, virtual time stopped (the core's tests hold the caller's abort ending each wait at once)`,
    met: deadlines.length === 0 ? undefined : deadlines.every((entry) => entry.outlived === 0),
    figures:
      deadlines.length === 0
        ? "not measured in this run (agents.json from before it was)"
        : deadlines
            .map(
              (entry) =>
                `seed ${entry.seed}: ${entry.ended} ${entry.ended === 1 ? "run" : "runs"} reached the deadline, ${entry.outlived} still pending after its abort`,
            )
            .join("; "),
  });

  checks.push({
    goal: `\`npm run bench:agents\` takes ≤ ${GOALS.wallSeconds / 60} minutes on 2 cores (the bench's own wall time, after install and build)`,
    met: time.seconds <= GOALS.wallSeconds,
    figures: `${time.seconds.toFixed(0)} s${
      time.cpuSeconds === undefined
        ? ""
        : ` (its ${time.workers} processes used ${time.cpuSeconds.toFixed(0)} s of CPU, about ${(time.cpuSeconds / Math.max(1, time.workers)).toFixed(0)} s each: the wall time on ${time.workers} cores of their own)`
    }`,
  });
  return checks;
}
