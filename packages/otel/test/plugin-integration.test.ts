import { context, SpanStatusCode, trace } from "@opentelemetry/api";
import { RetryReflectPlugin, ToolError } from "@retry-reflect/core";
import { createFakeClock, type FakeClock } from "@retry-reflect/core/testing";
import { afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { openTelemetryObserver } from "../src/index.js";
import {
  counterPoints,
  createTelemetry,
  histogramPoints,
  installContextManager,
  spanEvents,
  type Telemetry,
} from "./helpers/telemetry-harness.js";

// The observer wired into the real core plugin, on fake time.

let telemetry: Telemetry;
let clock: FakeClock;
beforeAll(installContextManager);
beforeEach(() => {
  telemetry = createTelemetry();
  clock = createFakeClock();
});
afterEach(() => telemetry.shutdown());

function observer(options: Parameters<typeof openTelemetryObserver>[0] = {}) {
  return openTelemetryObserver({
    tracerProvider: telemetry.tracerProvider,
    meterProvider: telemetry.meterProvider,
    loggerProvider: telemetry.loggerProvider,
    ...options,
  });
}

const INVALID_UNITS = "Invalid units. Supported: celsius, fahrenheit";

async function getWeather(args: { city: string; units: string }) {
  if (args.units !== "celsius" && args.units !== "fahrenheit") {
    throw new ToolError({ code: "INVALID_ARGUMENTS", message: INVALID_UNITS, recoverable: true });
  }
  return { city: args.city, temperature: 21, units: args.units };
}

/** A tool failing with a transient error every time. */
function alwaysDown(): never {
  throw new ToolError({ code: "TRANSIENT", message: "upstream 503 Service Unavailable", recoverable: true });
}

describe("the seed's weather case through the real plugin", () => {
  it("one span per call: 'tool call failed, retrying' (attempt=1 max=3 backoff_ms=500), then 'retry succeeded' (attempt=2)", async () => {
    const plugin = RetryReflectPlugin.builder().maxRetries(3).clock(clock).observer(observer()).build();

    const first = await plugin.execute(
      { toolName: "get_weather", args: { city: "nyc", units: "kelvin" }, callId: "call_1", scope: "run-42" },
      getWeather,
    );
    expect(first.status).toBe("reflect");

    // The model's corrected call: the backoff gate waits the documented 500 ms.
    const pending = plugin.execute(
      { toolName: "get_weather", args: { city: "nyc", units: "celsius" }, callId: "call_2", scope: "run-42" },
      getWeather,
    );
    await clock.advance(500);
    const second = await pending;
    expect(second.status).toBe("success");

    const spans = telemetry.spans();
    expect(spans.map((span) => [span.name, span.attributes["gen_ai.tool.call.id"]])).toEqual([
      ["execute_tool get_weather", "call_1"],
      ["execute_tool get_weather", "call_2"],
    ]);
    const [reflected, succeeded] = spans;
    expect(spanEvents(reflected!)).toEqual([
      {
        name: "tool call failed, retrying",
        attributes: {
          "gen_ai.tool.name": "get_weather",
          "retry_reflect.attempt": 1,
          "retry_reflect.max": 3,
          "retry_reflect.backoff_ms": 500,
          "retry_reflect.error": INVALID_UNITS,
          "retry_reflect.error_code": "INVALID_ARGUMENTS",
          "retry_reflect.mode": "reflect",
        },
      },
    ]);
    expect(reflected?.attributes).toMatchObject({ "retry_reflect.outcome": "reflect", "retry_reflect.attempt": 1 });
    expect(reflected?.status.code).toBe(SpanStatusCode.UNSET);

    // The corrected call's 500 ms are explained on its span: it waited out the first call's backoff.
    expect(spanEvents(succeeded!)).toEqual([
      { name: "waiting before retry", attributes: { "gen_ai.tool.name": "get_weather", "retry_reflect.wait_ms": 500 } },
      { name: "retry succeeded", attributes: { "gen_ai.tool.name": "get_weather", "retry_reflect.attempt": 2 } },
    ]);
    expect(succeeded?.attributes).toMatchObject({
      "gen_ai.operation.name": "execute_tool",
      "retry_reflect.outcome": "success",
      "retry_reflect.attempt": 2,
      "retry_reflect.circuit.state": "closed",
    });
    // Success after a retry is not an error.
    expect(succeeded?.status.code).toBe(SpanStatusCode.UNSET);
    expect(succeeded?.attributes["error.type"]).toBeUndefined();

    const retries = counterPoints((await telemetry.metrics()).get("retry_reflect.retries"));
    expect(retries).toEqual([
      {
        attributes: { "gen_ai.tool.name": "get_weather", "retry_reflect.mode": "reflect", "retry_reflect.error_code": "INVALID_ARGUMENTS" },
        value: 1,
      },
    ]);
  });

  it("in-place retries of a transient failure stay in one span, across the backoff sleeps", async () => {
    const plugin = RetryReflectPlugin.create({ maxRetries: 3, clock, observers: [observer()] });
    let calls = 0;
    const pending = plugin.execute({ toolName: "api_call", args: {}, scope: "run-1" }, () => {
      calls++;
      if (calls < 3) throw Object.assign(new Error("socket hang up"), { code: "ECONNRESET" });
      return "ok";
    });
    await clock.runAll();
    expect(await pending).toMatchObject({ status: "success", attempt: 3 });
    expect(clock.sleeps).toEqual([500, 1000]);

    const span = telemetry.span("execute_tool api_call");
    expect(
      span.events.map((event) => [
        event.name,
        event.attributes?.["retry_reflect.attempt"],
        event.attributes?.["retry_reflect.backoff_ms"],
        event.attributes?.["retry_reflect.mode"],
      ]),
    ).toEqual([
      ["tool call failed, retrying", 1, 500, "in_place"],
      ["tool call failed, retrying", 2, 1000, "in_place"],
      ["retry succeeded", 3, undefined, undefined],
    ]);
    expect(span.attributes).toMatchObject({ "retry_reflect.attempts": 3, "retry_reflect.attempt": 3, "retry_reflect.outcome": "success" });
    expect(span.status.code).toBe(SpanStatusCode.UNSET);
  });
});

describe("the breaker, exhaustion and rejection through the real plugin", () => {
  it("a broken tool: temporary first (a reflection), 'retries exhausted' once it has failed for giveUpMs, then 'circuit breaker opened' (failures=10, reset_ms=60000); the next call is rejected", async () => {
    // patience 15 s, give-up 20 s, threshold 10 (the defaults); the circuit open 60 s (the default is 1 s)
    const plugin = RetryReflectPlugin.create({ clock, circuitBreakerResetMs: 60_000, observers: [observer()] });

    // run-1: retried in place for its patience (6 attempts), then told the tool is temporarily unavailable.
    const temporary = plugin.execute({ toolName: "api_call", args: {}, callId: "call_1", scope: "run-1" }, alwaysDown);
    await clock.runAll();
    expect(await temporary).toMatchObject({ status: "reflect", error: { code: "TRANSIENT", recoverable: true, retryAfterMs: 4_000 } });
    // Its next call, after the wait it was told, fails until the tool has failed for 20 s: the stop.
    const exhausted = plugin.execute({ toolName: "api_call", args: {}, callId: "call_2", scope: "run-1" }, alwaysDown);
    await clock.runAll();
    expect(await exhausted).toMatchObject({ status: "failed", reason: "exhausted" });
    expect(plugin.circuitState("api_call")).toBe("closed"); // 9 failures: the breaker sits above one patient call's attempts
    // run-2: the 10th failure in a row opens the breaker.
    const opening = plugin.execute({ toolName: "api_call", args: {}, callId: "call_3", scope: "run-2" }, alwaysDown);
    await clock.runAll();
    expect(await opening).toMatchObject({ status: "reflect", error: { retryAfterMs: 60_000 } });
    expect(plugin.circuitState("api_call")).toBe("open");
    // run-3: rejected at once (the probe is 60 s away, beyond its patience), told when to call again.
    const rejected = await plugin.execute({ toolName: "api_call", args: {}, callId: "call_4", scope: "run-3" }, alwaysDown);
    expect(rejected).toMatchObject({ status: "reflect", error: { code: "CIRCUIT_OPEN", recoverable: true, retryAfterMs: 60_000 } });

    const [first, second, third, fourth] = telemetry.spans();
    expect(first!.events.map((event) => event.name)).toEqual(Array(6).fill("tool call failed, retrying"));
    expect(first?.attributes).toMatchObject({ "retry_reflect.outcome": "reflect", "retry_reflect.error_code": "TRANSIENT" });
    expect(first?.attributes["error.type"]).toBeUndefined();
    expect(first?.status.code).toBe(SpanStatusCode.UNSET);

    expect(second!.events.map((event) => event.name)).toEqual([
      "waiting before retry",
      "tool call failed, retrying",
      "tool call failed, retrying",
      "retries exhausted",
    ]);
    expect(spanEvents(second!).at(-1)).toEqual({
      name: "retries exhausted",
      attributes: {
        "gen_ai.tool.name": "api_call",
        "retry_reflect.attempts": 9,
        "retry_reflect.error": "upstream 503 Service Unavailable",
        "retry_reflect.retry_after_ms": 60_000,
      },
    });
    expect(second?.attributes).toMatchObject({
      "retry_reflect.outcome": "failed",
      "retry_reflect.failure.reason": "exhausted",
      "retry_reflect.attempt": 9,
      "retry_reflect.attempts": 3,
      "error.type": "RETRIES_EXHAUSTED",
    });
    expect(second?.status.code).toBe(SpanStatusCode.ERROR);

    const opened = spanEvents(third!).find((event) => event.name === "circuit breaker opened");
    expect(opened?.attributes).toEqual({ "gen_ai.tool.name": "api_call", "retry_reflect.failures": 10, "retry_reflect.reset_ms": 60_000 });
    expect(third?.attributes).toMatchObject({ "retry_reflect.outcome": "reflect", "retry_reflect.circuit.state": "open" });

    expect(spanEvents(fourth!)).toEqual([
      { name: "call rejected, circuit open", attributes: { "gen_ai.tool.name": "api_call", "retry_reflect.retry_after_ms": 60_000 } },
    ]);
    expect(fourth?.attributes).toMatchObject({
      "retry_reflect.outcome": "reflect",
      "retry_reflect.error_code": "CIRCUIT_OPEN",
      "retry_reflect.attempts": 0,
      "retry_reflect.circuit.state": "open",
    });
    expect(fourth?.attributes["error.type"]).toBeUndefined();
    expect(fourth?.status.code).toBe(SpanStatusCode.UNSET);

    const collected = await telemetry.metrics();
    expect(counterPoints(collected.get("retry_reflect.circuit.rejections"))).toEqual([
      { attributes: { "gen_ai.tool.name": "api_call" }, value: 1 },
    ]);
    expect(counterPoints(collected.get("retry_reflect.circuit.transitions"))).toEqual([
      { attributes: { "gen_ai.tool.name": "api_call", "retry_reflect.circuit.state": "open" }, value: 1 },
    ]);
    expect(counterPoints(collected.get("retry_reflect.reflections"))).toEqual(
      expect.arrayContaining([
        { attributes: { "gen_ai.tool.name": "api_call", "retry_reflect.error_code": "TRANSIENT" }, value: 2 },
        { attributes: { "gen_ai.tool.name": "api_call", "retry_reflect.error_code": "CIRCUIT_OPEN" }, value: 1 },
      ]),
    );
  });

  /** A plugin whose circuit opens at the first failure and stays open 60 s. */
  const openedByOneFailure = () =>
    RetryReflectPlugin.create({ maxRetries: 0, circuitBreakerThreshold: 1, circuitBreakerResetMs: 60_000, clock, observers: [observer()] });

  it("a call that meets an open circuit due within its patience waits for recovery: 'waiting for recovery', then the probe's half-open and closed, in its span; counted, and its wait in its duration", async () => {
    const plugin = openedByOneFailure();
    await plugin.execute({ toolName: "api_call", args: {}, scope: "run-1" }, alwaysDown);
    expect(plugin.circuitState("api_call")).toBe("open");
    await clock.advance(50_000);
    const waiting = plugin.execute({ toolName: "api_call", args: {}, callId: "call_2", scope: "run-2" }, () => "ok");
    await clock.advance(10_000);
    expect(await waiting).toMatchObject({ status: "success", value: "ok" });

    const span = telemetry.spans()[1]!;
    expect(spanEvents(span)).toEqual([
      { name: "waiting for recovery", attributes: { "gen_ai.tool.name": "api_call", "retry_reflect.wait_ms": 10_000 } },
      { name: "circuit breaker half-open", attributes: { "gen_ai.tool.name": "api_call" } },
      { name: "circuit breaker closed", attributes: { "gen_ai.tool.name": "api_call" } },
    ]);
    expect(span.attributes).toMatchObject({ "retry_reflect.outcome": "success", "retry_reflect.circuit.state": "closed" });
    const record = telemetry.logExporter.getFinishedLogRecords().find((each) => each.eventName === "retry_reflect.waiting_for_recovery");
    expect(record).toMatchObject({ severityNumber: 9, severityText: "INFO", body: "waiting for recovery" });
    const collected = await telemetry.metrics();
    expect(counterPoints(collected.get("retry_reflect.circuit.waits"))).toEqual([
      { attributes: { "gen_ai.tool.name": "api_call" }, value: 1 },
    ]);
    const success = histogramPoints(collected.get("gen_ai.execute_tool.duration")).find(
      (point) => point.attributes["retry_reflect.outcome"] === "success",
    );
    expect(success).toMatchObject({ count: 1, sum: 10 });
  });

  it("after reset_ms the probe's span shows half-open then closed, and the state ends closed", async () => {
    const plugin = openedByOneFailure();
    await plugin.execute({ toolName: "api_call", args: {}, scope: "run-1" }, alwaysDown);
    await clock.advance(60_000);
    const probe = await plugin.execute({ toolName: "api_call", args: {}, scope: "run-2" }, () => "ok");
    expect(probe.status).toBe("success");

    const [failing, probeSpan] = telemetry.spans();
    expect(failing?.events.map((event) => event.name)).toContain("circuit breaker opened");
    expect(probeSpan?.events.map((event) => event.name)).toEqual(["circuit breaker half-open", "circuit breaker closed"]);
    expect(probeSpan?.attributes["retry_reflect.circuit.state"]).toBe("closed");
  });
});

describe("idempotency through the real plugin", () => {
  it("a replayed write has its 'idempotent replay' event, outcome success, replayed true", async () => {
    const plugin = RetryReflectPlugin.create({ clock, toolEffects: { send_email: "write" }, observers: [observer()] });
    let sent = 0;
    const sendEmail = () => ({ messageId: `msg-${++sent}` });
    const args = { to: "ada@example.com", body: "hello", idempotency_key: "idem-key-9f8e7d" };
    await plugin.execute({ toolName: "send_email", args, scope: "run-1" }, sendEmail);
    const replay = await plugin.execute({ toolName: "send_email", args, scope: "run-1" }, sendEmail);
    expect(replay).toMatchObject({ status: "success", replayed: true });
    expect(sent).toBe(1);

    const [, replayed] = telemetry.spans();
    expect(spanEvents(replayed!)).toEqual([{ name: "idempotent replay", attributes: { "gen_ai.tool.name": "send_email" } }]);
    expect(replayed?.attributes).toMatchObject({
      "retry_reflect.outcome": "success",
      "retry_reflect.replayed": true,
      "retry_reflect.tool.effect": "write",
    });
    expect(replayed?.status.code).toBe(SpanStatusCode.UNSET);
    expect(counterPoints((await telemetry.metrics()).get("retry_reflect.idempotency.replays"))).toEqual([
      { attributes: { "gen_ai.tool.name": "send_email" }, value: 1 },
    ]);
  });

  it("a write without a key shows 'idempotency conflict' with reason key_required", async () => {
    const plugin = RetryReflectPlugin.create({ clock, toolEffects: { send_email: "write" }, observers: [observer()] });
    const outcome = await plugin.execute({ toolName: "send_email", args: { to: "ada@example.com" } }, () => "sent");
    expect(outcome.status).toBe("reflect");
    const span = telemetry.span("execute_tool send_email");
    expect(spanEvents(span)).toEqual([
      { name: "idempotency conflict", attributes: { "gen_ai.tool.name": "send_email", "retry_reflect.reason": "key_required" } },
    ]);
    expect(span.attributes).toMatchObject({ "retry_reflect.outcome": "reflect", "retry_reflect.error_code": "IDEMPOTENCY_KEY_REQUIRED" });
  });
});

describe("context and final failures through the real plugin", () => {
  it("a span the tool starts is a child of the execute_tool span", async () => {
    const plugin = RetryReflectPlugin.create({ clock, observers: [observer()] });
    const http = telemetry.tracerProvider.getTracer("http");
    const parent = telemetry.tracerProvider.getTracer("agent").startSpan("invoke_agent");
    await context.with(trace.setSpan(context.active(), parent), () =>
      plugin.execute({ toolName: "get_weather", args: { city: "nyc", units: "celsius" } }, async (args) => {
        await Promise.resolve();
        const span = http.startSpan("GET api.weather.example/v1/current");
        span.end();
        return getWeather(args);
      }),
    );
    parent.end();

    const tool = telemetry.span("execute_tool get_weather");
    expect(tool.parentSpanContext?.spanId).toBe(parent.spanContext().spanId);
    expect(telemetry.span("GET api.weather.example/v1/current").parentSpanContext?.spanId).toBe(tool.spanContext().spanId);
  });

  it("an abort by the caller ends the span with outcome aborted, not an error", async () => {
    const plugin = RetryReflectPlugin.create({ clock, observers: [observer()] });
    const controller = new AbortController();
    const pending = plugin.execute({ toolName: "api_call", args: {}, signal: controller.signal }, alwaysDown);
    await clock.advance(0);
    controller.abort();
    await expect(pending).rejects.toBeDefined();
    const span = telemetry.span("execute_tool api_call");
    expect(span.attributes["retry_reflect.outcome"]).toBe("aborted");
    expect(span.status.code).toBe(SpanStatusCode.UNSET);
  });

  it("a control-flow error (an agent framework's interrupt) ends the span with outcome interrupted, not an error", async () => {
    const plugin = RetryReflectPlugin.create({ clock, observers: [observer()] });
    const interrupt = new Error("waiting for human approval");
    const pending = plugin.execute({ toolName: "deploy", args: {}, passThrough: (error) => error === interrupt }, () => {
      throw interrupt;
    });
    await expect(pending).rejects.toBe(interrupt);
    const span = telemetry.span("execute_tool deploy");
    expect(span.attributes["retry_reflect.outcome"]).toBe("interrupted");
    expect(span.status.code).toBe(SpanStatusCode.UNSET);
    expect(span.attributes["error.type"]).toBeUndefined();
    expect(spanEvents(span)).toEqual([]);
  });

  it("a non-recoverable failure is final: status ERROR with its own error code", async () => {
    const plugin = RetryReflectPlugin.create({ clock, observers: [observer()] });
    const outcome = await plugin.execute({ toolName: "db_query", args: { id: 7 } }, () => ({
      error_code: "RECORD_NOT_FOUND",
      message: "No record 7",
      recoverable: false,
      suggested_action: "Tell the user the record does not exist.",
    }));
    expect(outcome).toMatchObject({ status: "failed", reason: "not_recoverable" });
    const span = telemetry.span("execute_tool db_query");
    expect(span.attributes).toMatchObject({ "error.type": "RECORD_NOT_FOUND", "retry_reflect.failure.reason": "not_recoverable" });
    expect(span.status).toEqual({ code: SpanStatusCode.ERROR, message: "No record 7" });
  });

  it("an out-of-scope tool gets no span", async () => {
    const plugin = RetryReflectPlugin.create({ clock, excludeTools: ["exit_loop"], observers: [observer()] });
    await plugin.execute({ toolName: "exit_loop", args: {} }, () => "done");
    expect(telemetry.spans()).toHaveLength(0);
  });
});

describe("the resilience options' events on the call's span", () => {
  it("a hung attempt cut off by attemptTimeoutMs: 'attempt timed out', then the in-place retry and its success", async () => {
    const plugin = RetryReflectPlugin.create({ clock, attemptTimeoutMs: 1_000, initialBackoffMs: 100, observers: [observer()] });
    let runs = 0;
    const pending = plugin.execute({ toolName: "generate_report", args: {} }, () => {
      runs++;
      return runs === 1 ? new Promise<never>(() => {}) : "report";
    });
    await clock.advance(1_000);
    await clock.advance(100);
    await expect(pending).resolves.toMatchObject({ status: "success", attempt: 2 });
    const events = spanEvents(telemetry.span("execute_tool generate_report"));
    expect(events.map((event) => event.name)).toEqual(["attempt timed out", "tool call failed, retrying", "retry succeeded"]);
    expect(events[0]?.attributes).toEqual({
      "gen_ai.tool.name": "generate_report",
      "retry_reflect.attempt": 1,
      "retry_reflect.timeout_ms": 1_000,
    });
    expect(events[1]?.attributes).toMatchObject({ "retry_reflect.error_code": "TIMEOUT", "retry_reflect.mode": "in_place" });
  });

  it("'fallback used' on a call whose failure was replaced, and 'call refused' on an OVERLOADED one", async () => {
    const plugin = RetryReflectPlugin.create({
      clock,
      maxConcurrent: 1,
      tools: { search: { fallback: () => ({ hits: [], note: "cached" }) } },
      observers: [observer()],
    });
    await plugin.execute({ toolName: "search", args: {} }, () => {
      throw new ToolError({ code: "QUOTA", message: "quota exceeded", recoverable: false });
    });
    const fallback = telemetry.span("execute_tool search");
    expect(spanEvents(fallback)).toEqual([
      { name: "fallback used", attributes: { "gen_ai.tool.name": "search", "retry_reflect.error_code": "QUOTA" } },
    ]);
    expect(fallback.attributes).toMatchObject({ "retry_reflect.outcome": "success", "retry_reflect.fallback": true });

    let release!: () => void;
    const busy = plugin.execute(
      { toolName: "report", args: {}, scope: "a" },
      () => new Promise<string>((resolve) => (release = () => resolve("r"))),
    );
    await clock.advance(0);
    await plugin.execute({ toolName: "report", args: {}, scope: "b" }, () => "never runs");
    release();
    await busy;
    const refused = telemetry.spans().filter((span) => span.name === "execute_tool report")[0];
    expect(spanEvents(refused!)).toEqual([
      { name: "call refused", attributes: { "gen_ai.tool.name": "report", "retry_reflect.reason": "overloaded" } },
    ]);
  });
});
