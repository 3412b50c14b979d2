import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { BENCH_ROOT, environment } from "./environment.js";
import { type CoreModule, loadCore } from "./ours.js";
import { renderMarkdown } from "./report.js";
import type { SuiteResult } from "./report-types.js";
import { adapters } from "./suites/adapters.js";
import { concurrency } from "./suites/concurrency.js";
import { failurePath } from "./suites/failure-path.js";
import { idempotency } from "./suites/idempotency.js";
import { langchain } from "./suites/langchain.js";
import { memory } from "./suites/memory.js";
import { openCircuit } from "./suites/open-circuit.js";
import { redis } from "./suites/redis.js";
import { successPath } from "./suites/success-path.js";

type Suite = (core: CoreModule | undefined) => Promise<SuiteResult>;

// Memory runs last: it leaves the largest heap behind.
const SUITES: ReadonlyArray<readonly [id: string, title: string, run: Suite]> = [
  ["success-path", "1. Success path", successPath],
  ["open-circuit", "2. Open-circuit rejection", openCircuit],
  ["failure-path", "3. Failure path", failurePath],
  ["concurrency", "6. Concurrency", concurrency],
  ["idempotency", "5. Idempotency", idempotency],
  ["langchain", "7. LangChain", langchain],
  ["redis", "8. Redis stores", redis],
  ["adapters", "9. Adapters", adapters],
  ["memory", "4. Memory", memory],
];

/** The Node major the committed results are measured on; other majors write beside them, with the major in the name. */
const REFERENCE_NODE_MAJOR = 20;

/**
 * Where this run writes: `RESULTS.md` / `results.json` on Node 20, `RESULTS.node<major>.md` /
 * `results.node<major>.json` on any other major; a partial run (`--only`) adds `.partial`.
 */
export function outputNames(nodeVersion: string, partial: boolean): { readonly markdown: string; readonly json: string } {
  const major = Number.parseInt(nodeVersion.replace(/^v/, ""), 10);
  const suffix = `${major === REFERENCE_NODE_MAJOR ? "" : `.node${major}`}${partial ? ".partial" : ""}`;
  return { markdown: `RESULTS${suffix}.md`, json: `results${suffix}.json` };
}

function selected(): ReadonlySet<string> | undefined {
  const only = process.argv.find((argument) => argument.startsWith("--only="));
  return only === undefined ? undefined : new Set(only.slice("--only=".length).split(","));
}

async function main(): Promise<void> {
  if (typeof globalThis.gc !== "function") throw new Error("run with node --expose-gc (npm run bench does)");
  const began = Date.now();
  const env = environment();
  const core = await loadCore();
  console.log(`retry-reflect bench: ${env.cpu}, ${env.cores} cores, Node ${env.node}`);
  if (core === undefined) console.log("@retry-reflect/core has no implementation yet: its rows are marked pending.");

  const only = selected();
  const results: SuiteResult[] = [];
  for (const [id, title] of SUITES) {
    if (only !== undefined && !only.has(id)) continue;
    process.stdout.write(`> ${title} ... `);
    const suiteBegan = Date.now();
    const result = runInOwnProcess(id, title);
    const seconds = (Date.now() - suiteBegan) / 1000;
    results.push({ ...result, seconds });
    console.log(`${seconds.toFixed(1)} s`);
  }

  const totalSeconds = (Date.now() - began) / 1000;
  const loadAverageAtEnd = Math.round(loadavg()[0]! * 100) / 100;
  const outputs = outputNames(process.version, only !== undefined);
  const markdown = renderMarkdown(env, results, totalSeconds, loadAverageAtEnd, outputs.json);
  writeFileSync(join(BENCH_ROOT, outputs.markdown), markdown);
  writeFileSync(
    join(BENCH_ROOT, outputs.json),
    `${JSON.stringify({ environment: env, totalSeconds, loadAverageAtEnd, suites: results }, null, 2)}\n`,
  );
  console.log(`\n${markdown}`);
  console.log(`wrote bench/${outputs.markdown} and bench/${outputs.json} in ${totalSeconds.toFixed(0)} s`);
}

/**
 * Each suite runs in a process of its own (this script with `--suite=<id>`, the same Node and
 * flags): a suite measures a fresh heap and fresh JIT state, never what the suites before it left
 * behind (the 10,000 calls in flight of the concurrency suite, a million idempotency records, the
 * LangChain agents). In one process, the adapters suite measured the AI SDK adapter at 0.44 µs
 * alone and at 7.6–9.0 µs after the other suites; the replay, 7.98× a Map lookup alone, 11.8×.
 */
function runInOwnProcess(id: string, title: string): SuiteResult {
  const folder = mkdtempSync(join(tmpdir(), "retry-reflect-bench-"));
  const resultFile = join(folder, "result.json");
  try {
    const child = spawnSync(
      process.execPath,
      [...process.execArgv, fileURLToPath(import.meta.url), `--suite=${id}`, `--result=${resultFile}`],
      {
        stdio: ["ignore", "inherit", "inherit"],
      },
    );
    try {
      return JSON.parse(readFileSync(resultFile, "utf8")) as SuiteResult;
    } catch {
      return failedSuite(id, title, `its process ended (exit ${child.status ?? child.signal}) without a result`);
    }
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
}

/** The result of a suite that failed: a note that says why, nothing measured. */
function failedSuite(id: string, title: string, message: string): SuiteResult {
  return { id, title, method: "", tables: [], targets: [], notes: [`The suite failed: ${message}`], data: { error: message } };
}

/** In a suite's own process: runs it and writes its result (a failure as a result that says so). */
async function runSuite(id: string, resultFile: string): Promise<void> {
  if (typeof globalThis.gc !== "function") throw new Error("run with node --expose-gc (npm run bench does)");
  const suite = SUITES.find(([suiteId]) => suiteId === id);
  if (suite === undefined) throw new Error(`no suite ${id}`);
  const [, title, run] = suite;
  const core = await loadCore();
  let result: SuiteResult;
  try {
    result = await run(core);
  } catch (error) {
    result = failedSuite(id, title, error instanceof Error ? error.message : String(error));
    console.error(error);
  }
  writeFileSync(resultFile, JSON.stringify(result));
}

const suiteArgument = process.argv.find((argument) => argument.startsWith("--suite="));
if (suiteArgument === undefined) await main();
else {
  const resultArgument = process.argv.find((argument) => argument.startsWith("--result=")) as string;
  await runSuite(suiteArgument.slice("--suite=".length), resultArgument.slice("--result=".length));
  // Whatever a suite left running (servers are stopped by it; timers, sockets) does not hold the run.
  process.exit(0);
}
