// The Markdown pieces of AGENTS.md: tables, and a summary's row.
import { OUTCOMES, type Summary } from "./run-grid.js";

export const percent = (value: number) => `${(value * 100).toFixed(1)} %`;
export const fixed = (value: number, digits = 2) => value.toFixed(digits);
/** "1 cell", "11 cells", "55,000 episodes". */
export const count = (value: number, one: string, many = `${one}s`) => `${value.toLocaleString("en-US")} ${value === 1 ? one : many}`;
/** "+1.5", "-0.3". */
export const signed = (value: number, digits = 1) => `${value >= 0 ? "+" : ""}${value.toFixed(digits)}`;

export function table(header: readonly string[], rows: readonly (readonly string[])[]): string {
  return [`| ${header.join(" | ")} |`, `| ${header.map(() => "---").join(" | ")} |`, ...rows.map((row) => `| ${row.join(" | ")} |`)].join(
    "\n",
  );
}

/** "answered 925, gave-up 75": the outcomes that happened, with their counts. */
export const outcomesOf = (summary: Summary) =>
  OUTCOMES.filter((outcome) => summary.outcomes[outcome] > 0)
    .map((outcome) => `${outcome} ${summary.outcomes[outcome]}`)
    .join(", ");

/** "12.3 / 30.1" seconds to give up (mean / p95), "–" where no episode gave up. */
export const giveUpOf = (summary: Summary) =>
  summary.giveUpSeconds === undefined ? "–" : `${fixed(summary.giveUpSeconds, 1)} / ${fixed(summary.giveUpSecondsP95 ?? 0, 1)}`;

/** The pass^k columns the summaries have (k up to the trials run). */
export const passKeys = (summaries: readonly Summary[]) => Object.keys(summaries[0]?.passK ?? {}).filter((key) => key !== "pass^1");

/**
 * The columns of a summary's row, after the contestant and seed. `giveUpTime`: the time to give up
 * (a cell's own; a mean over cells has none).
 */
export function summaryHeader(summaries: readonly Summary[], giveUpTime = true): string[] {
  return [
    "task success",
    ...passKeys(summaries),
    "model calls / task",
    "tool executions / task",
    "gave up",
    ...(giveUpTime ? ["time to give up, s: mean / p95"] : []),
    "duplicate side effects (per 1,000)",
    "virtual s: mean / p95",
    "outcomes",
  ];
}

/** A summary's row (after the contestant and seed), in summaryHeader's columns. */
export function summaryRow(summary: Summary, keys: readonly string[], giveUpTime = true): string[] {
  return [
    percent(summary.success),
    ...keys.map((key) => (summary.passK[key] === undefined ? "–" : percent(summary.passK[key] ?? 0))),
    fixed(summary.modelCalls),
    fixed(summary.toolExecutions),
    percent(summary.outcomes["gave-up"] / Math.max(1, summary.episodes)),
    ...(giveUpTime ? [giveUpOf(summary)] : []),
    `${summary.duplicates} (${fixed(summary.duplicatesPer1000, 1)})`,
    `${fixed(summary.virtualSeconds, 1)} / ${fixed(summary.virtualSecondsP95, 1)}`,
    outcomesOf(summary),
  ];
}
