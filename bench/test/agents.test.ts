// A small slice of `npm run bench:agents` (a few episodes per cell and contestant), so that the
// harness cannot rot: the grid runs end to end through a real createAgent, it is reproducible from
// its seed, and the outcomes the report is about are what the mechanisms produce.

import { ToolInputParsingException } from "@langchain/core/tools";
import { createFakeClock, seededRandom } from "@retry-reflect/core/testing";
import { ToolInvocationError, ToolMessage } from "langchain";
import { describe, expect, it } from "vitest";
import { CANDIDATE_ROWS } from "../src/agents/candidates.js";
import { CELLS, type Cell, CURVE_CELLS, INTENSITIES } from "../src/agents/cells.js";
import { collectFailureTexts } from "../src/agents/collect-texts.js";
import {
  adkStyleReflectAndRetry,
  CONTESTANTS,
  carefulToolRetry,
  familyOf,
  INFORMATION,
  plainToolTimeout,
  toolTimeout,
} from "../src/agents/contestants.js";
import { renderCurvesSvg } from "../src/agents/curves.js";
import { DEADLINE_MS, runAgentEpisode } from "../src/agents/episode.js";
import { cellVerdicts, comparableCells, overall } from "../src/agents/goals.js";
import { MODEL_PROFILE, withOverrides } from "../src/agents/model-profile.js";
import { renderReport, renderSvg } from "../src/agents/report.js";
import { type GridOptions, runShard, type Summary, summarise, type TaskRecord } from "../src/agents/run-grid.js";
import { CUES, perceive, readable } from "../src/agents/simulated-model.js";
import { leadOf, sweepPoints, sweepSummary } from "../src/agents/sweep.js";
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

/** The peers, the defaults, and the peers as they come (information rows). */
const ROWS = [...CONTESTANTS, ...INFORMATION];
// One trial of each of the 3 tasks (one per task kind: lookup, two-step, write) per cell and row:
// what the assertions below read holds on every episode or on one of them, so a second trial of
// each only doubled the time (other tests below run 2 trials, the seeds of the later ones too).
const options: GridOptions = { seed: 1, tasks: 3, trials: 1, cells: CELLS, contestants: ROWS };

async function grid(): Promise<Summary[]> {
  const records: TaskRecord[] = [];
  await runShard(options, 0, 1, (record) => records.push(record));
  return CELLS.flatMap((cell) =>
    ROWS.map((contestant) =>
      summarise(
        cell.name,
        contestant.name,
        records.filter((record) => record.cell === cell.name && record.contestant === contestant.name),
      ),
    ),
  );
}

const contestant = (name: string) => {
  const found = [...ROWS, ...CANDIDATE_ROWS].find((entry) => entry.name === name);
  if (found === undefined) throw new Error(`no contestant ${name}`);
  return found;
};

const find = (summaries: readonly Summary[], cell: string, contestant: string) => {
  const summary = summaries.find((entry) => entry.cell === cell && entry.contestant === contestant);
  if (summary === undefined) throw new Error(`no summary for ${cell} / ${contestant}`);
  return summary;
};

describe("the agent-outcome benchmark (a slice)", () => {
  it("runs every cell for every contestant and the outcomes follow the mechanisms", { timeout: 120_000 }, async () => {
    const summaries = await grid();
    expect(summaries).toHaveLength(CELLS.length * ROWS.length);
    for (const summary of summaries)
      expect(summary.episodes, `${summary.cell} / ${summary.contestant}`).toBe(options.tasks * options.trials);

    // No faults: the plain agent and ours finish every task.
    expect(find(summaries, "baseline", "no middleware + 10 s tool timeout").success).toBe(1);
    expect(find(summaries, "baseline", "retry-reflect").success).toBe(1);
    // A lost write reply: the others send the email again; the guard (a key forwarded to the service) does not.
    expect(find(summaries, "lost-write-response", "no middleware + 10 s tool timeout").duplicates).toBeGreaterThan(0);
    expect(find(summaries, "lost-write-response", "toolRetryMiddleware (careful) + 10 s tool timeout").duplicates).toBeGreaterThan(0);
    expect(find(summaries, "lost-write-response", "retry-reflect").duplicates).toBe(0);
    expect(find(summaries, "lost-write-response", "retry-reflect").success).toBe(1);
    // Nobody can tell a plausible wrong answer from a right one.
    for (const row of ROWS) expect(find(summaries, "implicit-permanent", row.name).success).toBe(0);
    // The peers' 10 s tool timeout cuts off a tool that answers after 20–50 s; the same peer without it waits.
    expect(find(summaries, "slow-but-fine", "toolRetryMiddleware (careful) + 10 s tool timeout").success).toBe(0);
    expect(find(summaries, "slow-but-fine", "toolRetryMiddleware (careful)").success).toBe(1);
    // A give-up has its time: in down-for-good every episode gave up, and the time is the episodes' own.
    const dead = find(summaries, "down-for-good", "retry-reflect");
    expect(dead.outcomes["gave-up"]).toBe(dead.episodes);
    expect(dead.giveUpSeconds).toBeCloseTo(dead.virtualSeconds, 10);
    expect(dead.giveUpSecondsP95).toBe(dead.virtualSecondsP95);
    expect(find(summaries, "baseline", "retry-reflect").giveUpSeconds).toBeUndefined();

    const bench = { cells: CELLS, contestants: ROWS, runs: [{ seed: 1, summaries, loads: [] }] };
    const markdown = renderReport({
      ...bench,
      run: { seeds: [1], tasks: options.tasks, trials: options.trials, workers: 1, seconds: 1, node: "v0", date: "2026-12-01" },
    });
    for (const cell of CELLS) expect(markdown).toContain(`### ${cell.name}: ${cell.description}`);
    // The feature demo (a lost write reply) is named, and left out of the overall means.
    const comparisons = comparableCells(CELLS);
    expect(comparisons.map((cell) => cell.name)).not.toContain("lost-write-response");
    expect(comparisons).toHaveLength(12);
    expect(markdown).toContain(`## Overall (the ${comparisons.length} cells that compare, each weighs the same)`);
    const peer = "toolRetryMiddleware (careful) + 10 s tool timeout";
    const without = overall(ROWS, summaries, comparisons).find((summary) => summary.contestant === peer);
    const mean = comparisons.reduce((sum, cell) => sum + find(summaries, cell.name, peer).success, 0) / comparisons.length;
    expect(without?.success).toBeCloseTo(mean, 10);
    expect(cellVerdicts(bench, CELLS)).toHaveLength(CELLS.length);
    // The first screen states the lead against the best peer (never an information row), then the goal checks.
    const ours = overall(ROWS, summaries, comparisons).find((row) => row.contestant === "retry-reflect")?.success ?? 0;
    const peers = overall(ROWS, summaries, comparisons).filter((row) =>
      CONTESTANTS.some((entry) => entry.role === "peer" && entry.name === row.contestant),
    );
    expect(peers).toHaveLength(3);
    const best = Math.max(...peers.map((row) => row.success));
    const gap = (ours - best) * 100;
    expect(markdown).toContain(`seed 1: it ${gap >= 0 ? "leads" : "trails"} by ${Math.abs(gap).toFixed(1)} points`);
    expect(markdown.indexOf("**The lead.**")).toBeLessThan(markdown.indexOf("## Done when (issue 51)"));
    expect(markdown.indexOf("## Done when (issue 51)")).toBeLessThan(markdown.indexOf("## Overall"));
    // Crashes are scored apart: ADK-style's raise in the down-for-good cell is a crash, not a give-up.
    const adkDown = find(summaries, "down-for-good", "ADK-style reflect-and-retry");
    expect(adkDown.outcomes.crashed).toBeGreaterThan(0);
    expect(markdown).toContain(
      `ADK-style reflect-and-retry, seed 1: ${(adkDown.success * 100).toFixed(1)} % → ${((adkDown.success + adkDown.outcomes.crashed / adkDown.episodes) * 100).toFixed(1)} %`,
    );
    const svg = renderSvg(bench);
    expect(svg.startsWith("<svg")).toBe(true);
    for (const row of ROWS) expect(svg).toContain(row.name);
  });

  it("ends a hang nothing cuts off at the user's deadline, and an attempt timeout retries it", { timeout: 60_000 }, async () => {
    const firstCallHangs: Cell = { name: "first-call-hangs", description: "", faults: { get_weather: [{ kind: "hang", calls: [1] }] } };
    const task = makeTask(1, "lookup", seededRandom(2));
    const plain = await runAgentEpisode(firstCallHangs, contestant("no middleware"), task, 5);
    expect(plain).toMatchObject({ success: false, outcome: "deadline", virtualMs: DEADLINE_MS });
    const ours = await runAgentEpisode(firstCallHangs, contestant("retry-reflect (attemptTimeoutMs: 10_000)"), task, 5);
    expect(ours).toMatchObject({ success: true, outcome: "answered", toolExecutions: 2 });
    expect(ours.virtualMs).toBeLessThan(15_000);
  });

  it("ADK-style: a reflection per failure, a success resets the count, the fourth failure in a row raises", async () => {
    const middleware = adkStyleReflectAndRetry() as unknown as {
      wrapToolCall: (request: unknown, handler: () => Promise<unknown>) => Promise<{ content: unknown }>;
    };
    const request = { toolCall: { id: "call_1", name: "get_weather", args: { city: "paris" } } };
    const failing = async () => {
      throw new Error("503 Service Unavailable");
    };
    const counts: unknown[] = [];
    for (let index = 0; index < 3; index++)
      counts.push(JSON.parse(String((await middleware.wrapToolCall(request, failing)).content)).retry_count);
    expect(counts).toEqual([1, 2, 3]);
    await expect(middleware.wrapToolCall(request, failing)).rejects.toThrow("503 Service Unavailable");
    await middleware.wrapToolCall(request, async () => ({ content: "ok" }));
    expect(JSON.parse(String((await middleware.wrapToolCall(request, failing)).content)).retry_count).toBe(1);
  });

  it("the careful toolRetryMiddleware: a schema error is not retried in place, and the model gets the tool's error text", async () => {
    const middleware = carefulToolRetry() as unknown as {
      wrapToolCall: (request: unknown, handler: () => Promise<unknown>) => Promise<unknown>;
    };
    const toolCall = { id: "call_1", name: "get_weather", args: { city: "Paris, France" } };
    let runs = 0;
    const invalid = async () => {
      runs += 1;
      throw new ToolInvocationError(new ToolInputParsingException('Invalid option: expected one of "paris"|"london" at city'), toolCall);
    };
    const message = await middleware.wrapToolCall({ toolCall, state: { messages: [] }, runtime: {} }, invalid);
    expect(runs).toBe(1);
    expect(ToolMessage.isInstance(message) ? String(message.content) : message).toBe(
      'The tool call failed: Invalid option: expected one of "paris"|"london" at city',
    );
    expect(perceive(String((message as ToolMessage).content))).toBe("hint");
  });

  it("a peer's tool timeout fails a hung call at its limit on the episode's clock, and leaves nothing pending after an answer", async () => {
    const clock = createFakeClock();
    const middleware = toolTimeout(clock, 10_000) as unknown as {
      wrapToolCall: (request: unknown, handler: () => Promise<unknown>) => Promise<unknown>;
    };
    const request = { toolCall: { id: "call_1", name: "get_weather", args: {} } };
    const hung = middleware.wrapToolCall(request, () => new Promise(() => {}));
    const settled = hung.then(
      () => "answered",
      (error: Error) => error.message,
    );
    await clock.advance(9_999);
    expect(await Promise.race([settled, Promise.resolve("pending")])).toBe("pending");
    await clock.advance(1);
    expect(await settled).toBe("Timed out: the tool 'get_weather' did not answer within 10000 ms");
    await expect(middleware.wrapToolCall(request, async () => "ok")).resolves.toBe("ok");
    expect(clock.pendingSleeps()).toBe(0);
  });

  it("the plain agent's tool timeout writes every failure as the tool node does without middleware, the timeout too", async () => {
    const clock = createFakeClock();
    const middleware = plainToolTimeout(clock, 10_000) as unknown as {
      wrapToolCall: (request: unknown, handler: () => Promise<unknown>) => Promise<ToolMessage>;
    };
    const toolCall = { id: "call_1", name: "get_weather", args: { city: "paris" } };
    const hung = middleware.wrapToolCall({ toolCall }, () => new Promise(() => {}));
    await clock.advance(10_000);
    const timedOut = await hung;
    expect(timedOut.content).toBe("Error: Timed out: the tool 'get_weather' did not answer within 10000 ms\n Please fix your mistakes.");
    expect(timedOut.status).toBe("error");
    expect(perceive(String(timedOut.content))).toBe("transient");
    const failed = await middleware.wrapToolCall({ toolCall }, async () => {
      throw new Error("503 Service Unavailable");
    });
    expect(failed.content).toBe("Error: 503 Service Unavailable\n Please fix your mistakes.");
    const invalid = new ToolInvocationError(
      new ToolInputParsingException('Invalid option: expected one of "paris"|"london" at city'),
      toolCall,
    );
    const schema = await middleware.wrapToolCall({ toolCall }, async () => {
      throw invalid;
    });
    expect(schema.content).toBe(invalid.message);
    expect(clock.pendingSleeps()).toBe(0);
  });

  it("the plain agent with a tool timeout runs the same episodes as without it where no call lasts 10 s", { timeout: 60_000 }, async () => {
    const cells = CELLS.filter((cell) => ["explicit-transient", "invalid-arguments", "rate-limit"].includes(cell.name));
    const run = async (name: string) => {
      const records: TaskRecord[] = [];
      await runShard({ seed: 1, tasks: 3, trials: 2, cells, contestants: [contestant(name)] }, 0, 1, (record) => records.push(record));
      return records.map((record) => record.results);
    };
    expect(await run("no middleware + 10 s tool timeout")).toEqual(await run("no middleware"));
  });

  it("is reproducible from its seed", { timeout: 60_000 }, async () => {
    const cell = CELLS.find((entry) => entry.name === "explicit-transient");
    if (cell === undefined) throw new Error("no explicit-transient cell");
    for (const contestant of CONTESTANTS) {
      const run = () => runAgentEpisode(cell, contestant, makeTask(4, "two-step", seededRandom(9)), 12345);
      expect(await run(), contestant.name).toEqual(await run());
    }
  });

  it("gives a cell the same episodes whether it runs alone (--cells) or in the whole grid", { timeout: 60_000 }, async () => {
    const contestants = CONTESTANTS.filter((contestant) => contestant.name === "retry-reflect");
    const collect = async (cells: GridOptions["cells"]) => {
      const records: TaskRecord[] = [];
      await runShard({ seed: 3, tasks: 2, trials: 2, cells, contestants }, 0, 1, (record) => records.push(record));
      return records.filter((record) => record.cell === "hang");
    };
    const alone = await collect(CELLS.filter((cell) => cell.name === "hang"));
    expect(alone).toHaveLength(2);
    expect(alone).toEqual(await collect(CELLS));
  });

  it("a model that passes a key unasked and keeps it (proactiveKeyRate 1, keepOnResend 1) sends a lost email once with any contestant; at the defaults the peers send it twice", {
    timeout: 60_000,
  }, async () => {
    const cells = CELLS.filter((cell) => cell.name === "lost-write-response");
    const contestants = CONTESTANTS.filter((entry) => entry.name === "no middleware" || entry.name === "toolRetryMiddleware");
    const run = async (profile: GridOptions["profile"]) => {
      const records: TaskRecord[] = [];
      await runShard({ seed: 1, tasks: 4, trials: 2, cells, contestants, profile }, 0, 1, (record) => records.push(record));
      return contestants.map((entry) =>
        summarise(
          "lost-write-response",
          entry.name,
          records.filter((record) => record.contestant === entry.name),
        ),
      );
    };
    for (const summary of await run(undefined)) expect(summary.duplicates, summary.contestant).toBeGreaterThan(0);
    for (const summary of await run(withOverrides(MODEL_PROFILE, "proactiveKeyRate=1,reactions.idempotencyKey.keepOnResend=1"))) {
      expect(summary.duplicates, summary.contestant).toBe(0);
    }
  });

  it("--profile changes the simulated model's numbers, and refuses what is not one of them", () => {
    const changed = withOverrides(MODEL_PROFILE, "reactions.transient.retry=0.95, slipRate=0");
    expect(changed.reactions.transient.retry).toBe(0.95);
    expect(changed.slipRate).toBe(0);
    expect(MODEL_PROFILE.reactions.transient.retry).toBe(0.75);
    expect(() => withOverrides(MODEL_PROFILE, "reactions.transient=1")).toThrow(
      "--profile: reactions.transient is not a number of the model profile",
    );
    expect(() => withOverrides(MODEL_PROFILE, "reactions.stop.giveUp=1.5")).toThrow('expects a probability in [0, 1], got "1.5"');
    expect(() => withOverrides(MODEL_PROFILE, "maxModelCalls=-1")).toThrow("expects a number >= 0");
  });

  it("reads each contestant's texts by the same generic cues", async () => {
    // retry-reflect's stop text; its key request (it names the argument the call left out); its reflection with valid values.
    expect(
      perceive("The tool 'get_weather' failed 3 times; the last error was: \"503\". Do not call 'get_weather' again for this task."),
    ).toBe("stop");
    const keyText =
      "The tool 'send_email' changes state and needs an idempotency key; none was given. Call the tool again with an `idempotency_key` argument.";
    expect(perceive(keyText, ["idempotency_key"])).toBe("key");
    expect(perceive(keyText, [])).toBe("opaque"); // the call had the key: nothing it can use
    expect(perceive('Invalid option: expected one of "paris"|"london" at city')).toBe("hint");
    // LangChain's own texts: toolRetryMiddleware's exhaustion message says nothing of the error.
    expect(perceive("Tool 'get_weather' failed after 3 attempts with ToolInvocationError")).toBe("opaque");
    expect(perceive("Error: 503 Service Unavailable (injected fault)\n Please fix your mistakes.")).toBe("transient");
    // ADK's guidance is read as text like any other: the 503 in it is what it is about; its words
    // about the schema do not make it an argument error, its "do not repeat" is no stop.
    expect(perceive(await adkText(new Error("503 Service Unavailable")))).toBe("transient");
    expect(perceive(await adkText(new Error('Invalid option: expected one of "paris"|"london"')))).toBe("hint");
    expect(perceive(await adkText(new Error("something odd")))).toBe("arguments");
    expect(perceive("Error: 403 Forbidden (injected fault)")).toBe("permanent");
    // ADK's stop past its limit (without the raise) and retry-reflect's are the same kind of text.
    expect(
      perceive(
        "The tool `get_weather` has failed consecutively 3 times and the retry limit has been exceeded. Do not attempt to use the `get_weather` tool again for this task.",
      ),
    ).toBe("stop");
  });

  it("no perception cue matches the texts of one contestant family only (run over each contestant's actual texts)", {
    timeout: 120_000,
  }, async () => {
    // 3 tasks per cell: each task kind once (the cues match the same families as with 6, measured).
    const texts = await collectFailureTexts(CELLS, ROWS, 3);
    const families = new Map<string, string[]>();
    for (const [name, own] of texts) families.set(familyOf(name), [...(families.get(familyOf(name)) ?? []), ...[...own].map(readable)]);
    // Every family hands the model failure texts in this slice of the grid (else the check would be empty).
    expect([...families.keys()].sort()).toEqual(["ADK-style", "no middleware", "retry-reflect", "toolRetryMiddleware"]);
    for (const family of families.values()) expect(family.length).toBeGreaterThan(0);
    const lonely: string[] = [];
    for (const [feature, cues] of Object.entries(CUES)) {
      for (const cue of cues) {
        const matching = [...families].filter(([, own]) => own.some((text) => cue.test(text))).map(([family]) => family);
        if (matching.length === 1) lonely.push(`${feature} ${cue}: only ${matching[0]}`);
      }
    }
    expect(lonely).toEqual([]);
    // The check can fail: a phrase of one family (retry-reflect's "Analyze what went wrong") is caught.
    const ours = families.get("retry-reflect") ?? [];
    const others = [...families].filter(([family]) => family !== "retry-reflect").flatMap(([, own]) => own);
    expect(ours.some((text) => /analyze what went wrong/i.test(text))).toBe(true);
    expect(others.some((text) => /analyze what went wrong/i.test(text))).toBe(false);
  });

  it("the profile sweep moves every number of the model down and up once, each point a valid --profile, and reports the least favourable", () => {
    const points = sweepPoints(MODEL_PROFILE);
    expect(points[0]?.path).toBe("");
    const paths = new Set(points.slice(1).map((point) => point.path));
    for (const path of [
      "modelLatencyMs",
      "slipRate",
      "proactiveKeyRate",
      "reactions.stop.giveUp",
      "reactions.transient.retry",
      "reactions.idempotencyKey.addWhenAsked",
    ])
      expect(paths, path).toContain(path);
    for (const point of points.slice(1)) {
      expect(point.value, point.path).not.toBe(point.base);
      const profile = withOverrides(MODEL_PROFILE, `${point.path}=${point.value}`);
      const value = point.path.split(".").reduce<unknown>((holder, key) => (holder as Record<string, unknown>)[key], profile);
      expect(value).toBe(point.value);
    }
    // A probability at 0 is also tried at 1 (the model that always passes a key unasked).
    expect(points.filter((point) => point.path === "proactiveKeyRate").map((point) => point.value)).toEqual([0.25, 1]);

    // leadOf: retry-reflect against the best peer (never its own variants), without and with the feature demo.
    const cells = CELLS.filter((cell) => ["baseline", "lost-write-response"].includes(cell.name));
    const peer = "toolRetryMiddleware (careful) + 10 s tool timeout";
    const candidateName = "retry-reflect (attemptTimeoutMs: 10_000)";
    const names = [peer, "retry-reflect", candidateName, "no middleware"];
    const grid: GridOptions = { seed: 1, tasks: 1, trials: 1, cells, contestants: names.map(contestant) };
    const row = (cell: string, name: string, success: number) => ({ ...summarise(cell, name, []), success });
    const summaries = [
      row("baseline", peer, 0.9),
      row("baseline", "retry-reflect", 0.8),
      row("baseline", candidateName, 1),
      row("baseline", "no middleware", 1),
      row("lost-write-response", peer, 0),
      row("lost-write-response", "retry-reflect", 1),
      row("lost-write-response", candidateName, 1),
      row("lost-write-response", "no middleware", 1),
    ];
    // Neither a candidate nor an information row is a peer.
    const base = leadOf(grid, summaries, { path: "", value: 0, base: 0 });
    expect(base).toMatchObject({ ours: 0.8, best: 0.9, bestPeer: peer, oursAll: 0.9, bestAll: 0.45 });
    const worse = leadOf(
      grid,
      summaries.map((entry) => (entry.contestant === "retry-reflect" && entry.cell === "baseline" ? { ...entry, success: 0.5 } : entry)),
      {
        path: "slipRate",
        value: 0.28,
        base: 0.03,
      },
    );
    const summary = sweepSummary({ tasks: 1, trials: 1, seed: 1, seconds: 1, results: [base, worse] });
    expect(summary.min).toBe(worse);
    expect(summary.line).toContain("from -40.0 points (least favourable: slipRate=0.28 (committed 0.03)");
  });

  it("the curves run every intensity of both faults, and plot a line per contestant", () => {
    expect(CURVE_CELLS.map((cell) => cell.name)).toEqual([
      ...INTENSITIES.map((p) => `transient@${p}`),
      ...INTENSITIES.map((p) => `rate-limit@${p}`),
    ]);
    expect(CURVE_CELLS[0]?.faults).toBeUndefined();
    expect(CURVE_CELLS.find((cell) => cell.name === "rate-limit@0.3")?.faults).toEqual({
      get_weather: [{ kind: "rate_limit", probability: 0.3 }],
    });
    const summaries = CURVE_CELLS.flatMap((cell) =>
      ["retry-reflect", "no middleware"].map((name) => ({ ...summarise(cell.name, name, []), success: 0.5 })),
    );
    const svg = renderCurvesSvg(["retry-reflect", "no middleware"], summaries);
    expect(svg.match(/<polyline /g)).toHaveLength(2 * 2 * 2);
    expect(svg).toContain("retry-reflect, rate-limit p = 0.9: 50.0 %");
  });
});
