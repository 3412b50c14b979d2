import { createServer } from "node:net";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { runCli } from "../src/cli/run-cli.js";
import { type OtlpReceiver, type ReceivedSpan, startOtlpReceiver } from "./otlp-receiver.js";

function cli(argv: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const done = runCli(argv, { out: (line) => out.push(line), err: (line) => err.push(line), env: {}, isTTY: false });
  return { out, err, done };
}

describe("traces exported with OTLP/HTTP to a loopback receiver", () => {
  let receiver: OtlpReceiver;
  let out: string[];
  let code: number;
  const named = (prefix: string): ReceivedSpan[] => receiver.spans.filter((span) => span.name.startsWith(prefix));

  beforeAll(async () => {
    receiver = await startOtlpReceiver();
    const run = cli(["--fast", "--scenario", "1,3,6,7,8", "--jaeger", receiver.endpoint]);
    code = await run.done;
    out = run.out;
  });
  afterAll(() => receiver.close());

  it("exports an execute_tool span per logical call, under the agent run, under a root span per scenario, then prints the Jaeger link", () => {
    expect(code).toBe(0);
    expect(receiver.requests.contentTypes.every((type) => type.startsWith("application/json"))).toBe(true);
    expect(receiver.spans.every((span) => span.serviceName === "retry-reflect-demo")).toBe(true);
    const [root] = named("scenario 1:");
    expect(root?.parentSpanId).toBeUndefined();
    const runs = named("invoke_agent").filter((span) => span.parentSpanId === root?.spanId);
    expect(runs).toHaveLength(1);
    const weather = named("execute_tool get_weather");
    expect(weather).toHaveLength(2);
    for (const span of weather) {
      expect(span.parentSpanId).toBe(runs[0]?.spanId);
      expect(span.traceId).toBe(root?.traceId);
      expect(span.attributes["gen_ai.operation.name"]).toBe("execute_tool");
    }
    // Scenario 3: four agent runs under its root span.
    const root3 = named("scenario 3:")[0];
    expect(named("invoke_agent").filter((span) => span.parentSpanId === root3?.spanId)).toHaveLength(4);
    expect(out.at(-1)).toMatch(
      /^Traces: \d+ spans? exported\. Open Jaeger: http:\/\/127\.0\.0\.1:16686\/search\?service=retry-reflect-demo$/,
    );
  });

  it("carries the plugin's decisions as span events with their fields", () => {
    const [reflected, corrected] = named("execute_tool get_weather");
    expect(reflected?.attributes["retry_reflect.outcome"]).toBe("reflect");
    expect(reflected?.events).toEqual([
      {
        name: "tool call failed, retrying",
        attributes: expect.objectContaining({
          "retry_reflect.attempt": 1,
          "retry_reflect.backoff_ms": 500,
          "retry_reflect.error": "Invalid units. Supported: celsius, fahrenheit",
          "retry_reflect.mode": "reflect",
        }),
      },
    ]);
    // The corrected call's span says why it lasts longer than its tool's run: it waited out the backoff.
    expect(corrected?.events.map((event) => event.name)).toEqual(["waiting before retry", "retry succeeded"]);
    expect(corrected?.events[0]?.attributes["retry_reflect.wait_ms"]).toBeGreaterThan(0);
    expect(corrected?.attributes["retry_reflect.outcome"]).toBe("success");
  });

  it("shows the breaker's life in scenario 3's spans", () => {
    const spans = named("execute_tool broken_api");
    expect(spans).toHaveLength(4);
    const events = spans.flatMap((span) => span.events.map((event) => event.name));
    expect(events.filter((name) => name === "circuit breaker opened")).toHaveLength(1);
    expect(events.filter((name) => name === "call rejected, circuit open")).toHaveLength(1);
    // The call turned away ends as temporary (reflect), not as a stop.
    const rejected = spans.find((span) => span.events.some((event) => event.name === "call rejected, circuit open"));
    expect(rejected?.attributes["retry_reflect.outcome"]).toBe("reflect");
    // The last call waits for the probe, is the probe, and closes the circuit: all on its span, in order.
    const probe = spans.at(-1);
    expect(probe?.events.map((event) => event.name)).toEqual([
      "waiting for recovery",
      "circuit breaker half-open",
      "circuit breaker closed",
    ]);
    expect(probe?.events[0]?.attributes).toMatchObject({ "retry_reflect.wait_ms": 500 });
    expect(probe?.attributes["retry_reflect.outcome"]).toBe("success");
    expect(events.filter((name) => name === "circuit breaker half-open")).toHaveLength(1);
  });

  it("opens no span for the excluded exit_loop", () => {
    expect(named("execute_tool api_call")).toHaveLength(1);
    expect(named("execute_tool exit_loop")).toHaveLength(0);
  });

  it("puts scenario 7's timed-out attempt and its retry in place on the one generate_report span", () => {
    const spans = named("execute_tool generate_report");
    expect(spans).toHaveLength(1);
    expect(spans[0]?.events.map((event) => event.name)).toEqual(["attempt timed out", "tool call failed, retrying", "retry succeeded"]);
    expect(spans[0]?.events[0]?.attributes).toMatchObject({ "retry_reflect.attempt": 1, "retry_reflect.timeout_ms": 1000 });
    expect(spans[0]?.attributes["retry_reflect.outcome"]).toBe("success");
  });

  it("puts scenario 8's outage, its five retries in place and the success, on the one track_order span", () => {
    const spans = named("execute_tool track_order");
    expect(spans).toHaveLength(1);
    expect(spans[0]?.events.map((event) => event.name)).toEqual([...Array(5).fill("tool call failed, retrying"), "retry succeeded"]);
    expect(spans[0]?.events.slice(0, 5).map((event) => event.attributes["retry_reflect.backoff_ms"])).toEqual([
      500, 1000, 2000, 4000, 4000,
    ]);
    expect(spans[0]?.attributes["retry_reflect.outcome"]).toBe("success");
  });
});

describe("tracing without a collector", () => {
  it("neither hangs nor prints export errors", async () => {
    // A port that was just free: nothing listens there.
    const port = await new Promise<number>((resolve) => {
      const server = createServer();
      server.listen(0, "127.0.0.1", () => {
        const address = server.address();
        server.close(() => resolve(typeof address === "object" && address ? address.port : 1));
      });
    });
    const stderr = vi.spyOn(process.stderr, "write");
    const consoleError = vi.spyOn(console, "error");
    const consoleWarn = vi.spyOn(console, "warn");
    try {
      const run = cli(["--fast", "--scenario", "5", "--jaeger", `http://127.0.0.1:${port}`]);
      const code = await run.done;
      expect(code).toBe(0);
      expect(run.err).toEqual([]);
      expect(stderr).not.toHaveBeenCalled();
      expect(consoleError).not.toHaveBeenCalled();
      expect(consoleWarn).not.toHaveBeenCalled();
      expect(run.out.at(-1)).toBe(
        `Traces: no collector answered at http://127.0.0.1:${port}/v1/traces; spans were dropped. Start Jaeger (see apps/demo/README.md).`,
      );
    } finally {
      stderr.mockRestore();
      consoleError.mockRestore();
      consoleWarn.mockRestore();
    }
  });
});
