// `npm run bench:agents`: the agent-outcome benchmark. Seeded episodes over the grid of faults, the
// outage sweep and the load sections, through a real createAgent driven by the simulated model,
// for the peers (each in one fixed careful setup) and retry-reflect with the core's defaults, on
// seeds 1 and 2.
//
//   --seed=N            one seed only (default: seeds 1 and 2; the same seed reproduces every number)
//   --tasks=80          task instances per cell (each contestant gets the same ones)
//   --trials=4          trials per task: episodes per cell and contestant = tasks × trials
//   --workers=2         processes (one per core); they take tasks and fleets as they free up
//   --cells=a,b         only these cells: the grid's, the outage sweep's (`outage@6s`; the 12 s one
//                       is the grid's `outage`), the load sections (`degraded-under-load`,
//                       `degraded-under-load-collapse`)
//   --contestants=a,b   only these rows, by name: peers, retry-reflect, information rows
//                       (contestants.ts), candidates (candidates.ts)
//   --candidates=x,y    retry-reflect with options (candidates.ts): `none`, `all`, families or
//                       names (default: the families in DEFAULT_RUN); each runs in its own cells
//   --agents=1000       agents in each fleet of the load sections (fewer arrive over a shorter
//                       span, at the same rate)
//   --out=../AGENTS.md  the report (agents.json, agents.svg and agents.outage.svg beside it);
//                       --out=none prints it only
//   --profile=a.b=x,…   change some of the simulated model's numbers (model-profile.ts) for this run
//   --report-from=agents.json  rewrite the report from a run's saved summaries (no episodes run)
//   --sweep             the profile sweep and the fault-intensity curves instead of the grid
//                       (npm run bench:agents:sweep): every number of the model moved down and up,
//                       one at a time, over the grid at --tasks=20 --trials=2 (sweep.ts), then
//                       every contestant against a 503 / 429 probability of 0 to 0.9 at 20 tasks ×
//                       4 trials (curves.ts); writes agents.sweep.json and agents.curves.svg and
//                       rewrites AGENTS.md from agents.json with them
//   --model=openai:<name>  a real model instead of the simulated one (OPENAI_API_KEY, or
//                       OPENAI_BASE_URL for an OpenAI-compatible server); real time then, so the
//                       defaults shrink to one seed, --tasks=2 --trials=1 --workers=1, no load
//                       sections, and the report is AGENTS.<model>.md
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { cpus } from "node:os";
import { basename, dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { CANDIDATE_ROWS, pickCandidates } from "./candidates.js";
import { CELLS, type Cell, CURVE_CELLS, OUTAGE_ONLY_CELLS } from "./cells.js";
import { CONTESTANTS, type Contestant, INFORMATION } from "./contestants.js";
import { CURVE_K, renderCurvesSvg } from "./curves.js";
import type { SeedRun } from "./goals.js";
import { type FleetRecord, LOADS, type LoadRun, loadCell, runFleet, summariseLoad, withAgents } from "./load.js";
import { MODEL_PROFILE, type ModelProfile, withOverrides } from "./model-profile.js";
import { renderOutageSvg } from "./outage.js";
import { runPool, serveJobs } from "./pool.js";
import { realModel } from "./real-model.js";
import { type RunInfo, renderReport, renderSvg, type SweepFile } from "./report.js";
import { type GridOptions, runsIn, runUnit, type Summary, summarise, type TaskRecord } from "./run-grid.js";
import { leadOf, type Sweep, type SweepResult, sweepPoints } from "./sweep.js";

const here = fileURLToPath(import.meta.url);
const benchDir = join(dirname(here), "../..");
/** The seeds of a default run: both in the report. */
const DEFAULT_SEEDS = [1, 2] as const;
/**
 * Tasks × trials per cell and contestant in a default run: 80 × 4 = 320 episodes (pass^4 as the
 * curves), so that a cell's task success has a standard error of about 1–2 points where it is not
 * all or nothing (the tasks are the independent units), and both seeds with the outage sweep and
 * both load sections fit in 10 minutes on 2 cores: an episode takes 10–16 ms of one core, a fleet
 * of 1,000 agents 7–27 s.
 */
const DEFAULT_TASKS = 80;
const DEFAULT_TRIALS = 4;

/** Every row the flags may name: the peers, retry-reflect, the information rows, the candidates. */
const ALL_CONTESTANTS: readonly Contestant[] = [...CONTESTANTS, ...INFORMATION, ...CANDIDATE_ROWS];
/** The load sections, named like cells. */
const LOAD_CELLS = LOADS.map(loadCell);

const args = new Map(
  process.argv.slice(2).map((arg) => {
    const [key, ...value] = arg.replace(/^--/, "").split("=");
    return [key ?? "", value.join("=")] as const;
  }),
);

const KNOWN = [
  "seed",
  "tasks",
  "trials",
  "workers",
  "cells",
  "contestants",
  "candidates",
  "agents",
  "out",
  "profile",
  "report-from",
  "model",
  "sweep",
  "pool-worker",
];
const INTERNAL = ["pool-worker"];
const unknownFlags = [...args.keys()].filter((key) => !KNOWN.includes(key));
if (unknownFlags.length > 0) {
  console.error(
    `bench:agents: unknown option ${unknownFlags.map((key) => `--${key}`).join(", ")} (known: ${KNOWN.filter(
      (key) => !INTERNAL.includes(key),
    )
      .map((key) => `--${key}`)
      .join(", ")})`,
  );
  process.exit(2);
}

function positive(name: string, fallback: number): number {
  const raw = args.get(name);
  if (raw === undefined) return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 1) throw new Error(`--${name}: expected a positive integer, got ${JSON.stringify(raw)}`);
  return value;
}

function fail(message: string): never {
  throw new Error(message);
}

/** The items `--name` lists (default: `all`), from `known`. */
function pick<T extends { name: string }>(name: string, all: readonly T[], known: readonly T[]): readonly T[] {
  const raw = args.get(name);
  if (raw === undefined) return all;
  // Names may hold commas ("retry-reflect, nothing declared"): the longest run of pieces that is a name wins.
  const pieces = raw.split(",");
  const names: string[] = [];
  for (let start = 0; start < pieces.length; ) {
    let end = pieces.length;
    while (end > start + 1 && !known.some((item) => item.name === pieces.slice(start, end).join(",").trim())) end--;
    names.push(pieces.slice(start, end).join(",").trim());
    start = end;
  }
  const unknown = names.filter((entry) => !known.some((item) => item.name === entry));
  if (unknown.length > 0) throw new Error(`--${name}: unknown ${unknown.join(", ")} (known: ${known.map((item) => item.name).join(", ")})`);
  return known.filter((item) => names.includes(item.name));
}

const profileOf = (spec: string | undefined): ModelProfile | undefined =>
  spec === undefined ? undefined : withOverrides(MODEL_PROFILE, spec);

/** A job of the pool: one task's trials for one contestant, or one fleet of a load section. */
type Job =
  | {
      readonly kind: "task";
      readonly seed: number;
      readonly cell: string;
      readonly contestant: string;
      readonly task: number;
      readonly trials: number;
      readonly profile?: string;
    }
  | {
      readonly kind: "fleet";
      readonly seed: number;
      readonly load: string;
      readonly agents: number;
      readonly contestant: string;
      readonly trial: number;
      readonly profile?: string;
    };
type JobResult = { readonly kind: "task"; readonly record: TaskRecord } | { readonly kind: "fleet"; readonly record: FleetRecord };

const modelSpec = args.get("model");

// A worker of the pool: it runs the jobs it is sent (a real model, if any, made once).
if (args.has("pool-worker")) {
  const model = modelSpec === undefined ? undefined : await realModel(modelSpec);
  const cellByName = (name: string) =>
    [...CELLS, ...OUTAGE_ONLY_CELLS, ...CURVE_CELLS].find((cell) => cell.name === name) ?? fail(`no cell ${name}`);
  const contestantByName = (name: string) => ALL_CONTESTANTS.find((entry) => entry.name === name) ?? fail(`no contestant ${name}`);
  serveJobs<Job, JobResult>(async (job) => {
    const profile = profileOf(job.profile);
    if (job.kind === "task") {
      const unit = {
        seed: job.seed,
        cell: cellByName(job.cell),
        contestant: contestantByName(job.contestant),
        task: job.task,
        trials: job.trials,
      };
      return { kind: "task", record: await runUnit(unit, { model, profile }) };
    }
    const spec = withAgents(LOADS.find((entry) => entry.name === job.load) ?? fail(`no load section ${job.load}`), job.agents);
    return {
      kind: "fleet",
      record: await runFleet(spec, contestantByName(job.contestant), job.seed, job.trial, profile === undefined ? {} : { profile }),
    };
  });
} else {
  await main();
}

async function main(): Promise<void> {
  const real = modelSpec !== undefined;
  const reportFrom = args.get("report-from");
  if (reportFrom !== undefined) {
    rewriteFrom(reportFrom);
    return;
  }
  if (args.has("sweep")) {
    await runSweep();
    return;
  }
  const seeds = args.has("seed") ? [positive("seed", 1)] : real ? [1] : [...DEFAULT_SEEDS];
  const tasks = positive("tasks", real ? 2 : DEFAULT_TASKS);
  const trials = positive("trials", real ? 1 : DEFAULT_TRIALS);
  const workers = positive("workers", real ? 1 : Math.max(1, Math.min(2, cpus().length)));
  const pickedCells = pick(
    "cells",
    [...CELLS, ...OUTAGE_ONLY_CELLS, ...LOAD_CELLS],
    [...CELLS, ...OUTAGE_ONLY_CELLS, ...CURVE_CELLS, ...LOAD_CELLS],
  );
  const cells = pickedCells.filter((cell) => !LOAD_CELLS.includes(cell));
  const loads = real
    ? []
    : LOADS.filter((spec) => pickedCells.some((cell) => cell.name === spec.name)).map((spec) =>
        withAgents(spec, positive("agents", spec.agents)),
      );
  const contestants = args.has("contestants")
    ? pick("contestants", [], ALL_CONTESTANTS)
    : [...CONTESTANTS, ...pickCandidates(args.get("candidates"))];
  const profile = args.get("profile");
  profileOf(profile); // refuses what is not a number of the profile, before any process starts

  // The fleets first (the longest jobs), then the grid's tasks, so that the processes end together.
  const jobs: Job[] = [];
  for (const seed of seeds)
    for (const spec of loads)
      for (const contestant of contestants.filter((entry) => runsIn(entry, loadCell(spec))))
        for (let trial = 0; trial < spec.trials; trial++)
          jobs.push({
            kind: "fleet",
            seed,
            load: spec.name,
            agents: spec.agents,
            contestant: contestant.name,
            trial,
            ...(profile === undefined ? {} : { profile }),
          });
  for (const seed of seeds)
    for (const cell of cells)
      for (let task = 0; task < tasks; task++)
        for (const contestant of contestants.filter((entry) => runsIn(entry, cell)))
          jobs.push({
            kind: "task",
            seed,
            cell: cell.name,
            contestant: contestant.name,
            task,
            trials,
            ...(profile === undefined ? {} : { profile }),
          });

  const started = performance.now();
  const results = await runJobs(jobs, workers, true);
  const seconds = (performance.now() - started) / 1000;
  const runs: SeedRun[] = seeds.map((seed) => ({
    seed,
    summaries: summariseGrid(
      results.tasks.filter((record) => record.seed === seed),
      cells,
      contestants,
    ),
    loads: loads.flatMap((spec): LoadRun[] => {
      const fleets = results.fleets.filter((fleet) => fleet.seed === seed && fleet.load === spec.name);
      const rows = contestants.filter((entry) => runsIn(entry, loadCell(spec)));
      if (rows.length === 0) return [];
      return [
        {
          spec,
          seed,
          seconds: results.fleetSeconds.get(`${seed}/${spec.name}`) ?? 0,
          summaries: rows.map((contestant) => summariseLoad(spec, contestant.name, fleets)),
        },
      ];
    }),
  }));
  const run: RunInfo = {
    seeds,
    tasks,
    trials,
    workers: Math.min(workers, jobs.length),
    seconds,
    cpuSeconds: results.cpuSeconds,
    node: process.version,
    date: new Date().toISOString(),
    ...(modelSpec === undefined ? {} : { model: modelSpec }),
    ...(profile === undefined ? {} : { profile }),
  };
  writeReport(cells, contestants, runs, run);
}

/** Runs `jobs` in the pool; the grid's records, the fleets' records, and the fleets' time per (seed, section). */
async function runJobs(
  jobs: readonly Job[],
  workers: number,
  progress: boolean,
): Promise<{ tasks: TaskRecord[]; fleets: FleetRecord[]; fleetSeconds: Map<string, number>; cpuSeconds: number }> {
  const tasks: TaskRecord[] = [];
  const fleets: FleetRecord[] = [];
  const fleetSeconds = new Map<string, number>();
  const started = performance.now();
  let lastPrint = 0;
  let done = 0;
  const argv = ["--pool-worker", ...(modelSpec === undefined ? [] : [`--model=${modelSpec}`])];
  const { cpuSeconds } = await runPool<Job, JobResult>(here, argv, jobs, workers, (job, result, ms) => {
    done++;
    if (result.kind === "task") tasks.push(result.record);
    else {
      fleets.push(result.record);
      const key = `${job.seed}/${result.record.load}`;
      fleetSeconds.set(key, (fleetSeconds.get(key) ?? 0) + ms / 1000);
    }
    const now = performance.now();
    if (progress && (result.kind === "fleet" || now - lastPrint > 10_000)) {
      lastPrint = now;
      const what =
        result.kind === "fleet"
          ? `fleet ${result.record.load} / ${result.record.contestant} / seed ${job.seed} in ${(ms / 1000).toFixed(0)} s; `
          : "";
      console.log(`  ${what}${done}/${jobs.length} jobs (${((now - started) / 1000).toFixed(0)} s)`);
    }
  });
  return { tasks, fleets, fleetSeconds, cpuSeconds };
}

/** The grid's records of one seed, summarised per cell and contestant (the contestants of each cell, in order). */
function summariseGrid(records: readonly TaskRecord[], cells: readonly Cell[], contestants: readonly Contestant[]): Summary[] {
  return cells.flatMap((cell) =>
    contestants
      .filter((entry) => runsIn(entry, cell))
      .map((contestant) =>
        summarise(
          cell.name,
          contestant.name,
          records.filter((record) => record.cell === cell.name && record.contestant === contestant.name),
          records[0]?.seed,
        ),
      ),
  );
}

/** What agents.json holds: the run, the cells and contestants by name, each seed's summaries. */
interface SavedRun {
  readonly run: RunInfo;
  readonly cells: ReadonlyArray<{ name: string }>;
  readonly contestants: ReadonlyArray<{ name: string }>;
  readonly runs: readonly SeedRun[];
}

/** AGENTS.md (or --out) again from a run's saved summaries. */
function rewriteFrom(file: string): void {
  const saved = JSON.parse(readFileSync(file, "utf8")) as SavedRun;
  if (!Array.isArray(saved.runs))
    throw new Error(`--report-from: ${file} is not a run of this bench (no "runs": written before seeds 1 and 2)`);
  const byName = <T extends { name: string }>(all: readonly T[], names: ReadonlyArray<{ name: string }>) =>
    names.map(({ name }) => all.find((item) => item.name === name) ?? fail(`--report-from: ${name} is no longer defined`));
  writeReport(
    byName([...CELLS, ...OUTAGE_ONLY_CELLS, ...CURVE_CELLS], saved.cells),
    byName(ALL_CONTESTANTS, saved.contestants),
    saved.runs,
    saved.run,
  );
}

/** Writes AGENTS.md (or --out) with agents.json, agents.svg, agents.outage.svg (and, with a profile sweep, agents.curves.svg) beside it; --out=none prints it. */
function writeReport(cells: readonly Cell[], contestants: readonly Contestant[], runs: readonly SeedRun[], run: RunInfo): void {
  const spec = run.model;
  const defaultName = spec === undefined ? "AGENTS.md" : `AGENTS.${spec.replace(/[^A-Za-z0-9.-]+/g, "-")}.md`;
  const out = args.get("out") ?? join(benchDir, defaultName);
  // The sweep and the curves of the committed profile belong to the simulated model's default report only.
  const sweepPath = join(benchDir, "agents.sweep.json");
  const sweep =
    spec === undefined && run.profile === undefined && existsSync(sweepPath)
      ? (JSON.parse(readFileSync(sweepPath, "utf8")) as SweepFile)
      : undefined;
  const bench = { cells, contestants, runs };
  const profile = profileOf(run.profile);
  const markdown = renderReport({
    ...bench,
    run,
    ...(sweep === undefined ? {} : { sweep }),
    ...(profile === undefined ? {} : { profile }),
  });
  if (out === "none") {
    console.log(markdown);
    return;
  }
  const path = resolve(out);
  // AGENTS.md → agents.json, agents.svg, agents.outage.svg; AGENTS.openai-x.md → agents.openai-x.json, …
  const base = join(dirname(path), basename(path, ".md").replace(/^AGENTS/, "agents"));
  writeFileSync(
    path,
    markdown
      .replace("](agents.svg)", `](${basename(base)}.svg)`)
      .replace("](agents.outage.svg)", `](${basename(base)}.outage.svg)`)
      .replace("](agents.curves.svg)", `](${basename(base)}.curves.svg)`),
  );
  const saved: SavedRun = {
    run,
    cells: cells.map(({ name, description }) => ({ name, description })),
    contestants: contestants.map(({ name, role, description, cells: only }) => ({
      name,
      role,
      description,
      ...(only ? { cells: only } : {}),
    })),
    runs,
  };
  writeFileSync(`${base}.json`, `${JSON.stringify(saved, null, 2)}\n`);
  writeFileSync(`${base}.svg`, renderSvg(bench));
  writeFileSync(`${base}.outage.svg`, renderOutageSvg(bench));
  if (sweep !== undefined) writeFileSync(`${base}.curves.svg`, renderCurvesSvg(sweep.curves.contestants, sweep.curves.summaries));
  const episodes = runs.reduce(
    (sum, seedRun) =>
      sum +
      seedRun.summaries.reduce((total, summary) => total + summary.episodes, 0) +
      seedRun.loads.reduce((total, load) => total + load.summaries.reduce((all, row) => all + row.summary.episodes, 0), 0),
    0,
  );
  console.log(`wrote ${path}, ${basename(base)}.json, .svg and .outage.svg (${episodes} episodes in ${run.seconds.toFixed(0)} s)`);
}

/** `--sweep`: the profile sweep, then the curves; agents.sweep.json, agents.curves.svg, and AGENTS.md again from agents.json. */
async function runSweep(): Promise<void> {
  const tasks = positive("tasks", 20);
  const trials = positive("trials", 2);
  const seed = positive("seed", 1);
  const workers = positive("workers", Math.max(1, Math.min(2, cpus().length)));
  const started = performance.now();
  const grid: GridOptions = { seed, tasks, trials, cells: CELLS, contestants: CONTESTANTS };
  const points = sweepPoints(MODEL_PROFILE);
  const jobs: Job[] = points.flatMap((point) => {
    const profile = point.path === "" ? {} : { profile: `${point.path}=${point.value}` };
    return CELLS.flatMap((cell) =>
      Array.from({ length: tasks }, (_, task) =>
        CONTESTANTS.map(
          (contestant): Job => ({ kind: "task", seed, cell: cell.name, contestant: contestant.name, task, trials, ...profile }),
        ),
      ).flat(),
    );
  });
  const byPoint = new Map<string, TaskRecord[]>();
  const key = (profile: string | undefined) => profile ?? "";
  const tagged: Array<{ profile: string | undefined; record: TaskRecord }> = [];
  let lastPrint = 0;
  await runPool<Job, JobResult>(here, ["--pool-worker"], jobs, workers, (job, result) => {
    if (result.kind === "task") tagged.push({ profile: job.profile, record: result.record });
    const now = performance.now();
    if (now - lastPrint > 10_000) {
      lastPrint = now;
      console.log(`  sweep: ${tagged.length}/${jobs.length} tasks (${((now - started) / 1000).toFixed(0)} s)`);
    }
  });
  for (const { profile, record } of tagged) byPoint.set(key(profile), [...(byPoint.get(key(profile)) ?? []), record]);
  const results: SweepResult[] = points.map((point) => {
    const records = byPoint.get(point.path === "" ? "" : `${point.path}=${point.value}`) ?? [];
    return leadOf(grid, summariseGrid(records, CELLS, CONTESTANTS), point);
  });
  for (const result of results)
    console.log(
      `  ${result.path === "" ? "(committed)" : `${result.path}=${result.value}`}: retry-reflect ${(result.ours * 100).toFixed(1)} % vs ${(result.best * 100).toFixed(1)} % (${result.bestPeer})`,
    );
  const sweep: Sweep = {
    contestants: CONTESTANTS.map((contestant) => contestant.name),
    tasks,
    trials,
    seed,
    seconds: (performance.now() - started) / 1000,
    results,
  };

  const curvesStarted = performance.now();
  const curveJobs: Job[] = CURVE_CELLS.flatMap((cell) =>
    Array.from({ length: tasks }, (_, task) =>
      CONTESTANTS.map((contestant): Job => ({ kind: "task", seed, cell: cell.name, contestant: contestant.name, task, trials: CURVE_K })),
    ).flat(),
  );
  const curves = await runJobs(curveJobs, workers, false);
  const curveSummaries = summariseGrid(curves.tasks, CURVE_CELLS, CONTESTANTS);
  const file: SweepFile = {
    sweep,
    curves: {
      seed,
      tasks,
      trials: CURVE_K,
      seconds: (performance.now() - curvesStarted) / 1000,
      contestants: CONTESTANTS.map((contestant) => contestant.name),
      summaries: curveSummaries,
    },
  };
  writeFileSync(join(benchDir, "agents.sweep.json"), `${JSON.stringify(file, null, 2)}\n`);
  writeFileSync(join(benchDir, "agents.curves.svg"), renderCurvesSvg(file.curves.contestants, curveSummaries));
  console.log(`wrote agents.sweep.json and agents.curves.svg (${((performance.now() - started) / 1000).toFixed(0)} s)`);
  const saved = join(benchDir, "agents.json");
  if (existsSync(saved)) rewriteFrom(saved);
}
