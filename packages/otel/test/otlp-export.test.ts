import { createHash } from "node:crypto";
import { context, trace } from "@opentelemetry/api";
import { OTLPTraceExporter as OTLPJsonTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { OTLPTraceExporter as OTLPProtoTraceExporter } from "@opentelemetry/exporter-trace-otlp-proto";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { BasicTracerProvider, SimpleSpanProcessor, type SpanExporter } from "@opentelemetry/sdk-trace-base";
import { RetryReflectPlugin, ToolError } from "@retry-reflect/core";
import { createFakeClock } from "@retry-reflect/core/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type OpenTelemetryObserverOptions, openTelemetryObserver } from "../src/index.js";
import { type JaegerSpan, toJaegerSpan } from "./helpers/jaeger-view.js";
import { decodeJsonTraces, decodeProtobufTraces, type ReceivedSpan } from "./helpers/otlp-decode.js";
import { startOtlpReceiver } from "./helpers/otlp-receiver.js";
import { createTelemetry, installContextManager } from "./helpers/telemetry-harness.js";

// End to end over the wire: the real plugin, the real SDK, the real OTLP/HTTP exporters, and a
// loopback receiver standing where Jaeger's :4318 would be.

const IDEMPOTENCY_KEY = "idem-4c1d-SECRET-key-77";
const INVALID_UNITS = "Invalid units. Supported: celsius, fahrenheit";

let receiver: Awaited<ReturnType<typeof startOtlpReceiver>>;
beforeAll(async () => {
  installContextManager();
  receiver = await startOtlpReceiver();
});
afterAll(() => receiver.close());

/** Runs the seed's scenarios through the plugin and exports them; returns what went over the wire. */
async function exportScenario(exporter: SpanExporter, options: OpenTelemetryObserverOptions = {}) {
  const firstRequest = receiver.requests.length;
  const local = createTelemetry(); // in-memory metrics and logs, scanned for the key too
  const tracerProvider = new BasicTracerProvider({
    resource: resourceFromAttributes({ "service.name": "weather-agent" }),
    spanProcessors: [new SimpleSpanProcessor(exporter)],
  });
  const clock = createFakeClock();
  const plugin = RetryReflectPlugin.builder()
    .maxRetries(3)
    .circuitBreakerResetMs(60_000) // open for 60 s (the default is 1 s), so run-3 is turned away and run-4 waits
    .toolEffects({ send_email: "write" })
    .clock(clock)
    .observer(
      openTelemetryObserver({ tracerProvider, meterProvider: local.meterProvider, loggerProvider: local.loggerProvider, ...options }),
    )
    .build();
  const http = tracerProvider.getTracer("http-client");
  const agent = tracerProvider.getTracer("agent").startSpan("invoke_agent weather-agent");

  await context.with(trace.setSpan(context.active(), agent), async () => {
    // The weather case: a reflection, then the corrected call after the 500 ms gate.
    const getWeather = async (args: { city: string; units: string }) => {
      const request = http.startSpan("GET /v1/current");
      request.end();
      if (args.units === "kelvin") throw new ToolError({ code: "INVALID_ARGUMENTS", message: INVALID_UNITS, recoverable: true });
      return { temperature: 21 };
    };
    await plugin.execute({ toolName: "get_weather", args: { city: "nyc", units: "kelvin" }, callId: "call_1", scope: "run-1" }, getWeather);
    const corrected = plugin.execute(
      { toolName: "get_weather", args: { city: "nyc", units: "celsius" }, callId: "call_2", scope: "run-1" },
      getWeather,
    );
    await clock.advance(500);
    await corrected;

    // A broken tool, under the default patience (15 s), give-up time (20 s) and breaker threshold
    // (10 failures), the circuit open 60 s. run-1's call is retried in place for its patience and told the tool is
    // temporarily unavailable; its next call, held at the gate for the wait it was told, fails until
    // the tool has failed for 20 s: the definitive stop. The 10th failure (run-2) opens the breaker;
    // run-3's call is turned away at once. The service is back 50 s later; run-4's call, 10 s
    // before the probe, waits for recovery, is the probe, and succeeds.
    let apiBack = false;
    const api = () => {
      if (apiBack) return { ok: true };
      throw new ToolError({ code: "TRANSIENT", message: "upstream 503", recoverable: true });
    };
    for (const [callId, scope] of [
      ["call_3", "run-1"],
      ["call_4", "run-1"],
      ["call_5", "run-2"],
      ["call_6", "run-3"],
    ] as const) {
      const pending = plugin.execute({ toolName: "api_call", args: {}, callId, scope }, api);
      await clock.runAll();
      await pending;
    }
    await clock.advance(50_000);
    apiBack = true;
    const recovered = plugin.execute({ toolName: "api_call", args: {}, callId: "call_7", scope: "run-4" }, api);
    await clock.runAll();
    await recovered;

    // A write replayed by its idempotency key.
    const email = { to: "ada@example.com", subject: "forecast", idempotency_key: IDEMPOTENCY_KEY };
    const send = (_args: unknown, toolContext: { idempotencyKey?: string }) => ({ accepted: toolContext.idempotencyKey !== undefined });
    await plugin.execute({ toolName: "send_email", args: email, callId: "call_8", scope: "run-1" }, send);
    await plugin.execute({ toolName: "send_email", args: email, callId: "call_9", scope: "run-1" }, send);
  });
  agent.end();
  await tracerProvider.forceFlush();
  await tracerProvider.shutdown();

  const requests = receiver.requests.slice(firstRequest);
  const localBytes = JSON.stringify({
    metrics: [...(await local.metrics()).values()],
    logs: local.logExporter.getFinishedLogRecords().map((record) => ({ body: record.body, attributes: record.attributes })),
  });
  await local.shutdown();
  return { requests, localBytes };
}

function byCallId(spans: JaegerSpan[], callId: string): JaegerSpan {
  const found = spans.find((span) => span.tags["gen_ai.tool.call.id"] === callId);
  if (!found) throw new Error(`no span for ${callId}`);
  return found;
}

/** What a user sees in Jaeger for the scenario, the same whichever encoding carried it. */
function expectJaegerView(received: ReceivedSpan[]) {
  const spans = received.map(toJaegerSpan);
  expect(new Set(spans.map((span) => span.serviceName))).toEqual(new Set(["weather-agent"]));
  const toolSpans = spans.filter((span) => span.tags["gen_ai.operation.name"] === "execute_tool");
  expect(toolSpans.map((span) => span.operationName)).toEqual([
    "execute_tool get_weather",
    "execute_tool get_weather",
    "execute_tool api_call",
    "execute_tool api_call",
    "execute_tool api_call",
    "execute_tool api_call",
    "execute_tool api_call",
    "execute_tool send_email",
    "execute_tool send_email",
  ]);
  expect(received.filter((span) => span.scopeName === "@retry-reflect/otel").every((span) => span.kind === 1)).toBe(true);

  // One trace: the agent span, the tool spans under it, the HTTP spans under the tool spans.
  const agent = spans.find((span) => span.operationName === "invoke_agent weather-agent")!;
  expect(new Set(spans.map((span) => span.traceId))).toEqual(new Set([agent.traceId]));
  for (const tool of toolSpans) expect(tool.parentSpanId).toBe(agent.spanId);
  const weather1 = byCallId(spans, "call_1");
  const weather2 = byCallId(spans, "call_2");
  const httpParents = spans.filter((span) => span.operationName === "GET /v1/current").map((span) => span.parentSpanId);
  expect(httpParents).toEqual([weather1.spanId, weather2.spanId]);

  // The weather case, as Jaeger's span logs.
  expect(weather1.logs).toEqual([
    {
      event: "tool call failed, retrying",
      "gen_ai.tool.name": "get_weather",
      "retry_reflect.attempt": 1,
      "retry_reflect.max": 3,
      "retry_reflect.backoff_ms": 500,
      "retry_reflect.error": INVALID_UNITS,
      "retry_reflect.error_code": "INVALID_ARGUMENTS",
      "retry_reflect.mode": "reflect",
    },
  ]);
  expect(weather1.tags).toMatchObject({
    "gen_ai.tool.name": "get_weather",
    "retry_reflect.outcome": "reflect",
    "retry_reflect.attempt": 1,
    "otel.scope.name": "@retry-reflect/otel",
  });
  expect(weather1.tags.error).toBeUndefined();
  expect(weather2.logs).toEqual([
    { event: "waiting before retry", "gen_ai.tool.name": "get_weather", "retry_reflect.wait_ms": 500 },
    { event: "retry succeeded", "gen_ai.tool.name": "get_weather", "retry_reflect.attempt": 2 },
  ]);
  expect(weather2.tags).toMatchObject({
    "retry_reflect.outcome": "success",
    "retry_reflect.attempt": 2,
    "retry_reflect.circuit.state": "closed",
  });
  expect(weather2.tags.error).toBeUndefined();
  expect(weather2.tags["otel.status_code"]).toBeUndefined();

  // The broken tool. run-1's first call: retried in place within its patience (0.5, 1, 2, 4, 4 s
  // apart), then told the tool is temporarily unavailable: a reflection, not an error.
  const failed = (attempt: number, backoff: number, mode: string) => ({
    event: "tool call failed, retrying",
    "gen_ai.tool.name": "api_call",
    "retry_reflect.attempt": attempt,
    "retry_reflect.max": 3,
    "retry_reflect.backoff_ms": backoff,
    "retry_reflect.error": "upstream 503",
    "retry_reflect.error_code": "TRANSIENT",
    "retry_reflect.mode": mode,
  });
  const temporary = byCallId(spans, "call_3");
  expect(temporary.logs).toEqual([
    failed(1, 500, "in_place"),
    failed(2, 1000, "in_place"),
    failed(3, 2000, "in_place"),
    failed(4, 4000, "in_place"),
    failed(5, 4000, "in_place"),
    failed(6, 4000, "reflect"),
  ]);
  expect(temporary.tags).toMatchObject({
    "retry_reflect.outcome": "reflect",
    "retry_reflect.attempts": 6,
    "retry_reflect.error_code": "TRANSIENT",
  });
  expect(temporary.tags.error).toBeUndefined();
  expect(temporary.tags["otel.status_code"]).toBeUndefined();
  // Its next call waits at the gate for the 4 s it was told, and fails until the tool has failed
  // for the give-up time (20 s): the definitive stop, the span's error.
  const exhausted = byCallId(spans, "call_4");
  expect(exhausted.logs).toEqual([
    { event: "waiting before retry", "gen_ai.tool.name": "api_call", "retry_reflect.wait_ms": 4000 },
    failed(7, 4000, "in_place"),
    failed(8, 4000, "in_place"),
    {
      event: "retries exhausted",
      "gen_ai.tool.name": "api_call",
      "retry_reflect.attempts": 9,
      "retry_reflect.error": "upstream 503",
      "retry_reflect.retry_after_ms": 60_000,
    },
  ]);
  expect(exhausted.tags).toMatchObject({
    error: true,
    "otel.status_code": "ERROR",
    "error.type": "RETRIES_EXHAUSTED",
    "retry_reflect.outcome": "failed",
    "retry_reflect.failure.reason": "exhausted",
    "retry_reflect.attempts": 3,
  });
  // The 10th failure in a row (run-2) opens the breaker for 60 s, beyond the call's patience: temporary at once.
  const opened = byCallId(spans, "call_5");
  expect(opened.logs).toEqual([
    { event: "circuit breaker opened", "gen_ai.tool.name": "api_call", "retry_reflect.failures": 10, "retry_reflect.reset_ms": 60_000 },
    failed(1, 60_000, "reflect"),
  ]);
  expect(opened.tags).toMatchObject({ "retry_reflect.outcome": "reflect", "retry_reflect.circuit.state": "open" });
  // run-3's call is turned away without running, told when to call again: a reflection too.
  const rejected = byCallId(spans, "call_6");
  expect(rejected.logs).toEqual([
    { event: "call rejected, circuit open", "gen_ai.tool.name": "api_call", "retry_reflect.retry_after_ms": 60_000 },
  ]);
  expect(rejected.tags).toMatchObject({
    "retry_reflect.outcome": "reflect",
    "retry_reflect.error_code": "CIRCUIT_OPEN",
    "retry_reflect.attempts": 0,
    "retry_reflect.circuit.state": "open",
  });
  for (const span of [opened, rejected]) {
    expect(span.tags.error).toBeUndefined();
    expect(span.tags["error.type"]).toBeUndefined();
  }
  // 10 s before the probe, run-4's call waits for recovery, is the probe, and the tool is back.
  const recovered = byCallId(spans, "call_7");
  expect(recovered.logs).toEqual([
    { event: "waiting for recovery", "gen_ai.tool.name": "api_call", "retry_reflect.wait_ms": 10_000 },
    { event: "circuit breaker half-open", "gen_ai.tool.name": "api_call" },
    { event: "circuit breaker closed", "gen_ai.tool.name": "api_call" },
  ]);
  expect(recovered.tags).toMatchObject({
    "retry_reflect.outcome": "success",
    "retry_reflect.attempts": 1,
    "retry_reflect.circuit.state": "closed",
  });
  expect(recovered.tags.error).toBeUndefined();

  // The replayed write.
  expect(byCallId(spans, "call_8").logs).toEqual([]);
  expect(byCallId(spans, "call_9").logs).toEqual([{ event: "idempotent replay", "gen_ai.tool.name": "send_email" }]);
  expect(byCallId(spans, "call_9").tags).toMatchObject({ "retry_reflect.replayed": true, "retry_reflect.outcome": "success" });
}

/** Every encoding of the key a careless exporter might leak: as is, hex, base64, and hashed. */
const KEY_FORMS = [
  IDEMPOTENCY_KEY,
  Buffer.from(IDEMPOTENCY_KEY).toString("hex"),
  Buffer.from(IDEMPOTENCY_KEY).toString("base64"),
  createHash("sha256").update(IDEMPOTENCY_KEY).digest("hex"),
  createHash("sha1").update(IDEMPOTENCY_KEY).digest("hex"),
];

function expectNoKey(bytes: Buffer | string) {
  const text = Buffer.isBuffer(bytes) ? bytes.toString("latin1") : bytes;
  for (const form of KEY_FORMS) expect(text.includes(form), `leaked ${form}`).toBe(false);
}

describe("OTLP/HTTP export, as Jaeger receives it", () => {
  it("JSON (exporter-trace-otlp-http): the events and attributes arrive as Jaeger would store them", async () => {
    const { requests } = await exportScenario(new OTLPJsonTraceExporter({ url: receiver.url }));
    expect(requests.length).toBeGreaterThan(0);
    expect(requests.every((request) => request.path === "/v1/traces" && request.contentType.startsWith("application/json"))).toBe(true);
    expectJaegerView(requests.flatMap((request) => decodeJsonTraces(request.body)));
  });

  it("protobuf (exporter-trace-otlp-proto, decoded with protobufjs): the same view", async () => {
    const { requests } = await exportScenario(new OTLPProtoTraceExporter({ url: receiver.url }));
    expect(requests.length).toBeGreaterThan(0);
    expect(requests.every((request) => request.contentType.startsWith("application/x-protobuf"))).toBe(true);
    expectJaegerView(requests.flatMap((request) => decodeProtobufTraces(request.body)));
  });
});

describe("privacy over the wire", () => {
  it("content capture is off by default: no argument or result value is exported", async () => {
    const { requests } = await exportScenario(new OTLPJsonTraceExporter({ url: receiver.url }));
    const spans = requests.flatMap((request) => decodeJsonTraces(request.body));
    expect(spans.some((span) => "gen_ai.tool.call.arguments" in span.attributes || "gen_ai.tool.call.result" in span.attributes)).toBe(
      false,
    );
    const bytes = Buffer.concat(requests.map((request) => request.raw)).toString("utf8");
    expect(bytes).not.toContain("ada@example.com");
    expect(bytes).not.toContain("kelvin");
  });

  for (const captureContent of [false, true]) {
    it(`no idempotency key (nor its hex, base64 or hash) in any exported byte, captureContent: ${captureContent}`, async () => {
      for (const exporter of [new OTLPJsonTraceExporter({ url: receiver.url }), new OTLPProtoTraceExporter({ url: receiver.url })]) {
        const { requests, localBytes } = await exportScenario(exporter, { captureContent });
        expect(requests.length).toBeGreaterThan(0);
        for (const request of requests) {
          expectNoKey(request.raw);
          expectNoKey(request.body);
        }
        expectNoKey(localBytes);
      }
    });
  }

  it("with captureContent: true the arguments are exported, without the key", async () => {
    const { requests } = await exportScenario(new OTLPJsonTraceExporter({ url: receiver.url }), { captureContent: true });
    const spans = requests.flatMap((request) => decodeJsonTraces(request.body));
    const send = spans.find((span) => span.attributes["gen_ai.tool.call.id"] === "call_8");
    expect(send?.attributes["gen_ai.tool.call.arguments"]).toBe(JSON.stringify({ to: "ada@example.com", subject: "forecast" }));
    expect(send?.attributes["gen_ai.tool.call.result"]).toBe(JSON.stringify({ accepted: true }));
  });
});
