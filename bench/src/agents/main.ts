// `npm run bench:agents`: the agent-outcome benchmark. Thousands of seeded episodes over the grid
// of faults, through a real createAgent driven by the simulated model, for every contestant.
//
//   --seed=1            the run's seed (the same seed reproduces every number)
//   --tasks=125         task instances per cell (each contestant gets the same ones)
//   --trials=8          trials per task: episodes per cell and contestant = tasks × trials
//   --workers=2         processes (one per core)
//   --cells=a,b         only these cells; --contestants=a,b only these (by name); the attempt-timeout
//                       candidates (contestants.ts) run only in the cells where a tool can take long
//   --out=../AGENTS.md  the report (agents.json and agents.svg beside it); --out=none prints it only
//   --profile=a.b=x,…   change some of the simulated model's numbers (model-profile.ts) for this run
//   --report-from=agents.json  rewrite the report from a run's saved summaries (no episodes run)
//   --model=openai:<name>  a real model instead of the simulated one (OPENAI_API_KEY, or
//                       OPENAI_BASE_URL for an OpenAI-compatible server); real time then, so the
//                       defaults shrink to --tasks=2 --trials=1 --workers=1 and the report is
//                       AGENTS.<model>.md
import { fork } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { cpus } from "node:os";
import { basename, dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { MODEL_PROFILE, withOverrides } from "./model-profile.js";
import { realModel } from "./real-model.js";
import { type RunInfo, renderReport, renderSvg } from "./report.js";
import {
  CELLS,
  CONTESTANTS,
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

const here = fileURLToPath(import.meta.url);
/** The contestants, the peers with a time limit per tool, then retry-reflect's candidates for the default attempt timeout. */
const ALL_CONTESTANTS = [...CONTESTANTS, ...PEERS_WITH_TIMEOUTS, ...TIMEOUT_CANDIDATES];
const args = new Map(
  process.argv.slice(2).map((arg) => {
    const [key, ...value] = arg.replace(/^--/, "").split("=");
    return [key ?? "", value.join("=")] as const;
  }),
);

const KNOWN = ["seed", "tasks", "trials", "workers", "cells", "contestants", "out", "profile", "report-from", "model", "worker"];
const unknownFlags = [...args.keys()].filter((key) => !KNOWN.includes(key));
if (unknownFlags.length > 0) {
  console.error(
    `bench:agents: unknown option ${unknownFlags.map((key) => `--${key}`).join(", ")} (known: ${KNOWN.filter((key) => key !== "worker")
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

function pick<T extends { name: string }>(name: string, all: readonly T[]): readonly T[] {
  const raw = args.get(name);
  if (raw === undefined) return all;
  const names = raw.split(",").map((entry) => entry.trim());
  const unknown = names.filter((entry) => !all.some((item) => item.name === entry));
  if (unknown.length > 0) throw new Error(`--${name}: unknown ${unknown.join(", ")} (known: ${all.map((item) => item.name).join(", ")})`);
  return all.filter((item) => names.includes(item.name));
}

const modelSpec = args.get("model");
const real = modelSpec !== undefined;
const options: GridOptions = {
  seed: positive("seed", 1),
  tasks: positive("tasks", real ? 2 : 125),
  trials: positive("trials", real ? 1 : 8),
  cells: pick("cells", CELLS),
  contestants: pick("contestants", ALL_CONTESTANTS),
  ...(args.has("profile") ? { profile: withOverrides(MODEL_PROFILE, args.get("profile") ?? "") } : {}),
};

// --report-from=agents.json: the report again from a run's saved summaries (after editing its texts), without running.
const reportFrom = args.get("report-from");
if (reportFrom !== undefined) {
  const saved = JSON.parse(readFileSync(reportFrom, "utf8")) as {
    run: RunInfo;
    cells: Array<{ name: string }>;
    contestants: Array<{ name: string }>;
    summaries: Summary[];
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
  );
  process.exit(0);
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

const workers = Math.min(positive("workers", real ? 1 : Math.max(1, Math.min(2, cpus().length))), units(options).length);
const started = performance.now();
const records: TaskRecord[] = [];
const total = units(options).length;
let lastPrint = 0;
await Promise.all(
  Array.from(
    { length: workers },
    (_, index) =>
      new Promise<void>((done, fail) => {
        const child = fork(here, [...process.argv.slice(2).filter((arg) => !arg.startsWith("--worker")), `--worker=${index}/${workers}`], {
          execArgv: process.execArgv,
        });
        child.on("message", (record: TaskRecord) => {
          records.push(record);
          const now = performance.now();
          if (now - lastPrint > 10_000) {
            lastPrint = now;
            console.log(`  ${records.length}/${total} tasks (${((now - started) / 1000).toFixed(0)} s)`);
          }
        });
        child.on("error", fail);
        child.on("exit", (code) => (code === 0 ? done() : fail(new Error(`worker ${index} exited with ${code}`))));
      }),
  ),
);
const seconds = (performance.now() - started) / 1000;

const summaries: Summary[] = [];
for (const cell of options.cells) {
  for (const contestant of options.contestants.filter((entry) => runsIn(entry, cell))) {
    summaries.push(
      summarise(
        cell.name,
        contestant.name,
        records.filter((record) => record.cell === cell.name && record.contestant === contestant.name),
      ),
    );
  }
}
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
writeReport(options, summaries, run, records.length * options.trials);

/** Writes AGENTS.md (or --out) with agents.json and agents.svg beside it; --out=none prints it. */
function writeReport(options: GridOptions, summaries: readonly Summary[], run: RunInfo, episodes: number): void {
  const markdown = renderReport(options, summaries, run);
  const spec = run.model === undefined ? undefined : (modelSpec ?? run.model);
  const defaultName = spec === undefined ? "AGENTS.md" : `AGENTS.${spec.replace(/[^A-Za-z0-9.-]+/g, "-")}.md`;
  const out = args.get("out") ?? join(dirname(here), "../..", defaultName);
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
  writeFileSync(`${base}.json`, `${JSON.stringify({ run, cells: options.cells, contestants, summaries }, null, 2)}\n`);
  writeFileSync(svg, renderSvg(options, summaries));
  console.log(`wrote ${path}, ${basename(base)}.json and ${basename(svg)} (${episodes} episodes in ${run.seconds.toFixed(0)} s)`);
}
