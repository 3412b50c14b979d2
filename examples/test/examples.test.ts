// Runs every example as a reader would (`node examples/<host>/main.mjs` from the repository root,
// on the built packages), offline, and checks its exit code and the lines its README shows. How long
// each takes is measured apart (a timed test fails on a busy machine, not on a slow example):
// `node examples/time-all.mjs`. OpenTelemetry exports to a loopback OTLP/HTTP receiver; Redis runs on a
// redis-server started on a free loopback port (skipped without one, except with CI=true).
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { startOtlpReceiver } from "../../apps/demo/test/otlp-receiver.js";
import { startRedis } from "../../packages/redis/test/helpers/redis-server.js";

const root = fileURLToPath(new URL("../../", import.meta.url));
// The examples run side by side (two at a time: the project's maxConcurrency in vitest.config.ts), except the OpenTelemetry
// ones (see there): each is its own process, and most of an example's time is spent waiting
// (backoffs, timeouts, servers), not on a core: one after the other they took ~17 s, ~5 s of it CPU.
/** A hung example is killed here, before the test's own 20 s timeout, so that its output is shown. */
const HANG_MS = 19_000;

interface Run {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  /** stdout and stderr, interleaved as they arrived. */
  readonly output: string;
  readonly ms: number;
}

/** `node examples/<host>/main.mjs` from the repository root, killed if it hangs. */
function runExample(host: string, env: Record<string, string> = {}): Promise<Run> {
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [`examples/${host}/main.mjs`], {
      cwd: root,
      env: { ...process.env, NO_COLOR: "1", ...env },
      stdio: ["ignore", "pipe", "pipe"],
      timeout: HANG_MS,
    });
    let output = "";
    child.stdout.on("data", (chunk: Buffer) => {
      output += chunk.toString("utf8");
    });
    child.stderr.on("data", (chunk: Buffer) => {
      output += chunk.toString("utf8");
    });
    child.on("error", reject);
    child.on("close", (code, signal) => resolve({ code, signal, output, ms: Date.now() - started }));
  });
}

function expectFinished(run: Run): void {
  expect(run.signal, `killed after ${run.ms} ms:\n${run.output}`).toBeNull();
  expect(run.code, run.output).toBe(0);
}

const REFLECTION =
  "The tool 'get_weather' failed with: \"Invalid units. Supported: celsius, fahrenheit\". Analyze what went wrong and provide corrected arguments.";
const FINAL = "final answer: Retries are in chapter 3, and it is 22 °C and sunny in NYC.";
const FLAKY = "search_docs ran 2 times (a 503, then success); the model saw only the result";

describe.concurrent.each(["langchain", "ai-sdk", "openai-agents", "mastra"])("examples/%s", (host) => {
  it("retries the 503 in place, reflects the bad units, and the model answers", async () => {
    // The LangChain example prints the decisions with DEBUG=retry-reflect; the others with consoleLogger().
    const run = await runExample(host, host === "langchain" ? { DEBUG: "retry-reflect" } : {});
    expectFinished(run);
    expect(run.output).toContain("WARN retry_reflect: tool call failed, retrying tool_name=search_docs attempt=1 max=3");
    expect(run.output).toContain("error_code=TRANSIENT mode=in_place");
    expect(run.output).toContain("INFO retry_reflect: retry succeeded tool_name=search_docs attempt=2");
    expect(run.output).toContain(`] ${REFLECTION}`);
    expect(run.output).toContain('{"error_code":"INVALID_ARGUMENTS"');
    expect(run.output).toContain("INFO retry_reflect: retry succeeded tool_name=get_weather attempt=2");
    expect(run.output).toContain(FLAKY);
    expect(run.output).toContain(FINAL);
  });
});

describe.concurrent("examples/langchain without DEBUG", () => {
  it("prints only its own lines: no decision is logged unless asked for", async () => {
    const run = await runExample("langchain", { DEBUG: "" });
    expectFinished(run);
    expect(run.output).toContain(FINAL);
    expect(run.output).not.toContain("retry_reflect:");
  });
});

describe.concurrent("examples/mcp-client", () => {
  it("retries the server's 503 in place and reflects its input validation error", async () => {
    const run = await runExample("mcp-client");
    expectFinished(run);
    expect(run.output).toContain('search_docs -> Doc: "retries" is covered in chapter 3.');
    expect(run.output).toContain(FLAKY);
    expect(run.output).toContain("get_weather (units: kelvin) -> isError: true, the model reads:");
    expect(run.output).toContain("The tool 'get_weather' failed with: \"Input validation error: Invalid arguments for tool get_weather");
    expect(run.output).toContain("structured error: INVALID_ARGUMENTS, recoverable: true");
    expect(run.output).toContain("get_weather (units: celsius) -> 22 degrees celsius, sunny in NYC");
  });
});

describe.concurrent("examples/mcp-server", () => {
  it("answers the write retried after a lost response from its store: one email", async () => {
    const run = await runExample("mcp-server");
    expectFinished(run);
    expect(run.output).toMatch(/MCP server on http:\/\/127\.0\.0\.1:\d+\/mcp/);
    expect(run.output).toContain("[client] WARN retry_reflect: tool call failed, retrying tool_name=send_email attempt=1");
    expect(run.output).toContain("[server] INFO retry_reflect: idempotent replay tool_name=send_email");
    expect(run.output).toContain("send_email -> sent to ana@example.com (email #1) (replayed from the store: true)");
    expect(run.output).toContain("emails actually sent: 1");
  });
});

const redis = await startRedis();
afterAll(() => redis?.stop());

describe.skipIf(!redis).concurrent("examples/redis", () => {
  it("runs a write redelivered to the other replica once, and the circuit one replica opened turns the other's call away", async () => {
    const run = await runExample("redis", { REDIS_URL: redis?.url ?? "" });
    expectFinished(run);
    expect(run.output).toContain("[replica B] INFO retry_reflect: idempotent replay tool_name=send_email");
    expect(run.output).toContain("replica A: success; replica B: success, replayed: true; emails sent: 1");
    expect(run.output).toContain("[replica A] WARN retry_reflect: circuit breaker opened tool_name=inventory_api failures=3");
    expect(run.output).toContain("[replica B] WARN retry_reflect: call rejected, circuit open tool_name=inventory_api");
    expect(run.output).toContain("inventory_api ran 3 times on replica A, 0 times on replica B");
    expect(run.output).toContain("replica B: reflect, circuit open: The tool 'inventory_api' is temporarily unavailable");
  });
});

// After the others, not beside them: "no collector answers" needs its closed port to stay closed,
// and an example's or a receiver's server listening on port 0 meanwhile could be given it.
describe("examples/otel", () => {
  it("exports the tool calls' spans, with their retry events, to the OTLP/HTTP endpoint", async () => {
    const receiver = await startOtlpReceiver();
    try {
      const run = await runExample("otel", { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint, OTEL_SERVICE_NAME: "examples-test" });
      expectFinished(run);
      expect(run.output).toContain("search_docs: success after 2 attempts");
      expect(run.output).toContain(`get_weather (kelvin): reflect: ${REFLECTION}`);
      expect(run.output).toContain("get_weather (celsius): success on attempt 2");
      expect(run.output).toContain(`exported the spans to ${receiver.endpoint}/v1/traces`);

      const names = receiver.spans.map((span) => span.name).sort();
      expect(names).toEqual([
        "execute_tool get_weather",
        "execute_tool get_weather",
        "execute_tool search_docs",
        "invoke_agent weather-agent",
      ]);
      expect(new Set(receiver.spans.map((span) => span.serviceName))).toEqual(new Set(["examples-test"]));
      const parent = receiver.spans.find((span) => span.name === "invoke_agent weather-agent");
      const search = receiver.spans.find((span) => span.name === "execute_tool search_docs");
      expect(search?.parentSpanId).toBe(parent?.spanId);
      expect(search?.attributes["retry_reflect.attempts"]).toBe(2);
      expect(search?.events.map((event) => event.name)).toEqual(["tool call failed, retrying", "retry succeeded"]);
    } finally {
      await receiver.close();
    }
  });

  it("finishes, and says so, when no collector answers", async () => {
    const receiver = await startOtlpReceiver();
    const endpoint = receiver.endpoint;
    await receiver.close(); // its port is closed now: nothing answers there
    const run = await runExample("otel", { OTEL_EXPORTER_OTLP_ENDPOINT: endpoint });
    expectFinished(run);
    expect(run.output).toContain(`no collector answered at ${endpoint}/v1/traces`);
  });
});
