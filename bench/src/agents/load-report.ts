// The load sections of AGENTS.md (issue 26, issue 51): each contestant's fleet against one service
// that fails more the more it is called, on each seed, and the goal for retry-reflect's rows.
import { DEADLINE_MS } from "./episode.js";
import { GOALS, loadGoalOf, OURS, pairedGap } from "./goals.js";
import { COLLAPSE, failureProbability, LOAD, LOADED_TOOL, type LoadRun, type LoadSpec, type LoadSummary } from "./load.js";
import { count, fixed, giveUpOf, outcomesOf, percent, signed, table } from "./markdown.js";

/** get_weather's logical calls per task when nothing fails (a first call, the model's rechecks of a doubted result, its slips): measured on the fleet. */
const CALLS_PER_TASK = 1.15;

/** The goal for one of retry-reflect's rows (the defaults', a candidate's) on one seed, in words. */
export function loadGoalLine(rows: readonly LoadSummary[], row: LoadSummary, seed: number): { met: boolean; text: string } {
  const { met, amplificationMet, successMet, best, points } = loadGoalOf(rows, row);
  const verdict = (ok: boolean) => (ok ? "met" : "missed");
  const paired = best === row ? undefined : pairedGap(row.summary, best.summary);
  const against =
    best === row
      ? "the best row"
      : `${percent(best.summary.success)} for the best row (${best.summary.contestant}): ${signed(points)} points, paired over the same agents ${signed((paired?.gap ?? 0) * 100)} ± ${((paired?.margin ?? 0) * 100).toFixed(1)}`;
  return {
    met,
    text: `**${row.summary.contestant}**, seed ${seed}: amplification ${fixed(row.amplification, 3)}× (≤ ${GOALS.amplification}×: ${verdict(amplificationMet)}); task success ${percent(row.summary.success)}, ${against} (within ${GOALS.loadPoints}: ${verdict(successMet)}). **${met ? "Met" : "Missed"}.**`,
  };
}

/** One load section: its fleet on every seed, each contestant's row, the goal for retry-reflect's rows. */
export function loadSection(spec: LoadSpec, runs: readonly LoadRun[]): string[] {
  const withRows = runs.filter((run) => run.summaries.length > 0);
  if (withRows.length === 0) return [];
  const collapses = spec.maxFailure >= 1;
  const at = (p: number) => fixed(p * spec.capacityPerSecond, 1);
  const offered = (CALLS_PER_TASK * spec.agents * 1000) / spec.arrivalMs;
  const episodes = withRows.reduce((sum, run) => sum + run.summaries.reduce((total, row) => total + row.summary.episodes, 0), 0);
  const seconds = withRows.reduce((sum, run) => sum + run.seconds, 0);
  const goals = withRows.flatMap((run) =>
    run.summaries.filter((row) => row.summary.contestant.startsWith(OURS)).map((row) => loadGoalLine(run.summaries, row, run.seed).text),
  );
  const tableRows = withRows.flatMap((run) => {
    const best = loadGoalOf(run.summaries, run.summaries[0] as LoadSummary).best;
    return run.summaries.map((row) => {
      const { summary } = row;
      const gap = row === best ? undefined : pairedGap(summary, best.summary);
      return [
        summary.contestant,
        String(run.seed),
        `${fixed(row.amplification, 3)}×`,
        fixed(row.executionsPerTask),
        percent(row.failureRate),
        `${fixed(row.meanLoad, 1)} / ${fixed(row.peakLoad, 0)}`,
        percent(summary.success),
        gap === undefined ? "– (the best)" : `${signed(gap.gap * 100)} ± ${(gap.margin * 100).toFixed(1)}`,
        fixed(summary.modelCalls),
        giveUpOf(summary),
        `${fixed(summary.virtualSeconds, 1)} / ${fixed(summary.virtualSecondsP95, 1)}`,
        fixed(row.spanSeconds, 0),
        outcomesOf(summary),
      ];
    });
  });
  const readWith = collapses
    ? `Here p reaches 1 at the capacity: a saturated service answers nothing, so an execution beyond its capacity buys no answer and costs every agent one; the service's answers (load × (1 − p)) are most at half its capacity and fall to none at ${spec.capacityPerSecond} executions/s. The section above, whose service still answers ${fixed((1 - LOAD.maxFailure) * 100, 0)} % at any load, is the same fleet with that one number changed.`
    : `Read the task success with the load model in mind: p stops at ${spec.maxFailure}, so a saturated service still answers ${fixed((1 - spec.maxFailure) * 100, 0)} % of its executions whatever the load, and the answers it gives grow with the load it takes; once every agent meets the cap, the contestant that sends the most executions gets the most answers, and pays for them in the load columns. A service whose answers fall past its capacity (congestion collapse) does not reward that: the next section (\`${COLLAPSE.name}\`) is the same fleet against one.`;
  return [
    collapses
      ? "## Degraded under load, collapsing: many agents, one service that answers nothing past its capacity"
      : "## Degraded under load: many agents, one overloaded service",
    "",
    `Issue 26's cell (bench/src/agents/load.ts${collapses ? ", `COLLAPSE`" : ""}). ${count(spec.agents, "agent")} arrive at seeded uniform times over ${spec.arrivalMs / 1000} s of virtual time, each with its own task (the grid's three kinds in turn), model and world, and all of them call ${LOADED_TOOL} on one service with a capacity: an execution fails with a 503 (\`503 Service Unavailable: overloaded\`, shed at once) with probability p = min(${spec.maxFailure}, load / ${spec.capacityPerSecond}), the load being the service's executions in the last ${spec.windowMs / 1000} s (that one included), per second: p = 0.25 at ${at(0.25)} executions/s, 0.5 at ${at(0.5)}, ${spec.maxFailure} from ${at(spec.maxFailure)}. When nothing fails, a task calls it about ${CALLS_PER_TASK} times, so the tasks alone bring about ${fixed(offered, 1)} calls a second: with nothing retried, p ≈ ${fixed(failureProbability(spec, offered), 2)} there, and every retry, in place or by the model, makes the service fail more for every agent. One fleet per contestant and seed (seeds ${withRows.map((run) => run.seed).join(" and ")}), ${count(episodes, "episode")} in ${seconds.toFixed(0)} s of one process's time; each agent has the user's ${DEADLINE_MS / 1000} s from its arrival.`,
    "",
    "One fleet is one process: retry-reflect's rows share one plugin among all the agents (its circuit breakers and its retry budget are per process, as a user runs it), the peers keep no state beyond one run (their 10 s tool timeout never fires here: a call takes 0.3 s or is shed at once). The model is the grid's, reading each text by its words; it does not wait for a `retry_after_ms` (a model has no clock to wait on); whatever waiting a contestant does, it does itself. *Load amplification* is the service's executions per logical call (a tool call the model made: a refused call counts with no execution, an in-place retry is an execution, not a call; the model's own re-calls are calls); *service executions / task* is the whole load per agent, the model's re-calls included. The gap is paired over the same agents against the best row of the seed (± twice its standard error; the agents of one fleet share its load, so this understates the spread between fleets).",
    "",
    `**Goal (issues 26 and 51)**: for retry-reflect's defaults, load amplification ≤ ${GOALS.amplification}× while task success stays within ${GOALS.loadPoints} points of the best row run (its candidates' rows are judged by the same rule, for comparison).`,
    "",
    ...goals.map((goal) => `- ${goal}`),
    ...(goals.length > 0 ? [""] : []),
    table(
      [
        "contestant",
        "seed",
        "load amplification (executions / logical call)",
        "service executions / task",
        "executions failed",
        "load met, per s: mean / peak",
        "task success",
        "gap vs the best row (points)",
        "model calls / task",
        "time to give up, s: mean / p95",
        "virtual s: mean / p95",
        "fleet's span (s)",
        "outcomes",
      ],
      tableRows,
    ),
    "",
    `How each acts: an in-place retry is an execution no model asked for, so a contestant that retries in place without a bound (toolRetryMiddleware) multiplies the load per call, which raises p for every agent. A model round trip per failure (the plain agent, ADK-style) adds load too, but more slowly (a model call lasts 1.5 s), and each one can end in a give-up. retry-reflect's breaker and retry budget are the process's, so what they decide for one agent they decide for all: a circuit that opens (after 10 failures in a row) holds every agent's call for its probe, 1 s later by default, so the fleet sends the failing service about one call a second instead of one per agent, and the waiting calls run when a probe succeeds; a spent budget (in-place retries past 5 % of the calls) turns them into calls that wait at the gate. With the former open time, 60 s (the candidate row \`circuitBreakerResetMs: 60_000\`), the calls that met an open circuit were turned away at once and the model, calling again at once, spent its tries on refusals. ${readWith} Rerun this section alone: \`npm run bench:agents -- --cells=${spec.name} --out=none\` (\`--agents=200\` for a quick look).`,
    "",
  ];
}
