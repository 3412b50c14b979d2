// The grid: every cell × contestant × task × trial, in shards, aggregated per cell and contestant.

import { seededRandom } from "@retry-reflect/core/testing";
import type { Cell } from "./cells.js";
import type { Contestant } from "./contestants.js";
import { type EpisodeResult, type Outcome, runAgentEpisode } from "./episode.js";
import type { ModelProfile } from "./model-profile.js";
import type { RealModelChoice } from "./real-model.js";
import { makeTask, TASK_KINDS } from "./world.js";

export interface GridOptions {
  readonly seed: number;
  /** Task instances per cell (each contestant gets the same ones). */
  readonly tasks: number;
  /** Trials per task (k of pass^k goes up to this). */
  readonly trials: number;
  readonly cells: readonly Cell[];
  readonly contestants: readonly Contestant[];
  /** The simulated model's numbers (default: model-profile.ts; `--profile` overrides some). */
  readonly profile?: ModelProfile;
}

/** One task's trials: what a shard sends back. */
export interface TaskRecord {
  readonly seed: number;
  readonly cell: string;
  readonly contestant: string;
  readonly task: number;
  readonly results: readonly EpisodeResult[];
}

/** A stable 32-bit mix of the numbers (the seed of one task, one trial). */
export function mix(...values: number[]): number {
  let hash = 0x811c9dc5;
  for (const value of values) {
    hash = Math.imul(hash ^ (value >>> 0), 0x01000193) >>> 0;
    hash = Math.imul(hash ^ (hash >>> 15), 0x2c1b3c6d) >>> 0;
  }
  return hash >>> 0;
}

/** A cell's part of the seeds: from its name, so that `--cells=hang` reproduces the hang cell of a full run. */
export function hashName(name: string): number {
  let hash = 0x811c9dc5;
  for (let index = 0; index < name.length; index++) hash = Math.imul(hash ^ name.charCodeAt(index), 0x01000193) >>> 0;
  return hash;
}

/** Whether `contestant` runs in `cell` (a contestant with `cells` runs only in those). */
export function runsIn(contestant: Contestant, cell: Cell): boolean {
  return contestant.cells === undefined || contestant.cells.includes(cell.name);
}

/** Work units in a fixed order; shard `index` of `count` runs every count-th one. */
export function units(options: GridOptions): Array<{ cell: Cell; contestant: Contestant; task: number }> {
  const list = [];
  for (const cell of options.cells) {
    for (let task = 0; task < options.tasks; task++) {
      for (const contestant of options.contestants) if (runsIn(contestant, cell)) list.push({ cell, contestant, task });
    }
  }
  return list;
}

/** One unit of the grid: task `task` of `cell`, its trials, for `contestant`, on `seed`. */
export async function runUnit(
  unit: { readonly seed: number; readonly cell: Cell; readonly contestant: Contestant; readonly task: number; readonly trials: number },
  options: { readonly model?: RealModelChoice; readonly profile?: ModelProfile } = {},
): Promise<TaskRecord> {
  const { seed, cell, contestant, task, trials } = unit;
  const cellSeed = hashName(cell.name);
  const kinds = cell.kinds ?? TASK_KINDS;
  const taskSpec = makeTask(task, kinds[task % kinds.length] ?? "lookup", seededRandom(mix(seed, cellSeed, task)));
  const results: EpisodeResult[] = [];
  // The same seed per (cell, task, trial) for every contestant: the same faults, the same model draws, as far as the calls match.
  for (let trial = 0; trial < trials; trial++)
    results.push(await runAgentEpisode(cell, contestant, taskSpec, mix(seed, cellSeed, task, trial, 7), options));
  return { seed, cell: cell.name, contestant: contestant.name, task, results };
}

/** Runs shard `index` of `count` in this process, with the simulated model or, given `model`, a real one. */
export async function runShard(
  options: GridOptions,
  index: number,
  count: number,
  onRecord: (record: TaskRecord) => void,
  model?: RealModelChoice,
): Promise<void> {
  const all = units(options);
  for (let unit = index; unit < all.length; unit += count) {
    const { cell, contestant, task } = all[unit] as (typeof all)[number];
    onRecord(await runUnit({ seed: options.seed, cell, contestant, task, trials: options.trials }, { model, profile: options.profile }));
  }
}

export const OUTCOMES: readonly Outcome[] = ["answered", "wrong-answer", "gave-up", "crashed", "deadline", "step-limit"];

export interface Summary {
  readonly seed: number;
  readonly cell: string;
  readonly contestant: string;
  readonly episodes: number;
  readonly tasks: number;
  readonly success: number;
  /** pass^k for k = 1, 4, 8 (where k ≤ trials): the chance that k trials of a task all succeed. */
  readonly passK: Readonly<Record<string, number>>;
  readonly modelCalls: number;
  readonly toolExecutions: number;
  /** Duplicate side effects in all episodes, and per 1,000 episodes. */
  readonly duplicates: number;
  readonly duplicatesPer1000: number;
  readonly virtualSeconds: number;
  readonly virtualSecondsP95: number;
  /**
   * The virtual time at which the agent answered that it could not (the episodes that ended
   * "gave-up"), mean and p95, in seconds; absent when none did.
   */
  readonly giveUpSeconds?: number;
  readonly giveUpSecondsP95?: number;
  readonly outcomes: Readonly<Record<Outcome, number>>;
  /** The deadline episodes whose run was still pending after the deadline's abort; absent in runs before it was measured. */
  readonly outlived?: number;
  /** Each task's share of successful trials, by task number (what the paired comparison reads). */
  readonly perTask: readonly number[];
}

function choose(n: number, k: number): number {
  if (k > n) return 0;
  let result = 1;
  for (let index = 0; index < k; index++) result = (result * (n - index)) / (index + 1);
  return result;
}

export const PASS_K = [1, 4, 8] as const;

/** The p95 of `values` (the value at or under which 95 % of them fall), 0 for none. */
export function p95(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * 0.95))] ?? 0;
}

export function summarise(cell: string, contestant: string, unordered: readonly TaskRecord[], seed = unordered[0]?.seed ?? 0): Summary {
  const records = [...unordered].sort((a, b) => a.task - b.task);
  const episodes = records.flatMap((record) => record.results);
  const mean = (pick: (result: EpisodeResult) => number) =>
    episodes.reduce((sum, result) => sum + pick(result), 0) / Math.max(1, episodes.length);
  const passK: Record<string, number> = {};
  for (const k of PASS_K) {
    const perTask = records.filter((record) => record.results.length >= k);
    if (perTask.length === 0) continue;
    passK[`pass^${k}`] =
      perTask.reduce(
        (sum, record) => sum + choose(record.results.filter((result) => result.success).length, k) / choose(record.results.length, k),
        0,
      ) / perTask.length;
  }
  const outcomes = Object.fromEntries(
    OUTCOMES.map((outcome) => [outcome, episodes.filter((result) => result.outcome === outcome).length]),
  ) as Record<Outcome, number>;
  const duplicates = episodes.reduce((sum, result) => sum + result.duplicates, 0);
  const gaveUp = episodes.filter((result) => result.outcome === "gave-up").map((result) => result.virtualMs);
  return {
    seed,
    cell,
    contestant,
    episodes: episodes.length,
    tasks: records.length,
    success: mean((result) => (result.success ? 1 : 0)),
    passK,
    modelCalls: mean((result) => result.modelCalls),
    toolExecutions: mean((result) => result.toolExecutions),
    duplicates,
    duplicatesPer1000: (duplicates * 1000) / Math.max(1, episodes.length),
    virtualSeconds: mean((result) => result.virtualMs) / 1000,
    virtualSecondsP95: p95(episodes.map((result) => result.virtualMs)) / 1000,
    ...(gaveUp.length === 0
      ? {}
      : { giveUpSeconds: gaveUp.reduce((sum, ms) => sum + ms, 0) / gaveUp.length / 1000, giveUpSecondsP95: p95(gaveUp) / 1000 }),
    outcomes,
    outlived: episodes.filter((result) => result.outlived === true).length,
    perTask: records.map((record) => record.results.filter((result) => result.success).length / Math.max(1, record.results.length)),
  };
}
