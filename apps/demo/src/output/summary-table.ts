import type { ScenarioResult } from "../runner/run-scenario.js";
import { duplicateWritesPrevented } from "../runner/scenario-stats.js";
import { type Style, visibleLength } from "./style.js";

const HEADERS = [
  "#",
  "scenario",
  "tool execs",
  "model calls",
  "in place",
  "reflections",
  "temporary",
  "breaker transitions",
  "dup writes",
  "outcome",
];

/** What the short column names mean. */
export const SUMMARY_LEGEND =
  "in place = retries in place (no model call) · temporary = the model told the tool is temporarily unavailable, with the wait · " +
  "dup writes = duplicate writes prevented (guard replays + service dedupes)";

/** One row per scenario: the counts the issue asks for, and whether it ended as expected. */
export function summaryRows(results: readonly ScenarioResult[], style: Style): string[][] {
  return results.map(({ scenario, stats, verdict, ok }) => [
    String(scenario.id),
    scenario.shortName,
    String(stats.toolExecutions),
    String(stats.modelCalls),
    String(stats.retriesInPlace),
    String(stats.reflections),
    String(stats.temporary),
    stats.breakerTransitions.length === 0 ? "0" : `${stats.breakerTransitions.length} (${stats.breakerTransitions.join("→")})`,
    String(duplicateWritesPrevented(stats)),
    ok ? style.green(`✓ ${verdict.outcome}`) : style.red(`✗ ${verdict.outcome}`),
  ]);
}

/** The summary as aligned text lines. */
export function renderSummaryTable(results: readonly ScenarioResult[], style: Style): string[] {
  const rows = [HEADERS, ...summaryRows(results, style)];
  const widths = HEADERS.map((_, column) => Math.max(...rows.map((row) => visibleLength(row[column] ?? ""))));
  const render = (row: readonly string[]) =>
    row
      .map((cell, column) => (column === row.length - 1 ? cell : cell + " ".repeat((widths[column] ?? 0) - visibleLength(cell))))
      .join("  ")
      .trimEnd();
  const [header, ...body] = rows;
  return [
    style.bold(render(header ?? [])),
    style.dim(widths.map((width) => "─".repeat(width)).join("  ")),
    ...body.map(render),
    style.dim(SUMMARY_LEGEND),
  ];
}
