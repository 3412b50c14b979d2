// The outage sweep: get_weather down (503) for the first 3 to 60 s, then fine. Task success against
// the outage's duration, one line per contestant (agents.outage.svg, solid: the first seed, dashed:
// the second), and its tables in AGENTS.md.
import { COLOURS } from "./curves.js";
import { type Bench, outageCells } from "./goals.js";
import type { Summary } from "./run-grid.js";

const find = (summaries: readonly Summary[], cell: string, contestant: string) =>
  summaries.find((summary) => summary.cell === cell && summary.contestant === contestant);

/** The contestants that ran at every duration of the sweep. */
function curveContestants(bench: Bench): string[] {
  const cells = outageCells(bench.cells);
  return bench.contestants
    .filter((contestant) => bench.runs.every((run) => cells.every((cell) => find(run.summaries, cell.name, contestant.name))))
    .map((contestant) => contestant.name);
}

/** A table per figure: a row per contestant, a column per duration, each seed's value ("seed 1 / seed 2"). */
export function outageTables(bench: Bench): string[] {
  const cells = outageCells(bench.cells);
  const seeds = bench.runs.map((run) => run.seed);
  const figures: Array<[string, (summary: Summary) => string]> = [
    ["task success (%)", (summary) => (summary.success * 100).toFixed(1)],
    ["model calls per task", (summary) => summary.modelCalls.toFixed(2)],
    ["time to give up, p95 (s; – where no task gave up)", (summary) => summary.giveUpSecondsP95?.toFixed(1) ?? "–"],
  ];
  const lines: string[] = [];
  for (const [title, show] of figures) {
    const header = ["contestant", ...cells.map((cell) => `${cell.outageSeconds} s`)];
    lines.push(`${title}, ${seeds.map((seed) => `seed ${seed}`).join(" / ")}:`, "");
    lines.push(`| ${header.join(" | ")} |`, `| ${header.map(() => "---").join(" | ")} |`);
    for (const contestant of curveContestants(bench)) {
      const values = cells.map((cell) =>
        bench.runs
          .map((run) => {
            const summary = find(run.summaries, cell.name, contestant);
            return summary === undefined ? "–" : show(summary);
          })
          .join(" / "),
      );
      lines.push(`| ${contestant} | ${values.join(" | ")} |`);
    }
    lines.push("");
  }
  return lines;
}

/** Task success against the outage's duration: a line per contestant and seed (solid: the first seed, dashed: the others). */
export function renderOutageSvg(bench: Bench): string {
  const cells = outageCells(bench.cells);
  const contestants = curveContestants(bench);
  const width = 1_020;
  const height = 440;
  const left = 60;
  const plot = 520;
  const top = 50;
  const plotHeight = 300;
  const maxSeconds = Math.max(1, ...cells.map((cell) => cell.outageSeconds ?? 0));
  const x = (seconds: number) => left + (plot * seconds) / maxSeconds;
  const y = (value: number) => top + plotHeight * (1 - value);
  const percent = (value: number) => `${(value * 100).toFixed(1)} %`;
  const parts = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="sans-serif" font-size="12" role="img">`,
    `<title>Task success against the duration of a get_weather outage, per contestant</title>`,
    `<rect width="${width}" height="${height}" fill="white"/>`,
    `<text x="${left}" y="22" font-size="15" font-weight="bold">Task success against the outage's duration (get_weather down, then fine)</text>`,
  ];
  for (let tick = 0; tick <= 10; tick += 2) {
    parts.push(`<line x1="${left}" x2="${left + plot}" y1="${y(tick / 10)}" y2="${y(tick / 10)}" stroke="#e5e7eb"/>`);
    parts.push(`<text x="${left - 8}" y="${y(tick / 10) + 4}" text-anchor="end">${tick * 10} %</text>`);
  }
  for (const cell of cells) {
    const at = x(cell.outageSeconds ?? 0);
    parts.push(`<line x1="${at}" x2="${at}" y1="${top + plotHeight}" y2="${top + plotHeight + 5}" stroke="#111"/>`);
    parts.push(`<text x="${at}" y="${top + plotHeight + 18}" text-anchor="middle">${cell.outageSeconds}</text>`);
  }
  parts.push(`<line x1="${left}" x2="${left + plot}" y1="${top + plotHeight}" y2="${top + plotHeight}" stroke="#111"/>`);
  parts.push(`<text x="${left + plot / 2}" y="${top + plotHeight + 40}" text-anchor="middle">outage (s)</text>`);
  contestants.forEach((contestant, index) => {
    const colour = COLOURS[index % COLOURS.length];
    bench.runs.forEach((run, runIndex) => {
      const points = cells.flatMap((cell) => {
        const summary = find(run.summaries, cell.name, contestant);
        return summary === undefined ? [] : [{ seconds: cell.outageSeconds ?? 0, summary }];
      });
      const dash = runIndex === 0 ? "" : ' stroke-dasharray="5 4"';
      parts.push(
        `<polyline points="${points.map((point) => `${x(point.seconds).toFixed(1)},${y(point.summary.success).toFixed(1)}`).join(" ")}" fill="none" stroke="${colour}" stroke-width="2"${dash}><title>${contestant}, seed ${run.seed}</title></polyline>`,
      );
      for (const point of points) {
        parts.push(
          `<circle cx="${x(point.seconds).toFixed(1)}" cy="${y(point.summary.success).toFixed(1)}" r="2.5" fill="${colour}"><title>${contestant}, ${point.seconds} s outage, seed ${run.seed}: ${percent(point.summary.success)}</title></circle>`,
        );
      }
    });
    const legendY = top + 10 + index * 22;
    parts.push(
      `<line x1="${left + plot + 30}" x2="${left + plot + 52}" y1="${legendY - 4}" y2="${legendY - 4}" stroke="${colour}" stroke-width="2"/>`,
    );
    parts.push(`<text x="${left + plot + 58}" y="${legendY}">${contestant}</text>`);
  });
  const seeds = bench.runs.map((run) => run.seed);
  parts.push(
    `<text x="${left + plot + 30}" y="${top + 10 + contestants.length * 22 + 10}" fill="#555">${seeds.length > 1 ? `solid: seed ${seeds[0]}; dashed: seed ${seeds.slice(1).join(", ")}` : `seed ${seeds[0]}`}</text>`,
  );
  parts.push("</svg>");
  return `${parts.join("\n")}\n`;
}
