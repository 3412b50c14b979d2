// bench/AGENTS.md and bench/agents.svg from the summaries of one run.
import { CELLS, type Cell, SLOW_BUT_FINE } from "./cells.js";
import { type Contestant, EXHAUSTION_CANDIDATES, NO_TIMEOUT_ROW, TIMEOUT_CANDIDATES } from "./contestants.js";
import { COLOURS, curvesTables } from "./curves.js";
import { DEADLINE_MS, RECURSION_LIMIT } from "./episode.js";
import { COLLAPSE, failureProbability, LOAD, LOADED_TOOL, type LoadRun, type LoadSummary } from "./load.js";
import { MODEL_PROFILE } from "./model-profile.js";
import { type GridOptions, OUTCOMES, PASS_K, runsIn, type Summary } from "./run-grid.js";
import { type Sweep, sweepSummary, sweepTable } from "./sweep.js";
import { WHY } from "./why.js";
import { TOOL_LATENCY_MS } from "./world.js";

export interface RunInfo {
  readonly seed: number;
  readonly tasks: number;
  readonly trials: number;
  readonly workers: number;
  readonly seconds: number;
  readonly node: string;
  readonly date: string;
  /** A real model's label (`--model`); the simulated model when absent. */
  readonly model?: string;
  /** `--profile` overrides of the simulated model's numbers, as given. */
  readonly profile?: string;
}

const OURS = "retry-reflect";
/** "1 cell", "11 cells", "55,000 episodes". */
const count = (value: number, one: string, many = `${one}s`) => `${value.toLocaleString("en-US")} ${value === 1 ? one : many}`;
const percent = (value: number) => `${(value * 100).toFixed(1)} %`;
const fixed = (value: number, digits = 2) => value.toFixed(digits);

/**
 * The paired difference in task success between two contestants of one cell, over the same tasks
 * (each task's share of successful trials), and twice its standard error: a gap within that is a
 * tie. Trials of one task share its facts, so the tasks, not the episodes, are the independent units.
 */
export function pairedGap(a: Summary, b: Summary): { gap: number; margin: number } {
  const count = Math.min(a.perTask.length, b.perTask.length);
  if (count === 0) return { gap: a.success - b.success, margin: 0 };
  const differences = Array.from({ length: count }, (_, index) => (a.perTask[index] ?? 0) - (b.perTask[index] ?? 0));
  const gap = differences.reduce((sum, value) => sum + value, 0) / count;
  const variance = count > 1 ? differences.reduce((sum, value) => sum + (value - gap) ** 2, 0) / (count - 1) : 0;
  return { gap, margin: 2 * Math.sqrt(variance / count) };
}

function table(header: readonly string[], rows: readonly (readonly string[])[]): string {
  return [`| ${header.join(" | ")} |`, `| ${header.map(() => "---").join(" | ")} |`, ...rows.map((row) => `| ${row.join(" | ")} |`)].join(
    "\n",
  );
}

/** The contestants that ran in every cell of the run (the overall table and the plot are theirs). */
export function everywhere(options: GridOptions): Contestant[] {
  return options.contestants.filter((contestant) => options.cells.every((cell) => runsIn(contestant, cell)));
}

/** Means over the cells (each cell weighs the same; `cells`: only these), for the contestants that ran in every cell. */
export function overall(options: GridOptions, summaries: readonly Summary[], cells: readonly Cell[] = options.cells): Summary[] {
  const names = new Set(cells.map((cell) => cell.name));
  return everywhere(options).map((contestant) => {
    const mine = summaries.filter((summary) => summary.contestant === contestant.name && names.has(summary.cell));
    const mean = (pick: (summary: Summary) => number) => mine.reduce((sum, summary) => sum + pick(summary), 0) / Math.max(1, mine.length);
    const passK = Object.fromEntries(Object.keys(mine[0]?.passK ?? {}).map((key) => [key, mean((summary) => summary.passK[key] ?? 0)]));
    const outcomes = Object.fromEntries(
      OUTCOMES.map((outcome) => [outcome, mine.reduce((sum, summary) => sum + summary.outcomes[outcome], 0)]),
    ) as Summary["outcomes"];
    const duplicates = mine.reduce((sum, summary) => sum + summary.duplicates, 0);
    const episodes = mine.reduce((sum, summary) => sum + summary.episodes, 0);
    return {
      cell: "all cells",
      contestant: contestant.name,
      episodes,
      tasks: mine.reduce((sum, summary) => sum + summary.tasks, 0),
      success: mean((summary) => summary.success),
      passK,
      modelCalls: mean((summary) => summary.modelCalls),
      toolExecutions: mean((summary) => summary.toolExecutions),
      duplicates,
      duplicatesPer1000: (duplicates * 1000) / Math.max(1, episodes),
      virtualSeconds: mean((summary) => summary.virtualSeconds),
      virtualSecondsP95: Math.max(...mine.map((summary) => summary.virtualSecondsP95)),
      outcomes,
      perTask: [],
    };
  });
}

/** "answered 925, gave-up 75": the outcomes that happened, with their counts. */
const outcomesOf = (summary: Summary) =>
  OUTCOMES.filter((outcome) => summary.outcomes[outcome] > 0)
    .map((outcome) => `${outcome} ${summary.outcomes[outcome]}`)
    .join(", ");

function rows(summaries: readonly Summary[]): string[][] {
  return summaries.map((summary) => [
    summary.contestant,
    percent(summary.success),
    ...PASS_K.map((k) => (summary.passK[`pass^${k}`] === undefined ? "–" : percent(summary.passK[`pass^${k}`] ?? 0))),
    fixed(summary.modelCalls),
    fixed(summary.toolExecutions),
    `${summary.duplicates} (${fixed(summary.duplicatesPer1000, 1)})`,
    `${fixed(summary.virtualSeconds, 1)} / ${fixed(summary.virtualSecondsP95, 1)}`,
    outcomesOf(summary),
  ]);
}

const HEADER = [
  "contestant",
  "task success",
  ...PASS_K.map((k) => `pass^${k}`),
  "model calls / task",
  "tool executions / task",
  "duplicate side effects (per 1,000)",
  "virtual s: mean / p95",
  "outcomes",
];

/** retry-reflect (defaults) against the best other contestant of the cell (ours with timeouts aside). */
export function verdicts(
  options: GridOptions,
  summaries: readonly Summary[],
): Array<{ cell: Cell; verdict: "wins" | "ties" | "loses"; text: string }> {
  const result = [];
  for (const cell of options.cells) {
    const ours = summaries.find((summary) => summary.cell === cell.name && summary.contestant === OURS);
    const others = summaries.filter((summary) => summary.cell === cell.name && !summary.contestant.startsWith(OURS));
    if (ours === undefined || others.length === 0) continue;
    const best = others.reduce((a, b) => (b.success > a.success || (b.success === a.success && b.modelCalls < a.modelCalls) ? b : a));
    const { gap, margin } = pairedGap(ours, best);
    // A gap of a fraction of a point is a tie even when every task agrees (a margin of 0).
    const verdict = gap > Math.max(margin, 0.005) ? "wins" : gap < -Math.max(margin, 0.005) ? "loses" : "ties";
    const text = `${percent(ours.success)} vs ${percent(best.success)} (${best.contestant}), a paired gap of ${(gap * 100).toFixed(1)} ± ${(margin * 100).toFixed(1)} points; model calls ${fixed(ours.modelCalls)} vs ${fixed(best.modelCalls)}; duplicates ${ours.duplicates} vs ${best.duplicates}`;
    result.push({ cell, verdict, text } as const);
  }
  return result;
}

/** "attemptTimeoutMs: 30_000" for a candidate's row, "none (the defaults)" for the defaults' row. */
const candidateLabel = (name: string) =>
  name === OURS ? "none (the defaults)" : `${name.replace(`${OURS} (`, "").replace(/\)$/, "")}${name === NO_TIMEOUT_ROW ? " (none)" : ""}`;

/** The profile sweep's table and the curves (from agents.sweep.json). */
function sweepSection(file: SweepFile): string[] {
  const { sweep, curves } = file;
  return [
    "## How far the lead depends on the simulated model: the profile sweep",
    "",
    `Every number of the simulated model's profile (below), moved down and up one at a time (a probability by 0.25 within [0, 1], and to 1 for a rate at 0; a count or a time by half), and the grid run again at each point, smaller: ${sweep.tasks} tasks × ${sweep.trials} trials per cell and contestant, seed ${sweep.seed}, the peers and retry-reflect with its defaults (${sweep.results.length} points, ${sweep.seconds.toFixed(0)} s; \`npm run bench:agents:sweep\`). The tasks and seeds are the same at every point, so the points differ by the number changed, not by the draw; at this size one cell's success has a standard error of several points, the mean over a dozen cells of about 1–2. The lead is retry-reflect's task success minus the best peer's, over the cells that compare, then with the feature demo.`,
    "",
    sweepSummary(sweep).line,
    "",
    ...sweepTable(sweep),
    "",
    "## Curves: task success and pass^4 against fault intensity",
    "",
    `get_weather fails with a 503, or answers 429 with a Retry-After, with probability p per execution, p from 0 to 0.9 (${curves.tasks} tasks × ${curves.trials} trials per point, seed ${curves.seed}, ${curves.seconds.toFixed(0)} s). Solid: task success; dashed: pass^4.`,
    "",
    "![task success and pass^4 against the probability of a fault per execution](agents.curves.svg)",
    "",
    ...curvesTables(curves.contestants, curves.summaries),
  ];
}

/** A study of candidate settings against one base row, in the cells where they run. */
interface CandidateStudy {
  readonly heading: string;
  readonly intro: string;
  /** The row the gaps are paired against, and the candidates (the base first). */
  readonly base: string;
  readonly names: readonly string[];
  readonly cells: readonly Cell[];
  readonly column: string;
  readonly label: (name: string) => string;
  /** Pair the candidates (other than the base) with each other too. */
  readonly pairEachOther: boolean;
  readonly outro: string;
}

/** Each candidate in each cell with its paired gap in task success and its extra tool executions against the base row; then the cells' means. Empty without the candidates. */
function candidateSection(study: CandidateStudy, summaries: readonly Summary[]): string[] {
  const { base, cells, label } = study;
  const find = (cell: string, name: string) => summaries.find((summary) => summary.cell === cell && summary.contestant === name);
  const present = study.names.filter((name) => cells.every((cell) => find(cell.name, name) !== undefined));
  if (cells.length === 0 || present.length < 2 || !present.includes(base)) return [];
  const k = PASS_K.at(-1);
  const passK = (summary: Summary) => summary.passK[`pass^${k}`] ?? summary.success;
  const signed = (value: number, digits = 1) => `${value >= 0 ? "+" : ""}${value.toFixed(digits)}`;
  const rowsOf: string[][] = [];
  for (const cell of cells) {
    const reference = find(cell.name, base) as Summary;
    for (const name of present) {
      const summary = find(cell.name, name) as Summary;
      const { gap, margin } = pairedGap(summary, reference);
      rowsOf.push([
        cell.name,
        label(name),
        percent(summary.success),
        name === base ? "–" : `${signed(gap * 100)} ± ${(margin * 100).toFixed(1)}`,
        percent(passK(summary)),
        `${fixed(summary.toolExecutions)} (${signed(summary.toolExecutions - reference.toolExecutions, 2)})`,
        fixed(summary.modelCalls),
        `${fixed(summary.virtualSeconds, 1)} / ${fixed(summary.virtualSecondsP95, 1)}`,
        outcomesOf(summary),
      ]);
    }
  }
  const mean = (name: string, pick: (summary: Summary) => number) =>
    cells.reduce((sum, cell) => sum + pick(find(cell.name, name) as Summary), 0) / cells.length;
  const tools = (name: string) => mean(name, (summary) => summary.toolExecutions);
  const together = present.map((name) => [
    label(name),
    percent(mean(name, (summary) => summary.success)),
    percent(mean(name, passK)),
    `${fixed(tools(name))} (${signed(tools(name) - tools(base), 2)})`,
    fixed(mean(name, (summary) => summary.modelCalls)),
    fixed(
      mean(name, (summary) => summary.virtualSeconds),
      1,
    ),
  ]);
  const others = present.filter((name) => name !== base);
  const pairs = study.pairEachOther
    ? others.flatMap((a, index) =>
        others.slice(index + 1).map((b) => {
          const gaps = cells.map((cell) => {
            const { gap, margin } = pairedGap(find(cell.name, a) as Summary, find(cell.name, b) as Summary);
            return `${cell.name} ${signed(gap * 100)} ± ${(margin * 100).toFixed(1)} points`;
          });
          return `${label(a)} against ${label(b)}, paired over the same tasks: ${gaps.join(", ")}.`;
        }),
      )
    : [];
  return [
    study.heading,
    "",
    study.intro,
    "",
    table(
      [
        "cell",
        study.column,
        "task success",
        `gap vs ${label(base)} (points)`,
        `pass^${k}`,
        "tool executions / task (extra)",
        "model calls / task",
        "virtual s: mean / p95",
        "outcomes",
      ],
      rowsOf,
    ),
    "",
    `${cells.map((cell) => cell.name).join(", ")} together (each cell weighs the same):`,
    "",
    table([study.column, "task success", `pass^${k}`, "tool executions / task (extra)", "model calls / task", "virtual s: mean"], together),
    "",
    ...pairs,
    ...(pairs.length > 0 ? [""] : []),
    study.outro,
    "",
  ];
}

/** Crashes scored apart: what a contestant that crashed would score if its crash counted as an honest stop (a host that shows the error to the user). */
function crashNote(rows: readonly Summary[]): string[] {
  const crashed = rows.filter((summary) => summary.outcomes.crashed > 0);
  if (crashed.length === 0) return [];
  const parts = crashed.map(
    (summary) =>
      `${summary.contestant} ${percent(summary.success)} → ${percent(summary.success + summary.outcomes.crashed / summary.episodes)} (${summary.outcomes.crashed} crashes)`,
  );
  return [
    `Crashes are scored apart from give-ups: a crash is not an honest give-up (the run ends with an error, not an answer to the user). Counted as an honest stop instead (a host that shows the error), the task success would be: ${parts.join("; ")}.`,
    "",
  ];
}

/** The choice of `attemptTimeoutMs`'s default (DESIGN Part 3): no time limit, then TIMEOUT_CANDIDATES, in each cell where it matters. */
export function timeoutSection(options: GridOptions, summaries: readonly Summary[]): string[] {
  return candidateSection(
    {
      heading: "## The default attempt timeout: none, 30 s or 60 s",
      intro: `DESIGN Part 3 gives \`attemptTimeoutMs\` a default, 30_000 or 60_000 ms, chosen here. Each candidate is retry-reflect with the core's defaults and only that option, in the cells where an attempt can last that long (elsewhere no tool takes more than ${Math.max(...Object.values(TOOL_LATENCY_MS)) / 1000} s, so neither limit ever fires): *hang* (a third of get_weather's executions never answer: a limit cuts them off, to be retried in place) and *slow-but-fine* (get_weather answers right after ${SLOW_BUT_FINE.fromMs / 1000}–${SLOW_BUT_FINE.toMs / 1000} s, spread evenly over ${SLOW_BUT_FINE.steps} steps: a limit below that cuts off a call that would have answered). The gap is paired over the same tasks against no time limit (± twice its standard error); the extra tool executions are against no time limit too.`,
      base: NO_TIMEOUT_ROW,
      names: [NO_TIMEOUT_ROW, ...TIMEOUT_CANDIDATES.map((candidate) => candidate.name).filter((name) => name !== NO_TIMEOUT_ROW)],
      cells: options.cells.filter((cell) => TIMEOUT_CANDIDATES.some((candidate) => runsIn(candidate, cell))),
      column: "attempt timeout",
      label: candidateLabel,
      pairEachOther: true,
      outro:
        "How the limit acts: an attempt cut off fails with `TIMEOUT` (transient) and is retried in place, with the core's backoff, up to its retry budget; then the model is told to stop. In *hang* a shorter limit loses less time per hung attempt, and a longer one lets a call whose attempts hang several times in a row run into the user's deadline. In *slow-but-fine* a limit within the tool's range cuts off every execution slower than the limit: each retry draws a new duration, so a call succeeds only if one of its attempts is fast enough, and the time of every attempt cut off is lost; a limit above the range never fires.",
    },
    summaries,
  );
}

/** What follows a transient exhaustion: the defaults against EXHAUSTION_CANDIDATES, where it decides the task. */
export function exhaustionSection(options: GridOptions, summaries: readonly Summary[]): string[] {
  return candidateSection(
    {
      heading: "## After a transient exhaustion: stop, come back, or a longer budget",
      intro:
        "When the in-place retries of a transient failure (a 503) are spent, retry-reflect tells the model not to call the tool again for this task, refuses the tool in that scope for `exhaustedResetMs` (60 s) and, from the fifth failure in a row, opens its circuit for `circuitBreakerResetMs` (60 s). Is that right when the service comes back? Each candidate is retry-reflect with the core's defaults and the options named, in the cells where this decides the task: *explicit-transient* (a 503 on half of the executions), *outage* (down for 12 s, then fine) and *down-for-good* (never comes back: the only success is an honest give-up). The gap is paired over the same tasks against the defaults (± twice its standard error).",
      base: OURS,
      names: [OURS, ...EXHAUSTION_CANDIDATES.map((candidate) => candidate.name)],
      cells: options.cells.filter((cell) => EXHAUSTION_CANDIDATES.some((candidate) => runsIn(candidate, cell))),
      column: "retry-reflect with",
      label: (name) => (name === OURS ? "the defaults" : name.replace(`${OURS} (`, "").replace(/\)$/, "")),
      pairEachOther: false,
      outro:
        "How each acts: with a longer budget in place (6 retries, backoffs 0.5, 1, 2, 4, 8 and 16 s, and a circuit that opens at 8) the retries outlast a 12 s outage, so the model never sees it; the price is paid where the service never comes back: the honest give-up comes several times later, with more executions of the dead tool per task (the down-for-good rows). A short refusal and circuit reset alone change nothing: the stop text makes the model give up at once, so it never calls again. Without the stop instruction (the may-work-again text, put in by a middleware around retry-reflect's to measure it), the model calls again and some calls land after the outage, at the price of twice the model calls where the service never comes back. A per-tool `maxRetries` lets each user choose for the tools whose outages are short; the defaults stay (see FINDINGS.md).",
    },
    summaries,
  );
}

/** get_weather's logical calls per task when nothing fails (a first call, the model's rechecks of a doubted result, its slips): measured on the fleet. */
const CALLS_PER_TASK = 1.15;

/** Issue 26's goal for a row with a retry budget: amplification at most this, and task success within this of the best other row. */
export const LOAD_GOAL = { amplification: 1.1, points: 2 } as const;

/** The best row of the load section other than `except` (highest task success; fewer service executions per task on a tie). */
function bestLoadRow(rows: readonly LoadSummary[], except?: LoadSummary): LoadSummary | undefined {
  return rows
    .filter((row) => row !== except)
    .reduce<LoadSummary | undefined>(
      (best, row) =>
        best === undefined ||
        row.summary.success > best.summary.success ||
        (row.summary.success === best.summary.success && row.executionsPerTask < best.executionsPerTask)
          ? row
          : best,
      undefined,
    );
}

/** Whether a row of the load section meets issue 26's goal, in words and as a flag: its amplification, and its task success against the best other row. */
export function loadGoal(rows: readonly LoadSummary[], row: LoadSummary): { met: boolean; text: string } {
  const best = bestLoadRow(rows, row);
  const amplificationMet = row.amplification <= LOAD_GOAL.amplification;
  const points = best === undefined ? 0 : (row.summary.success - best.summary.success) * 100;
  const successMet = points >= -LOAD_GOAL.points;
  const paired = best === undefined ? undefined : pairedGap(row.summary, best.summary);
  const verdict = (ok: boolean) => (ok ? "met" : "missed");
  const against =
    best === undefined
      ? "no other row"
      : `${percent(best.summary.success)} (${best.summary.contestant}): ${points >= 0 ? "+" : ""}${points.toFixed(1)} points, paired over the same agents ${(paired?.gap ?? 0) >= 0 ? "+" : ""}${((paired?.gap ?? 0) * 100).toFixed(1)} ± ${((paired?.margin ?? 0) * 100).toFixed(1)}`;
  return {
    met: amplificationMet && successMet,
    text: `**${row.summary.contestant}**: amplification ${fixed(row.amplification, 3)}× (≤ ${LOAD_GOAL.amplification}×: ${verdict(amplificationMet)}); task success ${percent(row.summary.success)} against the best other row's ${against} (within ${LOAD_GOAL.points}: ${verdict(successMet)}). **${amplificationMet && successMet ? "Met" : "Missed"}.**`,
  };
}

/** The load section (issue 26): each contestant's fleet against one service that fails more the more it is called. */
export function loadSection(load: LoadRun): string[] {
  const { spec, summaries: rows } = load;
  if (rows.length === 0) return [];
  const best = bestLoadRow(rows);
  const budgeted = rows.filter((row) => row.summary.contestant.includes("retryBudget"));
  const goals = budgeted.map((row) => ({ row, ...loadGoal(rows, row) }));
  const met = goals.filter((goal) => goal.met).map((goal) => goal.row.summary.contestant);
  const at = (p: number) => fixed(p * spec.capacityPerSecond, 1);
  const fleets = Math.max(...rows.map((row) => row.fleets));
  const offered = (CALLS_PER_TASK * spec.agents * 1000) / spec.arrivalMs;
  const tableRows = rows.map((row) => {
    const { summary } = row;
    const gap = best === undefined || row === best ? undefined : pairedGap(summary, best.summary);
    return [
      summary.contestant,
      `${fixed(row.amplification, 3)}×`,
      fixed(row.executionsPerTask),
      percent(row.failureRate),
      `${fixed(row.meanLoad, 1)} / ${fixed(row.peakLoad, 0)}`,
      percent(summary.success),
      gap === undefined ? "–" : `${gap.gap >= 0 ? "+" : ""}${(gap.gap * 100).toFixed(1)} ± ${(gap.margin * 100).toFixed(1)}`,
      fixed(summary.modelCalls),
      `${fixed(summary.virtualSeconds, 1)} / ${fixed(summary.virtualSecondsP95, 1)}`,
      fixed(row.spanSeconds, 0),
      outcomesOf(summary),
    ];
  });
  const collapses = spec.maxFailure >= 1;
  const readWith = collapses
    ? `Here p reaches 1 at the capacity: a saturated service answers nothing, so an execution beyond its capacity buys no answer and costs every agent one; the service's answers (load × (1 − p)) are most at half its capacity and fall to none at ${spec.capacityPerSecond} executions/s. The section above, whose service still answers ${fixed((1 - LOAD.maxFailure) * 100, 0)} % at any load, is the same fleet with that one number changed.`
    : `Read the task success with the load model in mind: p stops at ${spec.maxFailure}, so a saturated service still answers ${fixed((1 - spec.maxFailure) * 100, 0)} % of its executions whatever the load, and the answers it gives grow with the load it takes; once every agent meets the cap, the contestant that sends the most executions gets the most answers, and pays for them in the load columns. A service whose answers fall past its capacity (congestion collapse) does not reward that: the next section (\`${COLLAPSE.name}\`) is the same fleet against one.`;
  return [
    collapses
      ? "## Degraded under load, collapsing: many agents, one service that answers nothing past its capacity"
      : "## Degraded under load: many agents, one overloaded service",
    "",
    `Issue 26's cell (bench/src/agents/load.ts${collapses ? ", `COLLAPSE`" : ""}). ${count(spec.agents, "agent")} arrive at seeded uniform times over ${spec.arrivalMs / 1000} s of virtual time, each with its own task (the grid's three kinds in turn), model and world, and all of them call ${LOADED_TOOL} on one service with a capacity: an execution fails with a 503 (\`503 Service Unavailable: overloaded\`, shed at once) with probability p = min(${spec.maxFailure}, load / ${spec.capacityPerSecond}), the load being the service's executions in the last ${spec.windowMs / 1000} s (that one included), per second: p = 0.25 at ${at(0.25)} executions/s, 0.5 at ${at(0.5)}, ${spec.maxFailure} from ${at(spec.maxFailure)}. When nothing fails, a task calls it about ${CALLS_PER_TASK} times (1,148 logical calls in a fleet of 1,000 against a service that never fails), so the tasks alone bring about ${fixed(offered, 1)} calls a second: with nothing retried, p ≈ ${fixed(failureProbability(spec, offered), 2)} there, and every retry, in place or by the model, makes the service fail more for every agent. ${count(fleets, "fleet")} per contestant (seed ${load.seed}), ${count(
      rows.reduce((sum, row) => sum + row.summary.episodes, 0),
      "episode",
    )} in ${load.seconds.toFixed(0)} s on ${count(load.workers, "process", "processes")}; each agent has the user's ${DEADLINE_MS / 1000} s from its arrival.`,
    "",
    "One fleet is one process: retry-reflect's rows share one plugin among all the agents (its circuit breaker and its retry budget are per process, as a user runs it), the peers keep no state beyond one run. The model is the grid's, reading each text by its words: every contestant's failure text here carries the service's 503, which it reads as transient and calls again three times in four; it does not wait for a `retry_after_ms` (a model has no clock to wait on), but retry-reflect's next call of the tool in that run waits at its backoff gate. *Load amplification* is the service's executions per logical call (a tool call the model made: a refused call counts with no execution, an in-place retry is an execution, not a call; the model's own re-calls are calls); *service executions / task* is the whole load per agent, the model's re-calls included. The gap is paired over the same agents against the best row (± twice its standard error; the agents of one fleet share its load, so this understates the spread between fleets).",
    "",
    `**Goal (issue 26)**: with the budget, load amplification ≤ ${LOAD_GOAL.amplification}× while task success stays within ${LOAD_GOAL.points} points of the best contestant: ${
      goals.length === 0
        ? "no row with a budget ran."
        : met.length === 0
          ? `missed by every row with a budget (${goals.length}).`
          : `met by ${met.join(", ")}; ${goals.length - met.length === 0 ? "by every row with a budget." : `missed by the other ${count(goals.length - met.length, "row")} with a budget.`}`
    }`,
    "",
    ...goals.map((goal) => `- ${goal.text}`),
    ...(goals.length > 0 ? [""] : []),
    table(
      [
        "contestant",
        "load amplification (executions / logical call)",
        "service executions / task",
        "executions failed",
        "load met, per s: mean / peak",
        "task success",
        `gap vs ${best?.summary.contestant ?? "the best"} (points)`,
        "model calls / task",
        "virtual s: mean / p95",
        "fleet's span (s)",
        "outcomes",
      ],
      tableRows,
    ),
    "",
    `How each acts: an in-place retry is an execution no model asked for, so toolRetryMiddleware and retry-reflect without a budget multiply the load per call, which raises p for every agent. A model round trip per failure (the plain agent, ADK-style) adds load too, but more slowly (a model call lasts 1.5 s), and each one can end in a give-up. retry-reflect's defaults open the circuit after five failures in a row, which a service failing half its calls reaches within seconds; the circuit is the process's, so for its 60 s every agent is refused and told not to call the tool again, and most give up. The rows with \`circuitBreakerFailureRate: 0.9\` open it only when nine calls in ten fail. The rows with \`maxBackoffMs: 60_000\` let the calls a spent budget turns away come back over up to a minute (the spread of a spent budget's waits runs from the window's wait to \`maxBackoffMs\`, 30 s by default), which moves the fleet's re-calls past the minute its agents arrive in. The two rows of 4 replicas (that recipe) deal the same agents to 4 plugins in turn: one over a breaker store the 4 share (the in-memory \`FleetStore\` of bench/src/agents/fleet-store.ts, on the virtual clock, in place of Redis: the rate and the budget are the fleet's, as with \`@retry-reflect/redis\`), and one with nothing shared (each replica its own breaker and budget). The row with \`circuitBreakerThreshold: 50\` keeps the count of failures in a row, only longer: at this volume a service that fails three calls in four still fails 50 in a row soon, and its circuit opens all the same. With a budget, a transient failure beyond it is not retried in place: the call ends \`RETRY_BUDGET_SPENT\`, the model calls again (a logical call, which also adds to the budget's calls), and its call waits at the gate: a wait drawn between the time the window has room and \`maxBackoffMs\`, so that the calls turned away together do not come back together. The budget's bound is ratio + floor / calls in the window: the default floor (\`minPerSecond: 1\`, ten retries per 10 s) is a share of this fleet's calls of its own, \`minPerSecond: 0.1\` leaves the ratio almost alone. ${readWith} Rerun this section alone: \`npm run bench:agents -- --cells=${spec.name} --out=none\` (\`--agents=200\` for a quick look).`,
    "",
  ];
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

/**
 * retry-reflect with its defaults and the best peer over `cells` (the means of the contestants that
 * ran in every cell; retry-reflect's own variants are not peers); undefined without either.
 */
export function againstBestPeer(
  options: GridOptions,
  summaries: readonly Summary[],
  cells: readonly Cell[],
): { ours: Summary; best: Summary } | undefined {
  const means = overall(options, summaries, cells);
  const ours = means.find((row) => row.contestant === OURS);
  const peers = means.filter((row) => !row.contestant.startsWith(OURS));
  if (ours === undefined || peers.length === 0) return undefined;
  return { ours, best: peers.reduce((a, b) => (b.success > a.success ? b : a)) };
}

/** retry-reflect's lead over the best peer over `cells`, in words: the gap, ours and the best. */
function leadLine(options: GridOptions, summaries: readonly Summary[], cells: readonly Cell[]): string {
  const pair = againstBestPeer(options, summaries, cells);
  if (pair === undefined) return "";
  const { ours, best } = pair;
  const gap = (ours.success - best.success) * 100;
  return `${gap >= 0 ? "a lead" : "a loss"} of ${Math.abs(gap).toFixed(1)} points (${percent(ours.success)} vs ${percent(best.success)}, ${best.contestant})`;
}

export function renderReport(
  options: GridOptions,
  summaries: readonly Summary[],
  run: RunInfo,
  sweepFile?: SweepFile,
  loads: readonly LoadRun[] = [],
): string {
  const profile = options.profile ?? MODEL_PROFILE;
  const lines: string[] = [];
  const episodes = summaries.reduce((sum, summary) => sum + summary.episodes, 0);
  const full = everywhere(options);
  const partial = options.contestants.filter((contestant) => !full.includes(contestant));
  lines.push("# Agents under fire: the agent-outcome benchmark", "");
  lines.push(
    `Generated by \`npm run bench:agents\` (bench/src/agents) on ${run.date.slice(0, 10)}, Node.js ${run.node}: seed ${run.seed}, ${count(options.cells.length, "cell")} × ${count(full.length, "contestant")} × ${count(run.tasks, "task")} × ${count(run.trials, "trial")}${
      partial.length === 0
        ? ""
        : `, plus ${count(partial.length, "contestant")} in ${options.cells
            .filter((cell) => partial.some((contestant) => runsIn(contestant, cell)))
            .map((cell) => cell.name)
            .join(" and ")} only`
    } = ${count(episodes, "episode")} (${(run.tasks * run.trials).toLocaleString("en-US")} per cell and contestant) in ${run.seconds.toFixed(0)} s on ${count(run.workers, "process", "processes")}. The same seed gives the same numbers: every fault, every model choice and every jitter is drawn from generators seeded per (cell, task, trial), and time is virtual.`,
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
  const demos = options.cells.filter((cell) => cell.featureDemo !== undefined);
  const comparisons = options.cells.filter((cell) => cell.featureDemo === undefined);
  if (demos.length > 0) {
    lines.push(
      `**Comparisons and feature demos.** ${count(comparisons.length, "cell")} compare the contestants (${comparisons.map((cell) => cell.name).join(", ")}); ${demos
        .map((cell) => `*${cell.name}* is a feature demo: ${cell.featureDemo}`)
        .join(
          "; ",
        )}. The overall means are shown without ${demos.length === 1 ? "it" : "them"} first, then with ${demos.length === 1 ? "it" : "them"}.`,
      "",
    );
    const without = leadLine(options, summaries, comparisons);
    const withDemos = leadLine(options, summaries, options.cells);
    if (without !== "") {
      lines.push(
        `**The lead.** retry-reflect with its defaults against the best peer (the other contestants that ran in every cell; retry-reflect's own variants are not peers): without the feature demo${demos.length === 1 ? "" : "s"}, ${without}; with ${demos.length === 1 ? "it" : "them"}, ${withDemos}.${sweepFile === undefined ? " (No profile sweep beside this run: `npm run bench:agents:sweep` adds one.)" : ` ${sweepSummary(sweepFile.sweep).line}`}`,
        "",
      );
    }
    lines.push(
      `## Overall without the feature demo${demos.length === 1 ? "" : "s"} (${count(comparisons.length, "cell")}, each weighs the same)`,
      "",
      table(HEADER, rows(overall(options, summaries, comparisons))),
      "",
    );
  }
  lines.push(
    `## Overall${demos.length > 0 ? `, all ${count(options.cells.length, "cell")}` : ""} (each cell weighs the same)`,
    "",
    table(HEADER, rows(overall(options, summaries))),
    "",
  );
  lines.push("![task success vs model calls per task, per contestant](agents.svg)", "");

  lines.push("## Where retry-reflect wins, ties or loses", "");
  lines.push(
    "retry-reflect with its defaults against the best other contestant of each cell, over the same tasks: a gap within twice its standard error is a tie (the tasks are the independent units, since the trials of one task share its facts).",
    "",
  );
  for (const { cell, verdict, text } of verdicts(options, summaries)) {
    lines.push(`- **${cell.name}: ${verdict}**, ${text}. ${WHY[cell.name] ?? ""}`.trimEnd());
  }
  lines.push("");

  lines.push(...timeoutSection(options, summaries));
  lines.push(...exhaustionSection(options, summaries));
  for (const load of loads) lines.push(...loadSection(load));
  if (sweepFile !== undefined) lines.push(...sweepSection(sweepFile));

  lines.push("## Per cell", "");
  for (const cell of options.cells) {
    lines.push(`### ${cell.name}: ${cell.description}`, "");
    if (cell.unsolvable)
      lines.push(
        "No contestant can get the answer here: task success is an honest give-up (the agent tells the user it could not, sends nothing, does not crash).",
        "",
        ...crashNote(summaries.filter((summary) => summary.cell === cell.name)),
      );
    lines.push(table(HEADER, rows(summaries.filter((summary) => summary.cell === cell.name))), "");
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
          "transient (502–504, unavailable, timed out, 429, rate limit, reset, temporarily, overloaded, in progress)",
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
  for (const contestant of options.contestants) lines.push(`- **${contestant.name}**: ${contestant.description}.`);
  lines.push("");
  lines.push("### Cells", "");
  for (const cell of CELLS.filter((cell) => options.cells.includes(cell)))
    lines.push(`- **${cell.name}**: ${cell.description}${cell.kinds ? ` (${cell.kinds.join(", ")} tasks only)` : ""}.`);
  lines.push("");
  lines.push(
    "Rerun: `npm run bench:agents` (all of it; `-- --seed=2` for another seed, `--cells=hang,outage`, `--contestants=retry-reflect`, `--tasks=20 --trials=4` for a quick look, `--out=none` to print instead of writing). Raw numbers: agents.json.",
    "",
  );
  return `${lines.join("\n")}\n`;
}

/** Task success (y) against model calls per task (x): one big dot per contestant overall, small dots per cell. */
export function renderSvg(options: GridOptions, summaries: readonly Summary[]): string {
  const width = 860;
  const height = 480;
  const left = 70;
  const right = 350;
  const top = 40;
  const bottom = 60;
  const all = overall(options, summaries);
  const maxCalls = Math.ceil(Math.max(4, ...summaries.map((summary) => summary.modelCalls)) + 0.5);
  const x = (calls: number) => left + ((width - left - right) * calls) / maxCalls;
  const y = (success: number) => height - bottom - (height - top - bottom) * success;
  const parts: string[] = [];
  parts.push(
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="sans-serif" font-size="12" role="img">`,
  );
  const summary = all.map((entry) => `${entry.contestant} ${percent(entry.success)} in ${fixed(entry.modelCalls)} calls`).join("; ");
  parts.push(`<title>Task success vs model calls per task, all cells: ${summary}</title>`);
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
  const plotted = everywhere(options);
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
        `<circle cx="${x(mine.modelCalls).toFixed(1)}" cy="${y(mine.success).toFixed(1)}" r="8" fill="${colour}" stroke="#111"><title>${contestant.name}, all cells: ${percent(mine.success)}, ${fixed(mine.modelCalls)} calls</title></circle>`,
      );
    }
    const legendY = top + 20 + index * 22;
    parts.push(`<circle cx="${width - right + 24}" cy="${legendY - 4}" r="6" fill="${colour}" stroke="#111"/>`);
    parts.push(`<text x="${width - right + 36}" y="${legendY}">${contestant.name}${mine ? ` (${percent(mine.success)})` : ""}</text>`);
  });
  parts.push(
    `<text x="${width - right + 18}" y="${top + 20 + plotted.length * 22 + 10}" fill="#555">big dot: all cells; small: one cell</text>`,
  );
  parts.push("</svg>");
  return `${parts.join("\n")}\n`;
}
