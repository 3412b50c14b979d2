// The figures of FINDINGS.md's "what the results argue for": retry-reflect with one default
// changed, over the cells where that default matters, on the same seeds as `npm run bench:agents`
// (so its episodes pair up with the defaults' row of AGENTS.md). Prints a table; about 8 minutes
// on one core:
//
//   cd bench && node --no-warnings --import tsx src/agents/variants.ts [--cells=hang,outage]
import { type RetryReflectOptions, RetryReflectPlugin } from "@retry-reflect/core";
import { retryReflectMiddleware } from "@retry-reflect/langchain";
import { CELLS } from "./cells.js";
import type { Contestant } from "./contestants.js";
import { runShard, summarise, type TaskRecord } from "./run-grid.js";

const variant = (name: string, options: Partial<RetryReflectOptions>): Contestant => ({
  name,
  role: "candidate",
  description: name,
  middleware: (clock) => [retryReflectMiddleware(RetryReflectPlugin.create({ clock, ...options }))],
});

const VARIANTS: readonly Contestant[] = [
  variant("defaults", {}),
  variant("attemptTimeoutMs: 30 s", { attemptTimeoutMs: 30_000 }),
  variant("attemptTimeoutMs: 60 s", { attemptTimeoutMs: 60_000 }),
  variant('idempotency.derive: "when-missing"', { idempotency: { derive: "when-missing" } }),
  variant("maxRetries: 6, circuitBreakerThreshold: 8", { maxRetries: 6, circuitBreakerThreshold: 8 }),
];

const only = process.argv
  .find((arg) => arg.startsWith("--cells="))
  ?.slice("--cells=".length)
  .split(",");
const cells = CELLS.filter((cell) =>
  only
    ? only.includes(cell.name)
    : [
        "baseline",
        "explicit-transient",
        "explicit-permanent",
        "hang",
        "slow-but-fine",
        "lost-write-response",
        "outage",
        "down-for-good",
      ].includes(cell.name),
);
const records: TaskRecord[] = [];
await runShard({ seed: 1, tasks: 125, trials: 8, cells, contestants: VARIANTS }, 0, 1, (record) => records.push(record));

console.log(
  "| cell | retry-reflect with | task success | pass^8 | model calls / task | tool executions / task | duplicates | virtual s: mean / p95 |",
);
console.log("| --- | --- | --- | --- | --- | --- | --- | --- |");
for (const cell of cells) {
  for (const contestant of VARIANTS) {
    const summary = summarise(
      cell.name,
      contestant.name,
      records.filter((record) => record.cell === cell.name && record.contestant === contestant.name),
    );
    const pass8 = summary.passK["pass^8"] ?? 0;
    console.log(
      `| ${cell.name} | ${contestant.name} | ${(summary.success * 100).toFixed(1)} % | ${(pass8 * 100).toFixed(1)} % | ${summary.modelCalls.toFixed(2)} | ${summary.toolExecutions.toFixed(2)} | ${summary.duplicates} | ${summary.virtualSeconds.toFixed(1)} / ${summary.virtualSecondsP95.toFixed(1)} |`,
    );
  }
}
