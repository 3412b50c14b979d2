// `npm run bench:agents`: the agent-outcome benchmark. Thousands of seeded episodes over the grid
// of faults, through a real createAgent driven by the simulated model, for every contestant.
//
//   --seed=1            the run's seed (the same seed reproduces every number)
//   --tasks=125         task instances per cell (each contestant gets the same ones)
//   --trials=8          trials per task: episodes per cell and contestant = tasks × trials
//   --workers=2         processes (one per core)
//   --cells=a,b         only these cells; --contestants=a,b only these (by name); the attempt-timeout
//                       candidates (contestants.ts) run only in the cells where a tool can take long
//   --agents=1000       agents in each fleet of the load sections (load.ts: "degraded-under-load"
//                       and "degraded-under-load-collapse", many agents at once against one service
//                       that fails more the more it is called; they run after the grid, unless
//                       --cells leaves them out; --cells=degraded-under-load runs that one alone);
//                       fewer arrive over a shorter span, at the same rate
//   --out=../AGENTS.md  the report (agents.json and agents.svg beside it); --out=none prints it only
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
//                       defaults shrink to --tasks=2 --trials=1 --workers=1 and the report is
//                       AGENTS.<model>.md
import { fork } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { cpus } from "node:os";
import { basename, dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { CURVE_CELLS } from "./cells.js";
import { BUDGET_CANDIDATES } from "./contestants.js";
import { CURVE_K, renderCurvesSvg } from "./curves.js";
import {
  type FleetRecord,
  LOAD_CONTESTANTS,
  LOADS,
  type LoadRun,
  loadCell,
  loadUnits,
  runLoadShard,
  summariseLoad,
  withAgents,
} from "./load.js";
import { MODEL_PROFILE, withOverrides } from "./model-profile.js";
import { realModel } from "./real-model.js";
import { type RunInfo, renderReport, renderSvg, type SweepFile } from "./report.js";
import {
  CELLS,
  CONTESTANTS,
  EXHAUSTION_CANDIDATES,
  type GridOptions,
  PEERS_WITH_TIMEOUTS,
  runShard,
  runsIn,
  type Summary,
  summarise,
  type TaskRecord,
  TIMEOUT_CANDIDATES,
  units,
} from "./run-grid.js";
import { leadOf, type Sweep, type SweepResult, sweepPoints } from "./sweep.js";

const here = fileURLToPath(import.meta.url);
/** The contestants, the peers with a time limit per tool, then retry-reflect's candidates for the default attempt timeout. */
const ALL_CONTESTANTS = [...CONTESTANTS, ...PEERS_WITH_TIMEOUTS, ...TIMEOUT_CANDIDATES, ...EXHAUSTION_CANDIDATES];
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
  "agents",
  "out",
  "profile",
  "report-from",
  "model",
  "sweep",
  "worker",
  "load-worker",
  "load-spec",
];
const INTERNAL = ["worker", "load-worker", "load-spec"];
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

/** The items `--name` lists (default: `all`), from `known` (default: `all`). */
function pick<T extends { name: string }>(name: string, all: readonly T[], known: readonly T[] = all): readonly T[] {
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

const modelSpec = args.get("model");
const real = modelSpec !== undefined;
// Each load section is named like a cell (--cells) and has contestants of its own (--contestants).
const LOAD_CELLS = LOADS.map(loadCell);
const pickedCells = pick("cells", [...CELLS, ...LOAD_CELLS], [...CELLS, ...CURVE_CELLS, ...LOAD_CELLS]);
const pickedContestants = pick("contestants", ALL_CONTESTANTS, [...ALL_CONTESTANTS, ...BUDGET_CANDIDATES]);
const options: GridOptions = {
  seed: positive("seed", 1),
  tasks: positive("tasks", real ? 2 : 125),
  trials: positive("trials", real ? 1 : 8),
  cells: pickedCells.filter((cell) => !LOAD_CELLS.includes(cell)),
  contestants: pickedContestants.filter((contestant) => ALL_CONTESTANTS.includes(contestant)),
  ...(args.has("profile") ? { profile: withOverrides(MODEL_PROFILE, args.get("profile") ?? "") } : {}),
};
/** The load sections that run (none with a real model: its time is real) and their contestants. */
const loadSpecs = real ? [] : LOADS.filter((spec) => pickedCells.some((cell) => cell.name === spec.name));
const loadAgents = (spec: (typeof LOADS)[number]) => withAgents(spec, positive("agents", spec.agents));
const loadContestants = args.has("contestants")
  ? LOAD_CONTESTANTS.filter((contestant) => pickedContestants.includes(contestant))
  : LOAD_CONTESTANTS;

// --report-from=agents.json: the report again from a run's saved summaries (after editing its texts), without running.
const reportFrom = args.get("report-from");
if (reportFrom !== undefined) {
  rewriteFrom(reportFrom);
  process.exit(0);
}

/** AGENTS.md (or --out) again from a run's saved summaries. */
function rewriteFrom(file: string): void {
  const saved = JSON.parse(readFileSync(file, "utf8")) as {
    run: RunInfo;
    cells: Array<{ name: string }>;
    contestants: Array<{ name: string }>;
    summaries: Summary[];
    load?: LoadRun;
    loads?: LoadRun[];
  };
  const byName = <T extends { name: string }>(all: readonly T[], names: Array<{ name: string }>) =>
    names.map(({ name }) => all.find((item) => item.name === name) ?? fail(`--report-from: ${name} is no longer defined`));
  const savedOptions: GridOptions = {
    ...options,
    cells: byName(CELLS, saved.cells),
    contestants: byName(ALL_CONTESTANTS, saved.contestants),
    ...(saved.run.profile === undefined ? {} : { profile: withOverrides(MODEL_PROFILE, saved.run.profile) }),
  };
  writeReport(
    savedOptions,
    saved.summaries,
    saved.run,
    saved.summaries.reduce((sum, summary) => sum + summary.episodes, 0),
    saved.loads ?? (saved.load === undefined ? [] : [saved.load]),
  );
}

function fail(message: string): never {
  throw new Error(message);
}

const model = modelSpec === undefined ? undefined : await realModel(modelSpec);

const worker = args.get("worker");
if (worker !== undefined) {
  const [index, count] = worker.split("/").map(Number);
  await runShard(options, index ?? 0, count ?? 1, (record) => process.send?.(record), model);
  process.exit(0);
}
const loadWorker = args.get("load-worker");
if (loadWorker !== undefined) {
  const [index, count] = loadWorker.split("/").map(Number);
  const spec = loadSpecs.find((entry) => entry.name === args.get("load-spec")) ?? fail(`--load-spec: ${args.get("load-spec")}`);
  await runLoadShard(
    loadAgents(spec),
    loadContestants,
    options.seed,
    index ?? 0,
    count ?? 1,
    (record) => process.send?.(record),
    options.profile,
  );
  process.exit(0);
}

const requestedWorkers = positive("workers", real ? 1 : Math.max(1, Math.min(2, cpus().length)));
const workers = Math.min(requestedWorkers, units(options).length);

/** Runs the grid that `extra` (flags for the workers) describes, in `workers` processes, and summarises it per cell and contestant. */
async function runGrid(
  grid: GridOptions,
  extra: readonly string[],
  progress: boolean,
): Promise<{ summaries: Summary[]; episodes: number; seconds: number }> {
  const started = performance.now();
  const records: TaskRecord[] = [];
  const total = units(grid).length;
  const count = Math.max(1, Math.min(workers, total));
  let lastPrint = 0;
  await Promise.all(
    Array.from(
      { length: count },
      (_, index) =>
        new Promise<void>((done, fail) => {
          const child = fork(here, [...extra, `--worker=${index}/${count}`], { execArgv: process.execArgv });
          child.on("message", (record: TaskRecord) => {
            records.push(record);
            const now = performance.now();
            if (progress && now - lastPrint > 10_000) {
              lastPrint = now;
              console.log(`  ${records.length}/${total} tasks (${((now - started) / 1000).toFixed(0)} s)`);
            }
          });
          child.on("error", fail);
          child.on("exit", (code) => (code === 0 ? done() : fail(new Error(`worker ${index} exited with ${code}`))));
        }),
    ),
  );
  const summaries: Summary[] = [];
  for (const cell of grid.cells) {
    for (const contestant of grid.contestants.filter((entry) => runsIn(entry, cell))) {
      summaries.push(
        summarise(
          cell.name,
          contestant.name,
          records.filter((record) => record.cell === cell.name && record.contestant === contestant.name),
        ),
      );
    }
  }
  return { summaries, episodes: records.length * grid.trials, seconds: (performance.now() - started) / 1000 };
}

/** The contestants of the sweep: the peers (plain and careful) and retry-reflect with its defaults. */
const SWEEP_CONTESTANTS = CONTESTANTS.filter(
  (contestant) => !contestant.name.startsWith("retry-reflect ") && !contestant.name.startsWith("retry-reflect,"),
);

const passOn = process.argv.slice(2).filter((arg) => !arg.startsWith("--worker") && !arg.startsWith("--sweep"));

if (args.has("sweep")) {
  await runSweep();
  process.exit(0);
}

/** One load section's fleets, in up to `requestedWorkers` processes (one fleet is one process's work), summarised per contestant. */
async function runLoad(section: (typeof LOADS)[number]): Promise<LoadRun | undefined> {
  const loadSpec = loadAgents(section);
  const total = loadUnits(loadSpec, loadContestants).length;
  if (total === 0) return undefined;
  const started = performance.now();
  const count = Math.max(1, Math.min(requestedWorkers, total));
  const fleets: FleetRecord[] = [];
  await Promise.all(
    Array.from(
      { length: count },
      (_, index) =>
        new Promise<void>((done, fail) => {
          const child = fork(here, [...passOn, `--load-spec=${section.name}`, `--load-worker=${index}/${count}`], {
            execArgv: process.execArgv,
          });
          child.on("message", (record: FleetRecord) => {
            fleets.push(record);
            console.log(`  ${loadSpec.name}: ${fleets.length}/${total} fleets (${((performance.now() - started) / 1000).toFixed(0)} s)`);
          });
          child.on("error", fail);
          child.on("exit", (code) => (code === 0 ? done() : fail(new Error(`load worker ${index} exited with ${code}`))));
        }),
    ),
  );
  return {
    spec: loadSpec,
    seed: options.seed,
    workers: count,
    seconds: (performance.now() - started) / 1000,
    summaries: loadContestants.map((contestant) => summariseLoad(loadSpec, contestant.name, fleets)),
  };
}

const grid = await runGrid(options, passOn, true);
const loads: LoadRun[] = [];
for (const section of loadSpecs) {
  const load = await runLoad(section);
  if (load !== undefined) loads.push(load);
}
const { summaries } = grid;
const seconds = grid.seconds + loads.reduce((sum, load) => sum + load.seconds, 0);
const episodes =
  grid.episodes + loads.reduce((sum, load) => sum + load.summaries.reduce((total, entry) => total + entry.summary.episodes, 0), 0);
const run = {
  seed: options.seed,
  tasks: options.tasks,
  trials: options.trials,
  workers,
  seconds,
  node: process.version,
  date: new Date().toISOString(),
  ...(model === undefined ? {} : { model: model.label }),
  ...(args.has("profile") ? { profile: args.get("profile") } : {}),
};
writeReport(options, summaries, run, episodes, loads);

/** `--sweep`: the profile sweep, then the curves; agents.sweep.json, agents.curves.svg, and AGENTS.md again from agents.json. */
async function runSweep(): Promise<void> {
  const tasks = positive("tasks", 20);
  const trials = positive("trials", 2);
  const seed = options.seed;
  const started = performance.now();
  const names = SWEEP_CONTESTANTS.map((contestant) => contestant.name).join(",");
  const grid: GridOptions = { seed, tasks, trials, cells: CELLS, contestants: SWEEP_CONTESTANTS };
  const results: SweepResult[] = [];
  const points = sweepPoints(MODEL_PROFILE);
  for (const [index, point] of points.entries()) {
    const profile = point.path === "" ? [] : [`--profile=${point.path}=${point.value}`];
    const flags = [`--seed=${seed}`, `--tasks=${tasks}`, `--trials=${trials}`, `--contestants=${names}`, ...profile];
    const { summaries } = await runGrid(grid, flags, false);
    results.push(leadOf(grid, summaries, point));
    const last = results.at(-1) as SweepResult;
    console.log(
      `  sweep ${index + 1}/${points.length} ${point.path === "" ? "(committed)" : `${point.path}=${point.value}`}: retry-reflect ${(last.ours * 100).toFixed(1)} % vs ${(last.best * 100).toFixed(1)} % (${last.bestPeer}) (${((performance.now() - started) / 1000).toFixed(0)} s)`,
    );
  }
  const sweep: Sweep = { tasks, trials, seed, seconds: (performance.now() - started) / 1000, results };

  const curvesStarted = performance.now();
  const curveTrials = CURVE_K;
  const curveGrid: GridOptions = { seed, tasks, trials: curveTrials, cells: CURVE_CELLS, contestants: CONTESTANTS };
  const curveFlags = [
    `--seed=${seed}`,
    `--tasks=${tasks}`,
    `--trials=${curveTrials}`,
    `--cells=${CURVE_CELLS.map((cell) => cell.name).join(",")}`,
    `--contestants=${CONTESTANTS.map((contestant) => contestant.name).join(",")}`,
  ];
  const curves = await runGrid(curveGrid, curveFlags, false);
  const file: SweepFile = {
    sweep,
    curves: {
      seed,
      tasks,
      trials: curveTrials,
      seconds: (performance.now() - curvesStarted) / 1000,
      contestants: CONTESTANTS.map((contestant) => contestant.name),
      summaries: curves.summaries,
    },
  };
  const dir = join(dirname(here), "../..");
  writeFileSync(join(dir, "agents.sweep.json"), `${JSON.stringify(file, null, 2)}\n`);
  writeFileSync(join(dir, "agents.curves.svg"), renderCurvesSvg(file.curves.contestants, curves.summaries));
  console.log(`wrote agents.sweep.json and agents.curves.svg (${((performance.now() - started) / 1000).toFixed(0)} s)`);
  const saved = join(dir, "agents.json");
  if (existsSync(saved)) rewriteFrom(saved);
}

/** Writes AGENTS.md (or --out) with agents.json and agents.svg beside it; --out=none prints it. */
function writeReport(options: GridOptions, summaries: readonly Summary[], run: RunInfo, episodes: number, loads: readonly LoadRun[]): void {
  const spec = run.model === undefined ? undefined : (modelSpec ?? run.model);
  const defaultName = spec === undefined ? "AGENTS.md" : `AGENTS.${spec.replace(/[^A-Za-z0-9.-]+/g, "-")}.md`;
  const out = args.get("out") ?? join(dirname(here), "../..", defaultName);
  // The sweep and the curves of the committed profile belong to the simulated model's default report only.
  const sweepPath = join(dirname(here), "../..", "agents.sweep.json");
  const sweep =
    spec === undefined && run.profile === undefined && existsSync(sweepPath)
      ? (JSON.parse(readFileSync(sweepPath, "utf8")) as SweepFile)
      : undefined;
  const markdown = renderReport(options, summaries, run, sweep, loads);
  if (out === "none") {
    console.log(markdown);
    return;
  }
  const path = resolve(out);
  // AGENTS.md → agents.json, agents.svg; AGENTS.openai-x.md → agents.openai-x.json, …
  const base = join(dirname(path), basename(path, ".md").replace(/^AGENTS/, "agents"));
  const svg = `${base}.svg`;
  writeFileSync(path, markdown.replace("](agents.svg)", `](${basename(svg)})`));
  const contestants = options.contestants.map(({ name, description, cells }) => ({ name, description, ...(cells ? { cells } : {}) }));
  writeFileSync(
    `${base}.json`,
    `${JSON.stringify({ run, cells: options.cells, contestants, summaries, ...(loads.length === 0 ? {} : { loads }) }, null, 2)}\n`,
  );
  writeFileSync(svg, renderSvg(options, summaries));
  console.log(`wrote ${path}, ${basename(base)}.json and ${basename(svg)} (${episodes} episodes in ${run.seconds.toFixed(0)} s)`);
}
