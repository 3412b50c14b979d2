// The profile sweep (`npm run bench:agents -- --sweep`): every number of the simulated model moved
// down and up, one at a time, the grid run again at each point (smaller: --tasks=20 --trials=2 by
// default), and retry-reflect's lead over the best peer measured at each. The report quotes the
// range and the least favourable point.
import type { Cell } from "./cells.js";
import { againstBestPeer } from "./goals.js";
import { MODEL_PROFILE, type ModelProfile } from "./model-profile.js";
import type { GridOptions, Summary } from "./run-grid.js";

export interface SweepPoint {
  /** `reactions.transient.retry`, or "" for the committed profile. */
  readonly path: string;
  readonly value: number;
  /** The number's committed value. */
  readonly base: number;
}

export interface SweepResult extends SweepPoint {
  /** retry-reflect's task success over the comparison cells (no feature demo), and the best peer's. */
  readonly ours: number;
  readonly bestPeer: string;
  readonly best: number;
  /** With the feature demos too. */
  readonly oursAll: number;
  readonly bestAll: number;
}

export interface Sweep {
  /** The contestants at every point (absent in a sweep written before they were recorded). */
  readonly contestants?: readonly string[];
  readonly tasks: number;
  readonly trials: number;
  readonly seed: number;
  readonly seconds: number;
  readonly results: readonly SweepResult[];
}

/** Every number of the profile, with its path. */
function numbers(profile: ModelProfile): Array<{ path: string; value: number }> {
  const found: Array<{ path: string; value: number }> = [];
  const walk = (holder: Record<string, unknown>, prefix: string) => {
    for (const [key, value] of Object.entries(holder)) {
      const path = prefix === "" ? key : `${prefix}.${key}`;
      if (typeof value === "number") found.push({ path, value });
      else if (typeof value === "object" && value !== null) walk(value as Record<string, unknown>, path);
    }
  };
  walk(profile as unknown as Record<string, unknown>, "");
  return found;
}

const isProbability = (path: string) => path.startsWith("reactions.") || path.endsWith("Rate");
const round = (value: number) => Math.round(value * 1000) / 1000;

/**
 * The points of the sweep: the committed profile, then each number down and up (a probability by
 * 0.25 within [0, 1], and to 1 for a rate at 0; a count or a time by half), skipping a value equal
 * to the committed one.
 */
export function sweepPoints(profile: ModelProfile = MODEL_PROFILE): SweepPoint[] {
  const points: SweepPoint[] = [{ path: "", value: 0, base: 0 }];
  for (const { path, value } of numbers(profile)) {
    const values = isProbability(path)
      ? [Math.max(0, value - 0.25), Math.min(1, value + 0.25), ...(value === 0 ? [1] : [])]
      : [Math.max(1, Math.round(value * 0.5)), Math.round(value * 1.5)];
    for (const candidate of new Set(values.map(round))) if (candidate !== value) points.push({ path, value: candidate, base: value });
  }
  return points;
}

/** retry-reflect's lead at one point: its overall task success against the best other contestant's, without and with the feature demos. */
export function leadOf(options: GridOptions, summaries: readonly Summary[], point: SweepPoint): SweepResult {
  const comparisons: Cell[] = options.cells.filter((cell) => cell.featureDemo === undefined);
  const pick = (cells: readonly Cell[]) => {
    const pair = againstBestPeer(options.contestants, summaries, cells);
    if (pair === undefined) throw new Error("the sweep needs retry-reflect and at least one peer in every cell");
    return { ours: pair.ours.success, best: pair.best };
  };
  const without = pick(comparisons);
  const all = pick(options.cells);
  return {
    ...point,
    ours: without.ours,
    bestPeer: without.best.contestant,
    best: without.best.success,
    oursAll: all.ours,
    bestAll: all.best.success,
  };
}

const points = (value: number) => `${value >= 0 ? "+" : ""}${(value * 100).toFixed(1)}`;

/** The lead's range over the sweep, and where it is least favourable (lead = ours − best peer, in points). */
export function sweepSummary(sweep: Sweep): { min: SweepResult; max: SweepResult; base: SweepResult | undefined; line: string } {
  const lead = (result: SweepResult) => result.ours - result.best;
  const sorted = [...sweep.results].sort((a, b) => lead(a) - lead(b));
  const min = sorted[0] as SweepResult;
  const max = sorted.at(-1) as SweepResult;
  const base = sweep.results.find((result) => result.path === "");
  const at = (result: SweepResult) =>
    result.path === "" ? "the committed profile" : `${result.path}=${result.value} (committed ${result.base})`;
  const leadAll = (result: SweepResult) => result.oursAll - result.bestAll;
  const all = sweep.results.map(leadAll);
  const plural = (value: number, one: string) => `${value} ${value === 1 ? one : `${one}s`}`;
  const line = `Across the profile sweep (${sweep.results.length} points: each of the model's numbers moved down and up, one at a time; ${plural(sweep.tasks, "task")} × ${plural(sweep.trials, "trial")} per cell and contestant, seed ${sweep.seed}), retry-reflect's lead over the best peer without the feature demo ranges from ${points(lead(min))} points (least favourable: ${at(min)}, ${(min.ours * 100).toFixed(1)} % vs ${(min.best * 100).toFixed(1)} %, ${min.bestPeer}) to ${points(lead(max))} points (${at(max)})${base === undefined ? "" : `, ${points(lead(base))} at the committed profile at this size`}; with the feature demo, from ${points(Math.min(...all))} to ${points(Math.max(...all))} points.`;
  return { min, max, base, line };
}

/** The sweep as a Markdown table (SWEEP section of AGENTS.md). */
export function sweepTable(sweep: Sweep): string[] {
  const lead = (result: SweepResult) => result.ours - result.best;
  const header = ["number", "value (committed)", "retry-reflect", "best peer", "lead (points)", "lead with the feature demo"];
  const rows = sweep.results.map((result) => [
    result.path === "" ? "(committed profile)" : `\`${result.path}\``,
    result.path === "" ? "–" : `${result.value} (${result.base})`,
    `${(result.ours * 100).toFixed(1)} %`,
    `${(result.best * 100).toFixed(1)} % (${result.bestPeer})`,
    points(lead(result)),
    points(result.oursAll - result.bestAll),
  ]);
  return [`| ${header.join(" | ")} |`, `| ${header.map(() => "---").join(" | ")} |`, ...rows.map((row) => `| ${row.join(" | ")} |`)];
}
