// bench/AGENTS.md and its pictures from the summaries of one run (both seeds): the lead and the goal
// checks first, then the verdicts, the outage sweep, the give-ups, the candidates, the load
// sections, the profile sweep, and every cell's table.
import { CELLS, type Cell } from "./cells.js";
import type { Contestant } from "./contestants.js";
import { COLOURS, curvesTables } from "./curves.js";
import { DEADLINE_MS, RECURSION_LIMIT } from "./episode.js";
import {
  type Bench,
  type CellVerdict,
  type Check,
  cellVerdicts,
  comparableCells,
  doneWhen,
  GOALS,
  gridCells,
  leads,
  losses,
  OURS,
  outageCells,
  overall,
  pairedGap,
  peersOf,
  standardError,
} from "./goals.js";
import { LOADS } from "./load.js";
import { loadSection } from "./load-report.js";
import { count, fixed, giveUpOf, outcomesOf, passKeys, percent, signed, summaryHeader, summaryRow, table } from "./markdown.js";
import { MODEL_PROFILE, type ModelProfile } from "./model-profile.js";
import { outageTables } from "./outage.js";
import type { Summary } from "./run-grid.js";
import { type Sweep, sweepSummary, sweepTable } from "./sweep.js";
import { WHY } from "./why.js";
import { TOOL_LATENCY_MS } from "./world.js";

export interface RunInfo {
  readonly seeds: readonly number[];
  readonly tasks: number;
  readonly trials: number;
  readonly workers: number;
  /** The run's wall time, all of it (s). */
  readonly seconds: number;
  /** The CPU time its processes used (s): on a machine shared with other work the wall time grows, this does not. */
  readonly cpuSeconds?: number;
  readonly node: string;
  readonly date: string;
  /** A real model's label (`--model`); the simulated model when absent. */
  readonly model?: string;
  /** `--profile` overrides of the simulated model's numbers, as given. */
  readonly profile?: string;
}

/** agents.sweep.json: the profile sweep and the fault-intensity curves (`npm run bench:agents:sweep`). */
export interface SweepFile {
  readonly sweep: Sweep;
  readonly curves: {
    readonly seed: number;
    readonly tasks: number;
    readonly trials: number;
    readonly seconds: number;
    readonly contestants: readonly string[];
    readonly summaries: readonly Summary[];
  };
}

/** What the report is written from. */
export interface ReportInput extends Bench {
  readonly run: RunInfo;
  readonly sweep?: SweepFile;
  readonly profile?: ModelProfile;
}

const roleNote = (contestant: Contestant) =>
  contestant.role === "information" ? " (information)" : contestant.role === "candidate" ? " (candidate)" : "";

/** The sweep, when it ran with the run's peers and defaults (else its lead is not this run's). */
export function sweepOfThesePeers(input: ReportInput): Sweep | undefined {
  const sweep = input.sweep?.sweep;
  const mine = input.contestants.filter((contestant) => contestant.role === "peer" || contestant.role === "ours").map((c) => c.name);
  if (sweep?.contestants === undefined) return undefined;
  return mine.every((name) => sweep.contestants?.includes(name)) ? sweep : undefined;
}

/** Summaries of several seeds as one per (cell, contestant): the means of their figures (the pictures' dots). */
export function meanOverSeeds(summaries: readonly Summary[]): Summary[] {
  const groups = new Map<string, Summary[]>();
  for (const summary of summaries) {
    const key = `${summary.cell}\u0000${summary.contestant}`;
    groups.set(key, [...(groups.get(key) ?? []), summary]);
  }
  return [...groups.values()].map((group) => {
    const mean = (pick: (summary: Summary) => number) => group.reduce((sum, summary) => sum + pick(summary), 0) / group.length;
    return { ...(group[0] as Summary), success: mean((summary) => summary.success), modelCalls: mean((summary) => summary.modelCalls) };
  });
}

/** The standard errors of the cells' task success at this size, over the cells that compare (the peers' and the defaults' rows). */
function errorsLine(input: ReportInput): string {
  const cells = new Set(comparableCells(input.cells).map((cell) => cell.name));
  const judged = new Set(
    input.contestants.filter((contestant) => contestant.role === "peer" || contestant.role === "ours").map((c) => c.name),
  );
  const errors = input.runs
    .flatMap((seedRun) => seedRun.summaries.filter((summary) => cells.has(summary.cell) && judged.has(summary.contestant)))
    .map((summary) => standardError(summary) * 100)
    .sort((a, b) => a - b);
  if (errors.length === 0) return "";
  const median = errors[Math.floor(errors.length / 2)] ?? 0;
  return `At this size a cell's task success has a standard error of ${median.toFixed(1)} points at the median and ${(errors.at(-1) ?? 0).toFixed(1)} at most (the peers' and the defaults' rows of the cells that compare; the tasks are the independent units); each gap below says its own.`;
}

/** The first screen: the lead on each seed, its range over the profile sweep and the seeds, and every cell lost. */
function leadScreen(input: ReportInput): string[] {
  const comparable = comparableCells(input.cells);
  const byseed = leads(input);
  if (byseed.length === 0) return [];
  const demos = gridCells(input.cells);
  const lines: string[] = [];
  const leadText = (lead: number) => `${lead >= 0 ? "leads" : "trails"} by ${Math.abs(lead * 100).toFixed(1)} points`;
  lines.push(
    `**The lead.** retry-reflect with the core's defaults (no options) against the best peer, over the ${comparable.length} cells that compare (each weighs the same): ${byseed
      .map(
        (entry) =>
          `seed ${entry.seed}: it ${leadText(entry.lead)} (${percent(entry.ours.success)} vs ${percent(entry.best.success)}, ${entry.best.contestant})`,
      )
      .join("; ")}.${
      demos.length > comparable.length
        ? ` With the feature demo (${demos.length} cells): ${input.runs
            .map((run) => {
              const means = overall(input.contestants, run.summaries, demos);
              const ours = means.find((row) => row.contestant === OURS);
              const peers = means.filter((row) => peersOf(input.contestants).some((peer) => peer.name === row.contestant));
              if (ours === undefined || peers.length === 0) return "";
              const best = peers.reduce((a, b) => (b.success > a.success ? b : a));
              return `seed ${run.seed} ${signed((ours.success - best.success) * 100)} points`;
            })
            .filter((text) => text !== "")
            .join(", ")}.`
        : ""
    }`,
    "",
  );
  const sweep = sweepOfThesePeers(input);
  const points = [
    ...byseed.map((entry) => ({ lead: entry.lead, where: `seed ${entry.seed}` })),
    ...(sweep?.results ?? []).map((result) => ({
      lead: result.ours - result.best,
      where: `the profile sweep at ${result.path === "" ? "the committed profile" : `${result.path}=${result.value}`}`,
    })),
  ];
  const low = points.reduce((a, b) => (b.lead < a.lead ? b : a));
  const high = points.reduce((a, b) => (b.lead > a.lead ? b : a));
  lines.push(
    `**Its range**: over ${sweep === undefined ? "the seeds" : `the profile sweep (${sweep.results.length} points, ${sweep.tasks} tasks × ${sweep.trials} trials, seed ${sweep.seed}) and the seeds`}, from ${signed(low.lead * 100)} points (${low.where}) to ${signed(high.lead * 100)} (${high.where}).${
      sweep === undefined
        ? input.sweep === undefined
          ? " (No profile sweep: `npm run bench:agents:sweep` writes one.)"
          : " (agents.sweep.json ran other contestants than these peers: rerun `npm run bench:agents:sweep`.)"
        : ""
    }`,
    "",
  );
  const lost = losses(input, comparable);
  const bySeed = input.runs.map((run) => {
    const mine = lost.filter((loss) => loss.seed === run.seed);
    return `seed ${run.seed}: ${mine.length === 0 ? "none" : mine.map((loss) => `${loss.cell} to ${loss.peer} (${signed(loss.gap * 100)} ± ${(loss.margin * 100).toFixed(1)} points)`).join(", ")}`;
  });
  lines.push(`**Cells lost** (to any peer, a paired gap below twice its standard error): ${bySeed.join("; ")}.`, "");
  return lines;
}

/** Issue 51's "Done when", each goal met or missed with its figures. */
function checksSection(checks: readonly Check[]): string[] {
  const mark = (met: boolean | undefined) => (met === undefined ? "not measured" : met ? "met" : "**missed**");
  return [
    `## Done when (issue 51): ${checks.filter((check) => check.met === true).length} of ${checks.length} met`,
    "",
    ...checks.map((check) => `- ${check.goal}: ${mark(check.met)}. ${check.figures}.`),
    "",
  ];
}

/** Rows of `contestants` × seeds for one set of summaries. */
function rowsBySeed(
  input: ReportInput,
  pick: (run: ReportInput["runs"][number]) => readonly Summary[],
  giveUpTime: boolean,
  keys: readonly string[],
): string[][] {
  return input.contestants.flatMap((contestant) =>
    input.runs.flatMap((run) => {
      const summary = pick(run).find((entry) => entry.contestant === contestant.name);
      return summary === undefined
        ? []
        : [[`${contestant.name}${roleNote(contestant)}`, String(run.seed), ...summaryRow(summary, keys, giveUpTime)]];
    }),
  );
}

/** The profile sweep's table and the fault-intensity curves (from agents.sweep.json). */
function sweepSection(file: SweepFile, current: boolean): string[] {
  const { sweep, curves } = file;
  return [
    "## How far the lead depends on the simulated model: the profile sweep",
    "",
    ...(current
      ? []
      : [
          `**This sweep ran other contestants than this run's peers** (${(sweep.contestants ?? [...new Set(sweep.results.map((result) => result.bestPeer))]).join(", ")}): its lead is not this run's; \`npm run bench:agents:sweep\` runs it again.`,
          "",
        ]),
    `Every number of the simulated model's profile (below), moved down and up one at a time (a probability by 0.25 within [0, 1], and to 1 for a rate at 0; a count or a time by half), and the grid run again at each point, smaller: ${sweep.tasks} tasks × ${sweep.trials} trials per cell and contestant, seed ${sweep.seed}, the peers and retry-reflect with its defaults (${sweep.results.length} points, ${sweep.seconds.toFixed(0)} s; \`npm run bench:agents:sweep\`). The tasks and seeds are the same at every point, so the points differ by the number changed, not by the draw; at this size one cell's success has a standard error of several points, the mean over a dozen cells of about 1–2. The lead is retry-reflect's task success minus the best peer's, over the cells that compare, then with the feature demo.`,
    "",
    sweepSummary(sweep).line,
    "",
    ...sweepTable(sweep),
    "",
    "## Curves: task success and pass^4 against fault intensity",
    "",
    `get_weather fails with a 503, or answers 429 with a Retry-After, with probability p per execution, p from 0 to 0.9 (${curves.tasks} tasks × ${curves.trials} trials per point, seed ${curves.seed}, ${curves.seconds.toFixed(0)} s; written with the profile sweep). Solid: task success; dashed: pass^4.`,
    "",
    "![task success and pass^4 against the probability of a fault per execution](agents.curves.svg)",
    "",
    ...curvesTables(curves.contestants, curves.summaries),
  ];
}

/** Crashes scored apart: what a contestant that crashed would score if its crash counted as an honest stop (a host that shows the error to the user). */
function crashNote(rows: readonly Summary[]): string[] {
  const crashed = rows.filter((summary) => summary.outcomes.crashed > 0);
  if (crashed.length === 0) return [];
  const parts = crashed.map(
    (summary) =>
      `${summary.contestant}, seed ${summary.seed}: ${percent(summary.success)} → ${percent(summary.success + summary.outcomes.crashed / summary.episodes)} (${summary.outcomes.crashed} crashes)`,
  );
  return [
    `Crashes are scored apart from give-ups: a crash is not an honest give-up (the run ends with an error, not an answer to the user). Counted as an honest stop instead (a host that shows the error), the task success would be: ${parts.join("; ")}.`,
    "",
  ];
}

/** One cell's verdict on every seed, in a line: against the best peer, the other peers it loses to, the figures beside success. */
function verdictLine(cell: Cell, entries: readonly CellVerdict[]): string {
  const seeds = entries.map((entry) => {
    const { verdict, gap, margin } = entry.againstBest;
    const others = entry.againstEach.filter((against) => against.verdict === "loses" && against.peer !== entry.best);
    const alsoLoses =
      others.length === 0
        ? ""
        : `; also loses to ${others.map((against) => `${against.peer.contestant} (${signed(against.gap * 100)} ± ${(against.margin * 100).toFixed(1)})`).join(", ")}`;
    const giveUps =
      entry.ours.giveUpSeconds === undefined && entry.best.giveUpSeconds === undefined
        ? ""
        : `; time to give up, s (mean / p95) ${giveUpOf(entry.ours)} vs ${giveUpOf(entry.best)}`;
    return `seed ${entry.seed} **${verdict}**, ${percent(entry.ours.success)} vs ${percent(entry.best.success)} (${entry.best.contestant}), a paired gap of ${signed(gap * 100)} ± ${(margin * 100).toFixed(1)} points; model calls ${fixed(entry.ours.modelCalls)} vs ${fixed(entry.best.modelCalls)}; tool executions ${fixed(entry.ours.toolExecutions)} vs ${fixed(entry.best.toolExecutions)}${giveUps}; duplicates ${entry.ours.duplicates} vs ${entry.best.duplicates}${alsoLoses}`;
  });
  return `- **${cell.name}**: ${seeds.join(". ")}. ${WHY[cell.name] ?? ""}`.trimEnd();
}

/** The cells whose task can only end in a give-up: each contestant's honest give-ups, how soon, at what cost. */
function giveUpSection(input: ReportInput): string[] {
  const cells = gridCells(input.cells).filter((cell) => cell.unsolvable);
  if (cells.length === 0) return [];
  const rows = cells.flatMap((cell) =>
    input.contestants.flatMap((contestant) =>
      input.runs.flatMap((run) => {
        const summary = run.summaries.find((entry) => entry.cell === cell.name && entry.contestant === contestant.name);
        return summary === undefined
          ? []
          : [
              [
                cell.name,
                `${contestant.name}${roleNote(contestant)}`,
                String(run.seed),
                percent(summary.success),
                giveUpOf(summary),
                fixed(summary.modelCalls),
                fixed(summary.toolExecutions),
                outcomesOf(summary),
              ],
            ];
      }),
    ),
  );
  return [
    "## Giving up: how soon, at what cost",
    "",
    `Where no contestant can get the answer (${cells.map((cell) => `*${cell.name}*: ${cell.description}`).join("; ")}), the only success is an honest give-up: the agent tells the user it could not, sends nothing, does not crash. The time to give up is the virtual time at which the agent answered so (from the task's start); the goal for a dead tool is 100 % honest give-ups no later than the best peer's p95 + ${GOALS.giveUpSlackSeconds} s, in no more model calls. Every cell's table (below) has the same columns for the agents that gave up where an answer was possible.`,
    "",
    table(
      [
        "cell",
        "contestant",
        "seed",
        "honest give-ups",
        "time to give up, s: mean / p95",
        "model calls / task",
        "tool executions / task",
        "outcomes",
      ],
      rows,
    ),
    "",
  ];
}

/** The candidates: each beside the defaults' row in every cell it ran in, paired over the same tasks. */
function candidateSection(input: ReportInput): string[] {
  const candidates = input.contestants.filter((contestant) => contestant.role === "candidate");
  const rows = candidates.flatMap((candidate) =>
    input.cells.flatMap((cell) =>
      input.runs.flatMap((run) => {
        const mine = run.summaries.find((entry) => entry.cell === cell.name && entry.contestant === candidate.name);
        const ours = run.summaries.find((entry) => entry.cell === cell.name && entry.contestant === OURS);
        if (mine === undefined || ours === undefined) return [];
        const { gap, margin } = pairedGap(mine, ours);
        return [
          [
            candidate.name,
            cell.name,
            String(run.seed),
            `${percent(mine.success)} (${percent(ours.success)})`,
            `${signed(gap * 100)} ± ${(margin * 100).toFixed(1)}`,
            `${fixed(mine.modelCalls)} (${fixed(ours.modelCalls)})`,
            `${fixed(mine.toolExecutions)} (${fixed(ours.toolExecutions)})`,
            `${giveUpOf(mine)} (${giveUpOf(ours)})`,
            `${mine.duplicates} (${ours.duplicates})`,
            outcomesOf(mine),
          ],
        ];
      }),
    ),
  );
  if (rows.length === 0) return [];
  return [
    "## Candidates: retry-reflect with options, beside its defaults",
    "",
    "Each candidate (bench/src/agents/candidates.ts) is retry-reflect with the core's defaults and the options in its name, run only in its cells, on the same tasks and seeds as the defaults' row; in brackets, the defaults' own figure. The gap is the candidate's task success minus the defaults', paired over the same tasks (± twice its standard error). Candidates are not peers: the lead and the verdicts above are the defaults' alone. Their rows in the load sections are in those sections.",
    "",
    table(
      [
        "candidate",
        "cell",
        "seed",
        "task success (defaults)",
        "gap vs the defaults (points)",
        "model calls / task (defaults)",
        "tool executions / task (defaults)",
        "time to give up, s: mean / p95 (defaults)",
        "duplicate side effects (defaults)",
        "outcomes",
      ],
      rows,
    ),
    "",
  ];
}

export function renderReport(input: ReportInput): string {
  const { run } = input;
  const profile = input.profile ?? MODEL_PROFILE;
  const lines: string[] = [];
  const grid = gridCells(input.cells);
  const comparable = comparableCells(input.cells);
  const outages = outageCells(input.cells);
  const extraOutages = outages.filter((cell) => !grid.includes(cell));
  const demos = grid.filter((cell) => cell.featureDemo !== undefined);
  const gridEpisodes = input.runs.reduce(
    (sum, seedRun) => sum + seedRun.summaries.reduce((total, summary) => total + summary.episodes, 0),
    0,
  );
  const loadEpisodes = input.runs.reduce(
    (sum, seedRun) =>
      sum + seedRun.loads.reduce((total, load) => total + load.summaries.reduce((all, row) => all + row.summary.episodes, 0), 0),
    0,
  );
  const everywhere = input.contestants.filter((contestant) => contestant.cells === undefined);
  const partial = input.contestants.filter((contestant) => contestant.cells !== undefined);
  const loadNames = [...new Set(input.runs.flatMap((seedRun) => seedRun.loads.map((load) => load.spec.name)))];
  const fleetAgents = input.runs[0]?.loads[0]?.spec.agents;
  const seedsText = run.seeds.length === 1 ? `seed ${run.seeds[0]}` : `seeds ${run.seeds.join(" and ")}`;
  lines.push("# Agents under fire: the agent-outcome benchmark", "");
  lines.push(
    `Generated by \`npm run bench:agents\` (bench/src/agents) on ${run.date.slice(0, 10)}, Node.js ${run.node}: ${seedsText}, each with ${count(grid.length, "cell")}${extraOutages.length === 0 ? "" : ` and ${count(extraOutages.length, "more outage duration")}`} × ${count(everywhere.length, "contestant")} × ${count(run.tasks, "task")} × ${count(run.trials, "trial")} (${(run.tasks * run.trials).toLocaleString("en-US")} episodes per cell and contestant)${
      partial.length === 0 ? "" : `, plus ${count(partial.length, "candidate")} in ${partial.length === 1 ? "its" : "their"} own cells`
    }${loadNames.length === 0 ? "" : `, and ${count(loadNames.length, "load section")} (a fleet of ${(fleetAgents ?? 0).toLocaleString("en-US")} agents per contestant and seed)`}: ${count(gridEpisodes + loadEpisodes, "episode")} in ${run.seconds.toFixed(0)} s on ${count(run.workers, "process", "processes")}${run.cpuSeconds === undefined ? "" : ` (${run.cpuSeconds.toFixed(0)} s of their CPU time)`}. ${errorsLine(input)} The same seed gives the same numbers: every fault, every model choice and every jitter is drawn from generators seeded per (seed, cell, task, trial), and time is virtual.`,
    "",
  );
  if (run.profile !== undefined) {
    lines.push(
      `**The simulated model's numbers were changed for this run** (\`--profile=${run.profile}\`); the table under "The simulated model" shows the values used.`,
      "",
    );
  }
  if (run.model !== undefined) {
    lines.push(
      `**Model: ${run.model}** (a real model, \`--model\`, on real time: the "virtual s" columns are wall-clock seconds). Episodes this few are a smoke reading, not a measurement; the simulated model's report is AGENTS.md.`,
      "",
    );
  }
  lines.push(...leadScreen(input));
  const sweep = sweepOfThesePeers(input);
  lines.push(...checksSection(doneWhen(input, run, sweep)));

  lines.push(
    `**The contestants.** The peers, each in one fixed setup a careful user would choose and used in every cell and load section alike (the best peer is the best of them): ${peersOf(
      input.contestants,
    )
      .map((peer) => `*${peer.name}*`)
      .join(", ")}. The judged row: *${OURS}*, the core's defaults with no options.${
      input.contestants.some((contestant) => contestant.role === "information")
        ? " Information rows (the peers as they come) are shown, never judged against."
        : ""
    }${partial.length > 0 ? " Candidates (retry-reflect with options) run in their own cells only." : ""} Each is described under "Contestants" below.`,
    "",
  );
  if (demos.length > 0) {
    lines.push(
      `**Comparisons and feature demos.** ${count(comparable.length, "cell")} compare the contestants (${comparable.map((cell) => cell.name).join(", ")}); ${demos
        .map((cell) => `*${cell.name}* is a feature demo: ${cell.featureDemo}`)
        .join("; ")}. The overall means leave ${demos.length === 1 ? "it" : "them"} out.`,
      "",
    );
  }

  const overallBySeed = (cells: readonly Cell[]) => (seedRun: ReportInput["runs"][number]) =>
    overall(input.contestants, seedRun.summaries, cells);
  const firstOverall = input.runs[0] === undefined ? [] : overallBySeed(comparable)(input.runs[0]);
  lines.push(
    `## Overall (the ${count(comparable.length, "cell")} that compare, each weighs the same)`,
    "",
    table(
      ["contestant", "seed", ...summaryHeader(firstOverall, false)],
      rowsBySeed(input, overallBySeed(comparable), false, passKeys(firstOverall)),
    ),
    "",
    "![task success vs model calls per task, per contestant](agents.svg)",
    "",
  );

  lines.push("## Where retry-reflect wins, ties or loses", "");
  lines.push(
    "retry-reflect with its defaults against the best peer of each cell (highest task success, then fewest model calls), over the same tasks, on each seed: a gap within twice its standard error is a tie (the tasks are the independent units, since the trials of one task share its facts); a loss to another peer is named too.",
    "",
  );
  const verdicts = cellVerdicts(input, grid);
  for (const cell of grid) {
    const entries = verdicts.filter((entry) => entry.cell === cell);
    if (entries.length > 0) lines.push(verdictLine(cell, entries));
  }
  lines.push("");

  if (outages.length > 0) {
    const outageVerdicts = cellVerdicts(input, outages);
    lines.push(
      "## The outage sweep: how long a tool may be down",
      "",
      `get_weather is down (503 on every execution) for the first ${outages.map((cell) => cell.outageSeconds).join(", ")} s of each task, then fine: the ${outages.find((cell) => grid.includes(cell))?.outageSeconds ?? "–"} s outage is the grid's *outage* cell (the same episodes), the others are cells of their own (\`outage@<n>s\`, not in the ${comparable.length}-cell mean). Solid: seed ${run.seeds[0]}${run.seeds.length > 1 ? `; dashed: seed ${run.seeds.slice(1).join(", ")}` : ""}.`,
      "",
      "![task success against the outage's duration, per contestant](agents.outage.svg)",
      "",
      ...outageTables(input),
      "retry-reflect against the best peer at each duration (highest task success, then fewest model calls), paired over the same tasks:",
      "",
      table(
        ["seed", ...outages.map((cell) => `${cell.outageSeconds} s`)],
        input.runs.map((seedRun) => [
          String(seedRun.seed),
          ...outages.map((cell) => {
            const entry = outageVerdicts.find((verdict) => verdict.seed === seedRun.seed && verdict.cell === cell);
            if (entry === undefined) return "–";
            const { verdict, gap, margin } = entry.againstBest;
            return `${verdict} ${signed(gap * 100)} ± ${(margin * 100).toFixed(1)} (${entry.best.contestant})`;
          }),
        ]),
      ),
      "",
    );
  }

  lines.push(...giveUpSection(input));
  lines.push(...DEFAULTS_SECTION);
  lines.push(...candidateSection(input));
  for (const spec of LOADS) {
    lines.push(
      ...loadSection(
        spec,
        input.runs.flatMap((seedRun) => seedRun.loads.filter((load) => load.spec.name === spec.name)),
      ),
    );
  }
  if (input.sweep !== undefined) lines.push(...sweepSection(input.sweep, sweep !== undefined));

  lines.push("## Per cell", "");
  const perCell = [...grid, ...extraOutages];
  for (const cell of perCell) {
    const summaries = input.runs.flatMap((seedRun) => seedRun.summaries.filter((summary) => summary.cell === cell.name));
    if (summaries.length === 0) continue;
    lines.push(`### ${cell.name}: ${cell.description}`, "");
    if (cell.unsolvable)
      lines.push(
        "No contestant can get the answer here: task success is an honest give-up (the agent tells the user it could not, sends nothing, does not crash).",
        "",
        ...crashNote(summaries),
      );
    lines.push(
      table(
        ["contestant", "seed", ...summaryHeader(summaries)],
        rowsBySeed(input, (seedRun) => seedRun.summaries.filter((summary) => summary.cell === cell.name), true, passKeys(summaries)),
      ),
      "",
    );
  }

  lines.push("## How it works", "");
  lines.push(
    '- **Tasks** (bench/src/agents/world.ts), in turn: *lookup* ("What is the temperature in Lima?": `get_weather`), *two-step* ("…where order A-1003 ships to?": `get_order`, then `get_weather`), *write* ("Email user7@example.com the temperature in Oslo.": `get_weather`, then `send_email`, which must happen exactly once). A task succeeds when the final answer has the true temperature and, for a write, exactly one email with it went out.',
    `- **Services**: each call takes virtual time (${Object.entries(TOOL_LATENCY_MS)
      .map(([name, ms]) => `${name} ${ms} ms`)
      .join(
        ", ",
      )}). The email service honours an Idempotency-Key, as payment and email APIs commonly do: a tool that forwards one (retry-reflect passes \`context.idempotencyKey\`; a model may pass \`idempotency_key\`) cannot send twice. The schema of \`get_weather\` is an enum of cities, so a malformed city is refused by LangChain's validation before the tool runs.`,
    "- **Faults** (bench/src/agents/cells.ts) are injected with `injectFaults` from `@retry-reflect/core/testing`, the same kit users get; implicit faults (a plausible wrong temperature) are the service's.",
    `- **Episodes** run through a real \`createAgent\` (LangChain ${"v1"}) on virtual time: a sleep fires only when everything in flight waits on the clock, \`toolRetryMiddleware\`'s timers and jitter are routed to the episode's clock and seeded generator. The user waits ${DEADLINE_MS / 1000} s of virtual time (then the run is aborted: *deadline*); LangGraph's recursion limit is ${RECURSION_LIMIT} (*step-limit*). A run that throws is *crashed*.`,
    "- **pass^k** is the chance that k independent trials of the same task all succeed (the estimator C(c, k) / C(n, k) over each task's n trials with c successes, averaged over tasks): what a user who runs the same task every day sees.",
    "- **Time to give up** is the virtual time from a task's start to the agent's answer that it could not (the episodes that ended *gave-up*), mean and p95 over those episodes.",
    "",
  );
  lines.push("### The simulated model (bench/src/agents/model-profile.ts, simulated-model.ts)", "");
  lines.push(
    `It plans the task's steps and calls one tool per turn; each model call takes ${profile.modelLatencyMs} ms of virtual time; it answers with what it has after ${profile.maxModelCalls} model calls, and gives up on a tool after ${profile.patiencePerTool} consecutive failures. Its first call of a tool has a slip in its arguments with probability ${profile.slipRate}; it doubts a good-looking result and checks it once more with probability ${profile.doubtRate}. It reads a failed tool's text like a model reads text, by its words (\`perceive\`), and reacts:`,
    "",
    table(
      ["the text says", "the model", "probability"],
      [
        [
          'an instruction not to call again ("do not … again", in the same sentence)',
          "gives up and tells the user, else goes by the error words below",
          String(profile.reactions.stop.giveUp),
        ],
        [
          "an optional argument of the tool's schema that the call left out (send_email's `idempotency_key`)",
          "adds it (and keeps the key on re-sends), else sends as before",
          `${profile.reactions.idempotencyKey.addWhenAsked} (keeps: ${profile.reactions.idempotencyKey.keepOnResend})`,
        ],
        ["(nothing: the write tool's description offers a key)", "passes one on its first send, unasked", String(profile.proactiveKeyRate)],
        ['the valid values ("expected one of …", "valid values")', "corrects the argument", String(profile.reactions.hint.fix)],
        [
          'an argument error without them ("invalid", "did not match", "schema", "validation", 400)',
          "picks the right value from the schema it was given, else sends the call as it was",
          String(profile.reactions.argumentsWithoutHint.fix),
        ],
        [
          "transient (502–504, unavailable, timed out, 429, rate limit, reset, overloaded, in progress)",
          "calls again, else gives up",
          String(profile.reactions.transient.retry),
        ],
        ["a write failed", "sends it again, else gives up", String(profile.reactions.writeFailed.resend)],
        ["permanent (401, 403, forbidden, unauthorised)", "gives up, else calls again", String(profile.reactions.permanent.giveUp)],
        [
          'nothing it can use ("failed after 3 attempts with ToolInvocationError")',
          "calls again (first reconsidering its arguments, some of the time), else gives up",
          `${profile.reactions.opaque.retry} (reconsiders: ${profile.reactions.opaque.reconsiderArguments})`,
        ],
      ],
    ),
    "",
    "A real model differs: these numbers are a written-down guess, not a measurement of one. They are in one file so that a reader can change them and rerun. FINDINGS.md has a first reading of how far the verdicts depend on them (the grid under four other models); the mechanism given with each verdict above says which reaction it turns on (the lost write and the hang turn on none of them: a duplicate or a deadline happens whatever the model does).",
    "",
  );
  lines.push("### Contestants", "");
  for (const contestant of input.contestants) lines.push(`- **${contestant.name}**${roleNote(contestant)}: ${contestant.description}.`);
  lines.push("");
  lines.push("### Cells", "");
  for (const cell of [...CELLS, ...extraOutages].filter((cell) => input.cells.includes(cell)))
    lines.push(`- **${cell.name}**: ${cell.description}${cell.kinds ? ` (${cell.kinds.join(", ")} tasks only)` : ""}.`);
  lines.push("");
  lines.push(
    "Rerun: `npm run bench:agents` (all of it, seeds 1 and 2; `-- --seed=2` for one seed, `--cells=hang,outage@6s`, `--contestants=retry-reflect`, `--candidates=<family>` for retry-reflect with options (candidates.ts), `--tasks=20 --trials=4 --agents=200` for a quick look, `--out=none` to print instead of writing, `--report-from=agents.json` to write the report again without running). Raw numbers: agents.json.",
    "",
  );
  return `${lines.join("\n")}\n`;
}

/**
 * Task success (y) against model calls per task (x), the means over the seeds: one big dot per
 * contestant over the comparable cells, small dots per cell.
 */
export function renderSvg(input: Bench): string {
  const width = 1_120;
  const height = 480;
  const left = 70;
  const right = 510;
  const top = 40;
  const bottom = 60;
  const cells = comparableCells(input.cells);
  const names = new Set(cells.map((cell) => cell.name));
  const summaries = meanOverSeeds(input.runs.flatMap((seedRun) => seedRun.summaries)).filter((summary) => names.has(summary.cell));
  const all = overall(input.contestants, summaries, cells);
  const maxCalls = Math.ceil(Math.max(4, ...summaries.map((summary) => summary.modelCalls)) + 0.5);
  const x = (calls: number) => left + ((width - left - right) * calls) / maxCalls;
  const y = (success: number) => height - bottom - (height - top - bottom) * success;
  const parts: string[] = [];
  parts.push(
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="sans-serif" font-size="12" role="img">`,
  );
  const summary = all.map((entry) => `${entry.contestant} ${percent(entry.success)} in ${fixed(entry.modelCalls)} calls`).join("; ");
  parts.push(`<title>Task success vs model calls per task, the cells that compare, mean over the seeds: ${summary}</title>`);
  parts.push(`<rect width="${width}" height="${height}" fill="white"/>`);
  parts.push(`<text x="${left}" y="22" font-size="15" font-weight="bold">Task success vs model calls per task</text>`);
  for (let tick = 0; tick <= 10; tick += 2) {
    const value = tick / 10;
    parts.push(`<line x1="${left}" x2="${width - right}" y1="${y(value)}" y2="${y(value)}" stroke="#e5e7eb"/>`);
    parts.push(`<text x="${left - 8}" y="${y(value) + 4}" text-anchor="end">${tick * 10} %</text>`);
  }
  for (let calls = 0; calls <= maxCalls; calls++) {
    parts.push(`<line x1="${x(calls)}" x2="${x(calls)}" y1="${height - bottom}" y2="${height - bottom + 5}" stroke="#111"/>`);
    parts.push(`<text x="${x(calls)}" y="${height - bottom + 18}" text-anchor="middle">${calls}</text>`);
  }
  parts.push(`<line x1="${left}" x2="${width - right}" y1="${height - bottom}" y2="${height - bottom}" stroke="#111"/>`);
  parts.push(`<text x="${(left + width - right) / 2}" y="${height - 18}" text-anchor="middle">model calls per task (mean)</text>`);
  parts.push(
    `<text x="18" y="${(top + height - bottom) / 2}" transform="rotate(-90 18 ${(top + height - bottom) / 2})" text-anchor="middle">task success</text>`,
  );
  const plotted = input.contestants.filter((contestant) => all.some((entry) => entry.contestant === contestant.name));
  plotted.forEach((contestant, index) => {
    const colour = COLOURS[index % COLOURS.length];
    for (const summary of summaries.filter((entry) => entry.contestant === contestant.name)) {
      parts.push(
        `<circle cx="${x(summary.modelCalls).toFixed(1)}" cy="${y(summary.success).toFixed(1)}" r="3" fill="${colour}" fill-opacity="0.45"><title>${contestant.name}, ${summary.cell}: ${percent(summary.success)}, ${fixed(summary.modelCalls)} calls</title></circle>`,
      );
    }
    const mine = all.find((entry) => entry.contestant === contestant.name);
    if (mine !== undefined) {
      parts.push(
        `<circle cx="${x(mine.modelCalls).toFixed(1)}" cy="${y(mine.success).toFixed(1)}" r="8" fill="${colour}" stroke="#111"><title>${contestant.name}, the cells that compare: ${percent(mine.success)}, ${fixed(mine.modelCalls)} calls</title></circle>`,
      );
    }
    const legendY = top + 20 + index * 22;
    parts.push(`<circle cx="${width - right + 24}" cy="${legendY - 4}" r="6" fill="${colour}" stroke="#111"/>`);
    parts.push(`<text x="${width - right + 36}" y="${legendY}">${contestant.name}${mine ? ` (${percent(mine.success)})` : ""}</text>`);
  });
  parts.push(
    `<text x="${width - right + 18}" y="${top + 20 + plotted.length * 22 + 10}" fill="#555">big dot: the ${cells.length} cells that compare; small: one cell (means over the seeds)</text>`,
  );
  parts.push("</svg>");
  return `${parts.join("\n")}\n`;
}

/**
 * Issue 51: every default of the decision, and the cells that chose it. The candidates' rows below
 * (`--candidates=attempt-timeout,open-time,fleet`) measure the alternatives named here.
 */
const DEFAULTS_SECTION: readonly string[] = [
  "## The defaults, and why",
  "",
  "Each default of the core's decision was chosen with this grid (issue 51); the rows that measure an alternative are candidates (below, and in the load sections).",
  "",
  "| option | default | why |",
  "| --- | --- | --- |",
  "| `patienceMs` | 15 s | a transient failure is retried in place while the next attempt starts within 15 s of the call's start: outages up to about 12 s end inside one call, with no model round trip (outage, explicit-transient, lost-connection) |",
  "| `maxBackoffMs` | 4 s | the patience's attempts stay about 4 s apart at most, so a tool that comes back is found within 4 s (the outage sweep) |",
  "| `maxRetries` | 3 | the model's corrections, and the floor of in-place retries whatever the patience |",
  "| `giveUpMs` | 20 s | the definitive stop, once the tool has failed for 20 s in the run, more than `maxRetries` times, and succeeded nowhere meanwhile: a dead tool is given up within the best peer's p95 + 5 s (down-for-good), an outage of 20 s or more still finishes when the model calls again (the outage sweep), and an overloaded tool that answers other agents is never called dead (the load sections) |",
  "| `attemptTimeoutMs` | 10 s, 30 s, then 60 s | a hang costs 10 s before its in-place retry (hang), a tool that answers after 20–50 s gets its time on a retry (slow-but-fine); the former 30 s then 60 s lost the hang cell by about 2.5 points (candidate `attemptTimeoutMs: [30_000, 60_000]`) |",
  "| `waitForRecovery` | on | a call that meets an open circuit due within its patience waits for the probe instead of failing (outage, the load sections) |",
  "| `circuitBreakerThreshold` | 10 | above the attempts one patient call makes, so one call's outage does not open the circuit for everyone |",
  "| `circuitBreakerResetMs` | 1 s | an open circuit is a pause in which calls wait for one probe: 60 s turned them away and the model spent its tries on refusals (candidate `circuitBreakerResetMs: 60_000` in the load sections) |",
  "| `retryBudget` | 5 % of the calls + 1/s, per 10 s | the load amplification of a fleet stays under 1.1× (the load sections; 10 % measured about 1.11×) |",
  "",
];
