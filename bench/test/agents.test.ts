// A small slice of `npm run bench:agents` (a few episodes per cell and contestant), so that the
// harness cannot rot: the grid runs end to end through a real createAgent, it is reproducible from
// its seed, and the outcomes the report is about are what the mechanisms produce.

import { seededRandom } from "@retry-reflect/core/testing";
import { describe, expect, it } from "vitest";
import { CELLS } from "../src/agents/cells.js";
import { adkStyleReflectAndRetry, CONTESTANTS } from "../src/agents/contestants.js";
import { runAgentEpisode } from "../src/agents/episode.js";
import { renderReport, renderSvg, verdicts } from "../src/agents/report.js";
import { type GridOptions, runShard, type Summary, summarise, type TaskRecord } from "../src/agents/run-grid.js";
import { perceive } from "../src/agents/simulated-model.js";
import { makeTask } from "../src/agents/world.js";

/** What the ADK-style middleware hands the model for a tool that threw `error`. */
async function adkText(error: Error): Promise<string> {
  const middleware = adkStyleReflectAndRetry() as unknown as {
    wrapToolCall: (request: unknown, handler: () => Promise<unknown>) => Promise<{ content: unknown }>;
  };
  const message = await middleware.wrapToolCall({ toolCall: { id: "call_1", name: "get_weather", args: { city: "paris" } } }, async () => {
    throw error;
  });
  return String(message.content);
}

const options: GridOptions = { seed: 1, tasks: 3, trials: 2, cells: CELLS, contestants: CONTESTANTS };

async function grid(): Promise<Summary[]> {
  const records: TaskRecord[] = [];
  await runShard(options, 0, 1, (record) => records.push(record));
  return CELLS.flatMap((cell) =>
    CONTESTANTS.map((contestant) =>
      summarise(
        cell.name,
        contestant.name,
        records.filter((record) => record.cell === cell.name && record.contestant === contestant.name),
      ),
    ),
  );
}

const find = (summaries: readonly Summary[], cell: string, contestant: string) => {
  const summary = summaries.find((entry) => entry.cell === cell && entry.contestant === contestant);
  if (summary === undefined) throw new Error(`no summary for ${cell} / ${contestant}`);
  return summary;
};

describe("the agent-outcome benchmark (a slice)", () => {
  it("runs every cell for every contestant and the outcomes follow the mechanisms", { timeout: 120_000 }, async () => {
    const summaries = await grid();
    expect(summaries).toHaveLength(CELLS.length * CONTESTANTS.length);
    for (const summary of summaries)
      expect(summary.episodes, `${summary.cell} / ${summary.contestant}`).toBe(options.tasks * options.trials);

    // No faults: the plain agent and ours finish every task.
    expect(find(summaries, "baseline", "no middleware").success).toBe(1);
    expect(find(summaries, "baseline", "retry-reflect").success).toBe(1);
    // A lost write reply: the others send the email again; the guard (a key forwarded to the service) does not.
    expect(find(summaries, "lost-write-response", "no middleware").duplicates).toBeGreaterThan(0);
    expect(find(summaries, "lost-write-response", "toolRetryMiddleware").duplicates).toBeGreaterThan(0);
    expect(find(summaries, "lost-write-response", "retry-reflect").duplicates).toBe(0);
    expect(find(summaries, "lost-write-response", "retry-reflect").success).toBe(1);
    // A hang with nothing to cut it off runs into the user's deadline; an attempt timeout ends it.
    expect(find(summaries, "hang", "no middleware").outcomes.deadline).toBeGreaterThan(0);
    expect(find(summaries, "hang", "retry-reflect + timeouts").outcomes.deadline).toBe(0);
    // ADK's documented default raises once the retries are spent: the run ends with an error.
    expect(find(summaries, "explicit-permanent", "ADK-style reflect-and-retry").outcomes.crashed).toBeGreaterThan(0);
    // Nobody can tell a plausible wrong answer from a right one.
    for (const contestant of CONTESTANTS) expect(find(summaries, "implicit-permanent", contestant.name).success).toBe(0);

    const markdown = renderReport(options, summaries, {
      seed: 1,
      tasks: 3,
      trials: 2,
      workers: 1,
      seconds: 1,
      node: "v0",
      date: "2026-12-01",
    });
    for (const cell of CELLS) expect(markdown).toContain(`### ${cell.name}: ${cell.description}`);
    expect(verdicts(options, summaries)).toHaveLength(CELLS.length);
    const svg = renderSvg(options, summaries);
    expect(svg.startsWith("<svg")).toBe(true);
    for (const contestant of CONTESTANTS) expect(svg).toContain(contestant.name);
  });

  it("is reproducible from its seed", { timeout: 60_000 }, async () => {
    const cell = CELLS.find((entry) => entry.name === "explicit-transient");
    if (cell === undefined) throw new Error("no explicit-transient cell");
    for (const contestant of CONTESTANTS) {
      const run = () => runAgentEpisode(cell, contestant, makeTask(4, "two-step", seededRandom(9)), 12345);
      expect(await run(), contestant.name).toEqual(await run());
    }
  });

  it("reads each contestant's texts the way the report says", async () => {
    // retry-reflect's stop text, its key request, its reflection with valid values.
    expect(
      perceive("The tool 'get_weather' failed 3 times; the last error was: \"503\". Do not call 'get_weather' again for this task."),
    ).toBe("stop");
    expect(perceive("The tool 'send_email' changes state and needs an idempotency key; none was given.")).toBe("key");
    expect(perceive('Invalid option: expected one of "paris"|"london" at city')).toBe("hint");
    // LangChain's own texts: toolRetryMiddleware's exhaustion message says nothing of the error.
    expect(perceive("Tool 'get_weather' failed after 3 attempts with InjectedFault")).toBe("opaque");
    expect(perceive("Error: 503 Service Unavailable (injected fault)\n Please fix your mistakes.")).toBe("transient");
    expect(perceive("Tool 'get_weather' failed after 3 attempts with ToolInputParsingException")).toBe("arguments");
    // ADK's guidance: "do not repeat the exact same call" on a transient error; the error itself when it is about arguments.
    expect(perceive(await adkText(new Error("503 Service Unavailable")))).toBe("no-repeat");
    expect(perceive(await adkText(new Error('Invalid option: expected one of "paris"|"london"')))).toBe("hint");
    expect(perceive("Error: 403 Forbidden (injected fault)")).toBe("permanent");
  });
});
