import { writeFileSync } from "node:fs";
import { loadavg } from "node:os";
import { join } from "node:path";
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
  for (const [id, title, run] of SUITES) {
    if (only !== undefined && !only.has(id)) continue;
    process.stdout.write(`> ${title} ... `);
    const suiteBegan = Date.now();
    let result: SuiteResult;
    try {
      result = await run(core);
    } catch (error) {
      const message = error instanceof Error ? `${error.message}` : String(error);
      result = {
        id,
        title,
        method: "",
        tables: [],
        targets: [],
        notes: [`The suite failed: ${message}`],
        data: { error: message },
      };
      console.error(error);
    }
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

await main();
