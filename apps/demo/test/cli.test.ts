import { describe, expect, it } from "vitest";
import { CliError, DEFAULT_OTLP_ENDPOINT, HELP_TEXT, parseArgs, SCENARIO_COUNT } from "../src/cli/parse-args.js";
import { runCli } from "../src/cli/run-cli.js";
import { ALL_SCENARIOS } from "../src/scenarios/all-scenarios.js";

function cli(argv: string[], options: { env?: NodeJS.ProcessEnv; isTTY?: boolean } = {}) {
  const out: string[] = [];
  const err: string[] = [];
  const done = runCli(argv, {
    out: (line) => out.push(line),
    err: (line) => err.push(line),
    env: options.env ?? {},
    isTTY: options.isTTY ?? false,
  });
  return { out, err, done };
}

describe("parseArgs", () => {
  it("reads scenarios as repeated flags or lists, in order", () => {
    expect(parseArgs(["--scenario", "4", "--scenario=1,6"], {}).scenarios).toEqual([4, 1, 6]);
  });

  it("rejects a scenario outside 1-8 and unknown options", () => {
    expect(parseArgs(["--scenario", "8"], {}).scenarios).toEqual([8]);
    expect(() => parseArgs(["--scenario", "9"], {})).toThrow(CliError);
    expect(() => parseArgs(["--scenario", "10"], {})).toThrow('--scenario: expected 1 to 8, got "10"');
    expect(() => parseArgs(["--scenario"], {})).toThrow("--scenario needs a number");
    expect(() => parseArgs(["--verbose"], {})).toThrow('unknown option "--verbose"');
  });

  it("numbers the scenarios 1 to SCENARIO_COUNT, as ALL_SCENARIOS has them, and the help lists each", () => {
    expect(ALL_SCENARIOS.map((scenario) => scenario.id)).toEqual(Array.from({ length: SCENARIO_COUNT }, (_, index) => index + 1));
    for (const scenario of ALL_SCENARIOS) expect(HELP_TEXT).toMatch(new RegExp(`^  ${scenario.id}  \\S`, "m"));
  });

  it("turns tracing on with --jaeger (default endpoint or a URL) or OTEL_EXPORTER_OTLP_ENDPOINT", () => {
    expect(parseArgs([], {}).otlpEndpoint).toBeUndefined();
    expect(parseArgs(["--jaeger"], {}).otlpEndpoint).toBe(DEFAULT_OTLP_ENDPOINT);
    expect(parseArgs(["--jaeger", "--fast"], {}).otlpEndpoint).toBe(DEFAULT_OTLP_ENDPOINT);
    expect(parseArgs(["--jaeger", "http://collector:4318"], {}).otlpEndpoint).toBe("http://collector:4318");
    expect(parseArgs([], { OTEL_EXPORTER_OTLP_ENDPOINT: "http://otel:4318" }).otlpEndpoint).toBe("http://otel:4318");
    expect(() => parseArgs(["--jaeger", "localhost:4318"], {})).toThrow(
      '--jaeger: expected an http(s) URL such as http://localhost:4318, got "localhost:4318"',
    );
  });

  it("accepts only openai:<name> models", () => {
    expect(parseArgs(["--model", "openai:gpt-4o-mini"], {}).model).toBe("openai:gpt-4o-mini");
    expect(() => parseArgs(["--model", "gpt-4o"], {})).toThrow('expected "openai:<model name>"');
  });
});

describe("runCli", () => {
  it("prints the help and exits 0", async () => {
    const run = cli(["--help"]);
    expect(await run.done).toBe(0);
    expect(run.out[0]).toMatch(/^Usage: npm run demo/);
    expect(run.out.join("\n")).toContain("--scenario N");
  });

  it("exits 2 on a usage error, with the reason on stderr", async () => {
    const run = cli(["--scenario", "0"]);
    expect(await run.done).toBe(2);
    expect(run.err).toEqual(['demo: --scenario: expected 1 to 8, got "0"']);
    expect(run.out).toEqual([]);
  });

  it("exits 2 when a real model is asked for without a key or base URL", async () => {
    const run = cli(["--model", "openai:gpt-4o-mini"]);
    expect(await run.done).toBe(2);
    expect(run.err[0]).toContain("OPENAI_API_KEY");
  });

  it("plays one scenario and exits 0, without colours when stdout is not a terminal", async () => {
    const run = cli(["--fast", "--scenario", "5"]);
    expect(await run.done).toBe(0);
    const text = run.out.join("\n");
    expect(text).toContain("Scenario 5 · Not recoverable: QUOTA_EXCEEDED stops at once");
    expect(text).not.toContain("Scenario 1 ·");
    expect(text).toContain("The 1 scenario ended as expected.");
    expect(text).not.toContain("\u001b[");
  });

  it("plays scenario 8 on real time in far less than its 11.5 s of backoff: its waits are simulated, and it says so", async () => {
    const started = performance.now();
    const run = cli(["--scenario", "8"]);
    expect(await run.done).toBe(0);
    expect(performance.now() - started).toBeLessThan(5_000);
    const text = run.out.join("\n");
    expect(text).toContain("Waits: real time.");
    expect(text).toContain("   Its waits are simulated on virtual time, as with --fast (the rest of the demo waits in real time),");
    expect(text).toContain("attempt=5 max=3 backoff_ms=4000");
    expect(text).toContain("(the shipping API came back; attempt 6 answered 11.5 s after the call started:");
    expect(text).toContain("The 1 scenario ended as expected.");
    // With --fast the whole demo is on virtual time: no note of its own.
    const fast = cli(["--fast", "--scenario", "8"]);
    expect(await fast.done).toBe(0);
    expect(fast.out.join("\n")).not.toContain("Its waits are simulated");
  });

  it("uses colours on a terminal unless NO_COLOR is set", async () => {
    const colored = cli(["--fast", "--scenario", "5"], { isTTY: true });
    await colored.done;
    expect(colored.out.join("\n")).toContain("\u001b[");
    const plain = cli(["--fast", "--scenario", "5"], { isTTY: true, env: { NO_COLOR: "1" } });
    await plain.done;
    expect(plain.out.join("\n")).not.toContain("\u001b[");
  });
});
