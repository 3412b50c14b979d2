import { describe, expect, it } from "vitest";
import { parseArgs } from "../src/cli/parse-args.js";
import { runCli } from "../src/cli/run-cli.js";
import { createStyle } from "../src/output/style.js";
import { aiSdkEngine } from "../src/runner/ai-sdk-engine.js";
import { mastraEngine } from "../src/runner/mastra-engine.js";
import { mcpEngine } from "../src/runner/mcp-engine.js";
import { openAiAgentsEngine } from "../src/runner/openai-agents-engine.js";
import { runDemo } from "../src/runner/run-demo.js";
import type { TurnEngine } from "../src/runner/turn-engine.js";
import { createVirtualClock } from "../src/runner/virtual-clock.js";

function cli(argv: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const done = runCli(argv, { out: (line) => out.push(line), err: (line) => err.push(line), env: {}, isTTY: false });
  return { out, err, done };
}

async function cliRun(argv: string[]) {
  const run = cli(argv);
  return { ...run, code: await run.done };
}

/** The default run (LangChain's middleware), once: what each adapter's run is compared with. */
const langchainRun = cliRun(["--fast"]);

/** The transcript's dialogue and log lines: the user, the model, the tools, the plugin (not the narrator's notes, not the headers). */
function dialogue(lines: readonly string[]): string[] {
  return lines.filter((line) => /^\[(User|Model|Tool Success|Tool Error|Plugin injects)\]|^ {4}(WARN|INFO) /.test(line));
}

/** The summary table's rows, one per scenario. */
function summaryRows(lines: readonly string[]): string[] {
  return lines.filter((line) => /^\d+ {2}\S/.test(line));
}

/** The reference transcript's lines, in order (the same as through LangChain). */
const EXPECTED_LINES = [
  "[User]: What's the weather in NYC?",
  '[Model]: *calls get_weather({"city":"nyc","units":"kelvin"})*',
  "[Tool Error]: Invalid units. Supported: celsius, fahrenheit",
  '    WARN retry_reflect: tool call failed, retrying tool_name=get_weather attempt=1 max=3 backoff_ms=500 error="Invalid units. Supported: celsius, fahrenheit" error_code=INVALID_ARGUMENTS mode=reflect',
  "[Plugin injects]: The tool 'get_weather' failed with: \"Invalid units. Supported: celsius, fahrenheit\". Analyze what went wrong and provide corrected arguments.",
  '[Model]: *calls get_weather({"city":"NYC","units":"celsius"})*',
  "    INFO retry_reflect: retry succeeded tool_name=get_weather attempt=2",
  '[Tool Success]: {"temperature":22,"condition":"sunny"}',
  "[Model]: It is 22 °C and sunny in New York City.",
];

const adapters: [string, TurnEngine][] = [
  ["ai-sdk", aiSdkEngine],
  ["mcp", mcpEngine],
  ["openai-agents", openAiAgentsEngine],
  ["mastra", mastraEngine],
];

describe.each(adapters)("--adapter %s", (adapter, engine) => {
  it("plays scenario 1 through the adapter: 1 reflection, 2 tool executions, the answer", async () => {
    const lines: string[] = [];
    const clock = createVirtualClock();
    const result = await runDemo({ sink: (line) => lines.push(line), style: createStyle(false), scenarioIds: [1], clock, engine });
    expect(result.ok).toBe(true);
    const [scenario] = result.results;
    expect(scenario?.stats.reflections).toBe(1);
    expect(scenario?.stats.toolExecutions).toBe(2);
    expect(scenario?.stats.modelCalls).toBe(3);
    expect(scenario?.stats.finalAnswer).toBe("It is 22 °C and sunny in New York City.");
    expect(clock.sleeps).toEqual([500]);
    const positions = EXPECTED_LINES.map((line) => lines.indexOf(line));
    expect(positions.every((position) => position >= 0)).toBe(true);
    expect([...positions].sort((a, b) => a - b)).toEqual(positions);
  });

  it("plays the eight offline scenarios from the CLI as LangChain does: the same dialogue, log lines and summary", async () => {
    const [reference, run] = await Promise.all([langchainRun, cliRun(["--adapter", adapter, "--fast"])]);
    expect(run.code).toBe(0);
    expect(run.err).toEqual([]);
    expect(run.out.at(-1)).toBe("All 8 scenarios ended as expected.");
    expect(run.out.join("\n")).toContain(`(--adapter ${adapter})`);
    expect(run.out.join("\n")).toContain("Scenario 8 · Outage: a tool is down for 10 s, comes back, and the agent finishes");
    expect(run.out.join("\n")).not.toContain("Scenario 9"); // LangChain's replicas only
    // What the user, the model and the tools say, and the plugin's log lines, line for line.
    expect(dialogue(run.out)).toEqual(dialogue(reference.out));
    expect(dialogue(run.out).length).toBeGreaterThan(60);
    expect(summaryRows(run.out)).toEqual(summaryRows(reference.out));
    expect(summaryRows(run.out)).toHaveLength(8);
    // The outage scenario through this adapter: 5 retries in place within the patience, then the answer.
    expect(summaryRows(run.out).at(-1)).toMatch(/^8 {2}10 s outage +6 +2 +5 +0 +0 +0 +0 +✓ /);
  });

  it("plays a scenario chosen with --scenario", async () => {
    const run = await cliRun(["--adapter", adapter, "--fast", "--scenario", "4"]);
    expect(run.code).toBe(0);
    expect(summaryRows(run.out)).toEqual([
      "4  lost email response  2           4            1         0            0          0                    2           ✓ 1 email sent, 2 duplicates prevented",
    ]);
    expect(run.out.at(-1)).toBe("The 1 scenario ended as expected.");
  });
});

describe("--adapter usage", () => {
  it("defaults to langchain and accepts the five values", () => {
    expect(parseArgs([], {}).adapter).toBe("langchain");
    expect(parseArgs(["--adapter", "mcp"], {}).adapter).toBe("mcp");
    expect(parseArgs(["--adapter=ai-sdk"], {}).adapter).toBe("ai-sdk");
    expect(parseArgs(["--adapter", "openai-agents"], {}).adapter).toBe("openai-agents");
    expect(parseArgs(["--adapter=mastra", "--scenario", "1"], {})).toMatchObject({ adapter: "mastra", scenarios: [1] });
    expect(parseArgs(["--adapter", "langchain", "--scenario", "3"], {}).scenarios).toEqual([3]);
  });

  it("exits 2 for an invalid value, naming the option and the value", async () => {
    const run = cli(["--adapter", "openai"]);
    expect(await run.done).toBe(2);
    expect(run.err).toEqual(['demo: --adapter: expected "ai-sdk", "mcp", "openai-agents", "mastra" or "langchain", got "openai"']);
    expect(run.out).toEqual([]);
    expect(() => parseArgs(["--adapter"], {})).toThrow(
      '--adapter needs a value: "ai-sdk", "mcp", "openai-agents", "mastra" or "langchain"',
    );
  });

  it("exits 2 for scenario 9, --engine or --model with an adapter other than langchain", async () => {
    const scenario = cli(["--adapter", "mcp", "--scenario", "9"]);
    expect(await scenario.done).toBe(2);
    expect(scenario.err).toEqual([
      "demo: --scenario 9: two replicas share one Redis, so it needs REDIS_URL (e.g. REDIS_URL=redis://localhost:6379; start one with docker compose -f packages/redis/compose.yaml up -d, or redis-server)",
    ]);
    expect(() => parseArgs(["--adapter", "openai-agents", "--scenario", "9"], { REDIS_URL: "redis://127.0.0.1:6379" })).toThrow(
      "--scenario 9: --adapter openai-agents plays scenarios 1-8; scenario 9 (two replicas share one Redis) needs --adapter langchain",
    );
    expect(parseArgs(["--adapter", "mastra", "--scenario", "3,8"], {}).scenarios).toEqual([3, 8]);
    expect(() => parseArgs(["--adapter", "ai-sdk", "--engine", "core"], {})).toThrow("--engine core: only with --adapter langchain");
    expect(() => parseArgs(["--adapter", "ai-sdk", "--model", "openai:gpt-4o-mini"], {})).toThrow("--model: only with --adapter langchain");
    expect(() => parseArgs(["--adapter", "mastra", "--engine", "agent"], {})).toThrow("--engine agent: only with --adapter langchain");
    expect(() => parseArgs(["--adapter", "mastra", "--model", "openai:gpt-4o-mini"], {})).toThrow(
      "--model: only with --adapter langchain (--adapter mastra plays the scripted model)",
    );
  });

  it("documents the option in --help", async () => {
    const run = cli(["--help"]);
    expect(await run.done).toBe(0);
    const help = run.out.join("\n");
    expect(help).toMatch(/--adapter A\s+the adapter the tool calls go through: langchain \(default/);
    for (const adapter of ["ai-sdk", "mcp", "openai-agents", "mastra"]) expect(help).toMatch(new RegExp(`\\b${adapter}\\s+\\(`));
  });
});
