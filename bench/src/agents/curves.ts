// The fault-intensity curves (`npm run bench:agents:sweep`): task success and pass^4 of every
// contestant against the probability of a 503 or a 429 per execution of get_weather, 0 to 0.9
// (CURVE_CELLS), as agents.curves.svg and a table in AGENTS.md.
import { CURVE_FAULTS, INTENSITIES } from "./cells.js";
import type { Summary } from "./run-grid.js";

/** The pass^k the curves show beside task success (the curves run this many trials per task). */
export const CURVE_K = 4;

/** One colour per contestant, in the order of the grid (agents.svg and agents.curves.svg alike). */
export const COLOURS = ["#6b7280", "#2563eb", "#d97706", "#059669", "#7c3aed", "#dc2626", "#0891b2", "#be185d", "#65a30d", "#92400e"];
const percent = (value: number) => `${(value * 100).toFixed(1)} %`;

const find = (summaries: readonly Summary[], fault: string, probability: number, contestant: string) =>
  summaries.find((summary) => summary.cell === `${fault}@${probability}` && summary.contestant === contestant);
const passK = (summary: Summary) => summary.passK[`pass^${CURVE_K}`] ?? summary.success;

/** One table per fault: a row per contestant, a column per intensity ("success / pass^4"). */
export function curvesTables(contestants: readonly string[], summaries: readonly Summary[]): string[] {
  const lines: string[] = [];
  for (const fault of Object.keys(CURVE_FAULTS)) {
    const header = ["contestant", ...INTENSITIES.map((probability) => `p = ${probability}`)];
    lines.push(`${fault} (task success / pass^${CURVE_K}):`, "");
    lines.push(`| ${header.join(" | ")} |`, `| ${header.map(() => "---").join(" | ")} |`);
    for (const contestant of contestants) {
      const cells = INTENSITIES.map((probability) => {
        const summary = find(summaries, fault, probability, contestant);
        return summary === undefined ? "–" : `${(summary.success * 100).toFixed(0)} / ${(passK(summary) * 100).toFixed(0)}`;
      });
      lines.push(`| ${contestant} | ${cells.join(" | ")} |`);
    }
    lines.push("");
  }
  return lines;
}

/** Two panels (503, 429): a solid line for task success, a dashed one for pass^4, per contestant. */
export function renderCurvesSvg(contestants: readonly string[], summaries: readonly Summary[]): string {
  const faults = Object.keys(CURVE_FAULTS);
  const panel = 380;
  const left = 60;
  const gap = 40;
  const top = 50;
  const plot = 300;
  const legend = 420;
  const width = left + faults.length * (panel + gap) + legend;
  const height = top + plot + 70;
  const y = (value: number) => top + plot * (1 - value);
  const maxP = INTENSITIES.at(-1) ?? 1;
  const parts = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="sans-serif" font-size="12" role="img">`,
    `<title>Task success and pass^${CURVE_K} against the probability of a fault per execution, per contestant</title>`,
    `<rect width="${width}" height="${height}" fill="white"/>`,
    `<text x="${left}" y="22" font-size="15" font-weight="bold">Task success (solid) and pass^${CURVE_K} (dashed) against fault intensity</text>`,
  ];
  faults.forEach((fault, panelIndex) => {
    const x0 = left + panelIndex * (panel + gap);
    const x = (probability: number) => x0 + (panel * probability) / maxP;
    parts.push(
      `<text x="${x0 + panel / 2}" y="${top - 10}" text-anchor="middle" font-weight="bold">get_weather: ${fault === "transient" ? "503" : "429 with Retry-After"}</text>`,
    );
    for (let tick = 0; tick <= 10; tick += 2) {
      parts.push(`<line x1="${x0}" x2="${x0 + panel}" y1="${y(tick / 10)}" y2="${y(tick / 10)}" stroke="#e5e7eb"/>`);
      if (panelIndex === 0) parts.push(`<text x="${x0 - 8}" y="${y(tick / 10) + 4}" text-anchor="end">${tick * 10} %</text>`);
    }
    for (const probability of INTENSITIES) {
      parts.push(`<text x="${x(probability)}" y="${top + plot + 18}" text-anchor="middle">${probability}</text>`);
    }
    parts.push(`<line x1="${x0}" x2="${x0 + panel}" y1="${top + plot}" y2="${top + plot}" stroke="#111"/>`);
    parts.push(`<text x="${x0 + panel / 2}" y="${top + plot + 40}" text-anchor="middle">probability per execution</text>`);
    contestants.forEach((contestant, index) => {
      const colour = COLOURS[index % COLOURS.length];
      const points = INTENSITIES.flatMap((probability) => {
        const summary = find(summaries, fault, probability, contestant);
        return summary === undefined ? [] : [{ probability, summary }];
      });
      const line = (pick: (summary: Summary) => number) =>
        points.map(({ probability, summary }) => `${x(probability).toFixed(1)},${y(pick(summary)).toFixed(1)}`).join(" ");
      parts.push(
        `<polyline points="${line((summary) => summary.success)}" fill="none" stroke="${colour}" stroke-width="2"><title>${contestant}: task success</title></polyline>`,
      );
      parts.push(
        `<polyline points="${line(passK)}" fill="none" stroke="${colour}" stroke-width="1.5" stroke-dasharray="5 4"><title>${contestant}: pass^${CURVE_K}</title></polyline>`,
      );
      for (const { probability, summary } of points) {
        parts.push(
          `<circle cx="${x(probability).toFixed(1)}" cy="${y(summary.success).toFixed(1)}" r="2.5" fill="${colour}"><title>${contestant}, ${fault} p = ${probability}: ${percent(summary.success)}, pass^${CURVE_K} ${percent(passK(summary))}</title></circle>`,
        );
      }
    });
  });
  const legendX = left + faults.length * (panel + gap);
  contestants.forEach((contestant, index) => {
    const legendY = top + 10 + index * 22;
    parts.push(
      `<line x1="${legendX}" x2="${legendX + 22}" y1="${legendY - 4}" y2="${legendY - 4}" stroke="${COLOURS[index % COLOURS.length]}" stroke-width="2"/>`,
    );
    parts.push(`<text x="${legendX + 28}" y="${legendY}">${contestant}</text>`);
  });
  parts.push("</svg>");
  return `${parts.join("\n")}\n`;
}
