import { context, SpanKind, SpanStatusCode, trace } from "@opentelemetry/api";
import { InvalidOptionError, ToolError } from "@retry-reflect/core";
import { afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { openTelemetryObserver } from "../src/index.js";
import { makeCall, makeEnd, makeEvent } from "./helpers/fake-calls.js";
import { createTelemetry, installContextManager, spanEvents, type Telemetry } from "./helpers/telemetry-harness.js";

// Unit tests: the observer is fed the hooks and events the core emits, by hand.

let telemetry: Telemetry;
beforeAll(installContextManager);
beforeEach(() => {
  telemetry = createTelemetry();
});
afterEach(() => telemetry.shutdown());

describe("one execute_tool span per logical call", () => {
  it("names the span after the tool, kind INTERNAL, with the GenAI and retry_reflect attributes", () => {
    const observer = openTelemetryObserver({ tracerProvider: telemetry.tracerProvider });
    const call = makeCall("get_weather", { callId: "call_1", scope: "run-42" });
    observer.onCallStart?.(call);
    observer.onCallEnd?.(call, makeEnd({ status: "success", attempt: 1, durationMs: 12 }));

    const span = telemetry.span("execute_tool get_weather");
    expect(span.kind).toBe(SpanKind.INTERNAL);
    expect(span.attributes).toMatchObject({
      "gen_ai.operation.name": "execute_tool",
      "gen_ai.tool.name": "get_weather",
      "gen_ai.tool.call.id": "call_1",
      "retry_reflect.attempt": 1,
      "retry_reflect.attempts": 1,
      "retry_reflect.outcome": "success",
      "retry_reflect.circuit.state": "closed",
      "retry_reflect.scope": "run-42",
      "retry_reflect.tool.effect": "read",
      "retry_reflect.replayed": false,
    });
    expect(span.status.code).toBe(SpanStatusCode.UNSET);
    expect(span.attributes["error.type"]).toBeUndefined();
    expect(span.instrumentationScope.name).toBe("@retry-reflect/otel");
  });

  it("omits gen_ai.tool.call.id when the call has no id", () => {
    const observer = openTelemetryObserver({ tracerProvider: telemetry.tracerProvider });
    const call = makeCall("get_weather");
    observer.onCallStart?.(call);
    observer.onCallEnd?.(call, makeEnd({ status: "success" }));
    expect(Object.keys(telemetry.span("execute_tool get_weather").attributes)).not.toContain("gen_ai.tool.call.id");
  });

  it("parents the span to the caller's active span", () => {
    const observer = openTelemetryObserver({ tracerProvider: telemetry.tracerProvider });
    const tracer = telemetry.tracerProvider.getTracer("test");
    const parent = tracer.startSpan("agent run");
    const call = makeCall("get_weather");
    context.with(trace.setSpan(context.active(), parent), () => observer.onCallStart?.(call));
    observer.onCallEnd?.(call, makeEnd({ status: "success" }));
    parent.end();

    const span = telemetry.span("execute_tool get_weather");
    expect(span.parentSpanContext?.spanId).toBe(parent.spanContext().spanId);
    expect(span.spanContext().traceId).toBe(parent.spanContext().traceId);
  });

  it("keeps the span open until the call ends (one span across in-place attempts)", () => {
    const observer = openTelemetryObserver({ tracerProvider: telemetry.tracerProvider });
    const call = makeCall("get_weather");
    observer.onCallStart?.(call);
    observer.runInContext?.(call, () => "attempt 1");
    observer.runInContext?.(call, () => "attempt 2");
    expect(telemetry.spans()).toHaveLength(0);
    observer.onCallEnd?.(call, makeEnd({ status: "success", attempts: 2, attempt: 2 }));
    expect(telemetry.spans()).toHaveLength(1);
    expect(telemetry.spans()[0]?.attributes["retry_reflect.attempts"]).toBe(2);
  });

  it("gives two concurrent calls of one tool their own spans (the WeakMap keys on the CallInfo object)", () => {
    const observer = openTelemetryObserver({ tracerProvider: telemetry.tracerProvider });
    const first = makeCall("get_weather", { callId: "a" });
    const second = makeCall("get_weather", { callId: "b" });
    observer.onCallStart?.(first);
    observer.onCallStart?.(second);
    observer.onEvent?.(makeEvent("retry_succeeded", { call: second, fields: { tool_name: "get_weather", attempt: 2 } }));
    observer.onCallEnd?.(second, makeEnd({ status: "success" }));
    observer.onCallEnd?.(first, makeEnd({ status: "success" }));

    const spans = telemetry.spans();
    const byId = (id: string) => spans.find((span) => span.attributes["gen_ai.tool.call.id"] === id);
    expect(byId("a")?.events).toHaveLength(0);
    expect(byId("b")?.events.map((event) => event.name)).toEqual(["retry succeeded"]);
  });
});

describe("span events carry the documented fields", () => {
  it("the seed's weather case: 'tool call failed, retrying' then 'retry succeeded' on the call's span", () => {
    const observer = openTelemetryObserver({ tracerProvider: telemetry.tracerProvider });
    const first = makeCall("get_weather", { callId: "call_1" });
    observer.onCallStart?.(first);
    observer.onEvent?.(
      makeEvent("retry", {
        call: first,
        fields: {
          tool_name: "get_weather",
          attempt: 1,
          max: 3,
          backoff_ms: 500,
          error: "Invalid units. Supported: celsius, fahrenheit",
          error_code: "INVALID_ARGUMENTS",
          mode: "reflect",
        },
      }),
    );
    const invalid = new ToolError({
      code: "INVALID_ARGUMENTS",
      message: "Invalid units. Supported: celsius, fahrenheit",
      recoverable: true,
    });
    observer.onCallEnd?.(first, makeEnd({ status: "reflect", attempt: 1, error: invalid }));

    const second = makeCall("get_weather", { callId: "call_2" });
    observer.onCallStart?.(second);
    observer.onEvent?.(makeEvent("retry_succeeded", { call: second, fields: { tool_name: "get_weather", attempt: 2 } }));
    observer.onCallEnd?.(second, makeEnd({ status: "success", attempt: 2 }));

    const [reflected, succeeded] = telemetry.spans();
    expect(spanEvents(reflected!)).toEqual([
      {
        name: "tool call failed, retrying",
        attributes: {
          "gen_ai.tool.name": "get_weather",
          "retry_reflect.attempt": 1,
          "retry_reflect.max": 3,
          "retry_reflect.backoff_ms": 500,
          "retry_reflect.error": "Invalid units. Supported: celsius, fahrenheit",
          "retry_reflect.error_code": "INVALID_ARGUMENTS",
          "retry_reflect.mode": "reflect",
        },
      },
    ]);
    // A reflection is not a final failure: the model corrects its arguments.
    expect(reflected?.status.code).toBe(SpanStatusCode.UNSET);
    expect(reflected?.attributes).toMatchObject({ "retry_reflect.outcome": "reflect", "retry_reflect.error_code": "INVALID_ARGUMENTS" });
    expect(reflected?.attributes["error.type"]).toBeUndefined();

    expect(spanEvents(succeeded!)).toEqual([
      { name: "retry succeeded", attributes: { "gen_ai.tool.name": "get_weather", "retry_reflect.attempt": 2 } },
    ]);
    expect(succeeded?.status.code).toBe(SpanStatusCode.UNSET);
    expect(succeeded?.attributes["retry_reflect.attempt"]).toBe(2);
  });

  it("a breaker that opens: 'circuit breaker opened' with failures and reset_ms, state open", () => {
    const observer = openTelemetryObserver({ tracerProvider: telemetry.tracerProvider });
    const call = makeCall("api_call");
    observer.onCallStart?.(call);
    observer.onEvent?.(makeEvent("circuit_opened", { call, fields: { tool_name: "api_call", failures: 5, reset_ms: 60_000 } }));
    const error = new ToolError({ code: "TRANSIENT", message: "upstream 503", recoverable: true });
    observer.onCallEnd?.(call, makeEnd({ status: "failed", reason: "exhausted", error, circuitState: "open" }));

    const span = telemetry.span("execute_tool api_call");
    expect(spanEvents(span)).toEqual([
      {
        name: "circuit breaker opened",
        attributes: { "gen_ai.tool.name": "api_call", "retry_reflect.failures": 5, "retry_reflect.reset_ms": 60_000 },
      },
    ]);
    expect(span.attributes["retry_reflect.circuit.state"]).toBe("open");
  });

  it("a rejected call: its event, outcome failed, reason circuit_open, error.type CIRCUIT_OPEN, status ERROR", () => {
    const observer = openTelemetryObserver({ tracerProvider: telemetry.tracerProvider });
    const call = makeCall("api_call");
    observer.onCallStart?.(call);
    observer.onEvent?.(makeEvent("call_rejected", { call, fields: { tool_name: "api_call", retry_after_ms: 42_000 } }));
    const error = new ToolError({ code: "CIRCUIT_OPEN", message: "api_call is temporarily disabled", recoverable: false });
    observer.onCallEnd?.(call, makeEnd({ status: "failed", reason: "circuit_open", error, circuitState: "open", attempts: 0 }));

    const span = telemetry.span("execute_tool api_call");
    expect(spanEvents(span)).toEqual([
      { name: "call rejected, circuit open", attributes: { "gen_ai.tool.name": "api_call", "retry_reflect.retry_after_ms": 42_000 } },
    ]);
    expect(span.attributes).toMatchObject({
      "retry_reflect.outcome": "failed",
      "retry_reflect.failure.reason": "circuit_open",
      "error.type": "CIRCUIT_OPEN",
      "retry_reflect.circuit.state": "open",
    });
    expect(span.status).toEqual({ code: SpanStatusCode.ERROR, message: "api_call is temporarily disabled" });
  });

  it("an exhausted call: 'retries exhausted' with attempts and error, status ERROR", () => {
    const observer = openTelemetryObserver({ tracerProvider: telemetry.tracerProvider });
    const call = makeCall("db_query");
    observer.onCallStart?.(call);
    observer.onEvent?.(makeEvent("retries_exhausted", { call, fields: { tool_name: "db_query", attempts: 4, error: "connection reset" } }));
    const error = new ToolError({ code: "TRANSIENT", message: "connection reset", recoverable: true });
    observer.onCallEnd?.(call, makeEnd({ status: "failed", reason: "exhausted", error, attempt: 4 }));

    const span = telemetry.span("execute_tool db_query");
    expect(spanEvents(span)).toEqual([
      {
        name: "retries exhausted",
        attributes: { "gen_ai.tool.name": "db_query", "retry_reflect.attempts": 4, "retry_reflect.error": "connection reset" },
      },
    ]);
    expect(span.attributes).toMatchObject({
      "retry_reflect.outcome": "failed",
      "retry_reflect.failure.reason": "exhausted",
      "error.type": "TRANSIENT",
    });
    expect(span.status.code).toBe(SpanStatusCode.ERROR);
  });

  it("an idempotent replay: its event, outcome success, replayed true, no error", () => {
    const observer = openTelemetryObserver({ tracerProvider: telemetry.tracerProvider });
    const call = makeCall("send_email", { effect: "write" });
    observer.onCallStart?.(call);
    observer.onEvent?.(makeEvent("idempotent_replay", { call, fields: { tool_name: "send_email" } }));
    observer.onCallEnd?.(call, makeEnd({ status: "success", replayed: true, attempts: 0 }));

    const span = telemetry.span("execute_tool send_email");
    expect(spanEvents(span)).toEqual([{ name: "idempotent replay", attributes: { "gen_ai.tool.name": "send_email" } }]);
    expect(span.attributes).toMatchObject({
      "retry_reflect.outcome": "success",
      "retry_reflect.replayed": true,
      "retry_reflect.tool.effect": "write",
    });
    expect(span.status.code).toBe(SpanStatusCode.UNSET);
  });

  it("an idempotency conflict carries its reason", () => {
    const observer = openTelemetryObserver({ tracerProvider: telemetry.tracerProvider });
    const call = makeCall("send_email", { effect: "write" });
    observer.onCallStart?.(call);
    observer.onEvent?.(makeEvent("idempotency_conflict", { call, fields: { tool_name: "send_email", reason: "key_reused" } }));
    observer.onCallEnd?.(call, makeEnd({ status: "reflect" }));
    expect(spanEvents(telemetry.span("execute_tool send_email"))).toEqual([
      { name: "idempotency conflict", attributes: { "gen_ai.tool.name": "send_email", "retry_reflect.reason": "key_reused" } },
    ]);
  });

  it("a store error is a span event naming the operation, and does not fail the span", () => {
    const observer = openTelemetryObserver({ tracerProvider: telemetry.tracerProvider });
    const call = makeCall("send_email", { effect: "write" });
    observer.onCallStart?.(call);
    observer.onEvent?.(
      makeEvent("store_error", { call, fields: { tool_name: "send_email", operation: "complete", error: "connection reset" } }),
    );
    observer.onCallEnd?.(call, makeEnd({ status: "success" }));
    const span = telemetry.span("execute_tool send_email");
    expect(spanEvents(span)).toEqual([
      {
        name: "store error",
        attributes: { "gen_ai.tool.name": "send_email", "retry_reflect.operation": "complete", "retry_reflect.error": "connection reset" },
      },
    ]);
    expect(span.status.code).toBe(SpanStatusCode.UNSET);
  });

  it("breaker events outside a call go to the active span, or nowhere when none is active", () => {
    const observer = openTelemetryObserver({ tracerProvider: telemetry.tracerProvider });
    const agent = telemetry.tracerProvider.getTracer("test").startSpan("agent run");
    context.with(trace.setSpan(context.active(), agent), () =>
      observer.onEvent?.(makeEvent("circuit_half_opened", { fields: { tool_name: "api_call" } })),
    );
    observer.onEvent?.(makeEvent("circuit_closed", { fields: { tool_name: "api_call" } }));
    agent.end();

    const spans = telemetry.spans();
    expect(spans).toHaveLength(1);
    expect(spanEvents(spans[0]!)).toEqual([{ name: "circuit breaker half-open", attributes: { "gen_ai.tool.name": "api_call" } }]);
    // Not the call's span: its attributes are left alone.
    expect(spans[0]?.attributes["retry_reflect.circuit.state"]).toBeUndefined();
  });
});

describe("final failure only", () => {
  it("a thrown programmer error: outcome error, error.type = the error's name, exception recorded", () => {
    const observer = openTelemetryObserver({ tracerProvider: telemetry.tracerProvider });
    const call = makeCall("get_weather");
    observer.onCallStart?.(call);
    observer.onCallEnd?.(call, makeEnd({ status: "error", thrown: new TypeError("tool is not a function") }));

    const span = telemetry.span("execute_tool get_weather");
    expect(span.attributes).toMatchObject({ "retry_reflect.outcome": "error", "error.type": "TypeError" });
    expect(span.status).toEqual({ code: SpanStatusCode.ERROR, message: "tool is not a function" });
    expect(span.events.map((event) => event.name)).toEqual(["exception"]);
    expect(span.events[0]?.attributes?.["exception.type"]).toBe("TypeError");
  });

  it("a thrown non-Error value gets error.type _OTHER", () => {
    const observer = openTelemetryObserver({ tracerProvider: telemetry.tracerProvider });
    const call = makeCall("get_weather");
    observer.onCallStart?.(call);
    observer.onCallEnd?.(call, makeEnd({ status: "error", thrown: "boom" }));
    const span = telemetry.span("execute_tool get_weather");
    expect(span.attributes["error.type"]).toBe("_OTHER");
    expect(span.status).toEqual({ code: SpanStatusCode.ERROR, message: "boom" });
  });

  it("an abort by the caller is not an error: outcome aborted, status UNSET", () => {
    const observer = openTelemetryObserver({ tracerProvider: telemetry.tracerProvider });
    const call = makeCall("get_weather");
    observer.onCallStart?.(call);
    const abort = new Error("This operation was aborted");
    abort.name = "AbortError";
    observer.onCallEnd?.(call, makeEnd({ status: "aborted", thrown: abort }));
    const span = telemetry.span("execute_tool get_weather");
    expect(span.attributes["retry_reflect.outcome"]).toBe("aborted");
    expect(span.attributes["error.type"]).toBeUndefined();
    expect(span.status.code).toBe(SpanStatusCode.UNSET);
  });
});

describe("spanMode", () => {
  it('"active" adds events and retry_reflect attributes to the active span and does not end it', () => {
    const observer = openTelemetryObserver({ tracerProvider: telemetry.tracerProvider, spanMode: "active" });
    const tracer = telemetry.tracerProvider.getTracer("langchain");
    const toolSpan = tracer.startSpan("execute_tool get_weather", { attributes: { "gen_ai.tool.name": "get_weather" } });
    const call = makeCall("get_weather", { callId: "call_1" });
    context.with(trace.setSpan(context.active(), toolSpan), () => {
      observer.onCallStart?.(call);
      observer.onEvent?.(makeEvent("retry_succeeded", { call, fields: { tool_name: "get_weather", attempt: 2 } }));
      const error = new ToolError({ code: "TIMEOUT", message: "timed out", recoverable: true });
      observer.onCallEnd?.(call, makeEnd({ status: "failed", reason: "exhausted", error, attempt: 4 }));
    });
    expect(telemetry.spans()).toHaveLength(0);
    toolSpan.end();

    const spans = telemetry.spans();
    expect(spans).toHaveLength(1);
    expect(spans[0]?.name).toBe("execute_tool get_weather");
    expect(spans[0]?.events.map((event) => event.name)).toEqual(["retry succeeded"]);
    expect(spans[0]?.attributes).toMatchObject({ "retry_reflect.outcome": "failed", "retry_reflect.attempt": 4, "error.type": "TIMEOUT" });
    // Its own GenAI attributes are not overwritten nor added to.
    expect(spans[0]?.attributes["gen_ai.operation.name"]).toBeUndefined();
    expect(spans[0]?.status.code).toBe(SpanStatusCode.ERROR);
  });

  it('"active" opens its own span when none is active', () => {
    const observer = openTelemetryObserver({ tracerProvider: telemetry.tracerProvider, spanMode: "active" });
    const call = makeCall("get_weather");
    observer.onCallStart?.(call);
    observer.onCallEnd?.(call, makeEnd({ status: "success" }));
    expect(telemetry.span("execute_tool get_weather").attributes["gen_ai.operation.name"]).toBe("execute_tool");
  });

  it("rejects an unknown mode, naming the option and the value (the core's InvalidOptionError)", () => {
    expect(() => openTelemetryObserver({ spanMode: "child" as "span" })).toThrow(
      'Invalid option `spanMode`: expected "span" or "active", received "child"',
    );
    expect(() => openTelemetryObserver({ spanMode: "child" as "span" })).toThrow(InvalidOptionError);
    expect(() => openTelemetryObserver({ maxContentLength: 3 })).toThrow("`maxContentLength`");
    expect(() => openTelemetryObserver({ maxContentLength: 3 })).toThrow(InvalidOptionError);
  });
});

describe("hooks", () => {
  it("startHook and endHook see the span; a hook that throws breaks nothing", () => {
    const seen: string[] = [];
    const observer = openTelemetryObserver({
      tracerProvider: telemetry.tracerProvider,
      startHook: (span, call) => {
        span.setAttribute("app.tenant", "acme");
        seen.push(`start ${call.toolName}`);
        throw new Error("hook bug");
      },
      endHook: (span, _call, end) => {
        span.setAttribute("app.outcome", end.status);
        throw new Error("hook bug");
      },
    });
    const call = makeCall("get_weather");
    observer.onCallStart?.(call);
    expect(observer.runInContext?.(call, () => 42)).toBe(42);
    observer.onCallEnd?.(call, makeEnd({ status: "success" }));
    expect(seen).toEqual(["start get_weather"]);
    expect(telemetry.span("execute_tool get_weather").attributes).toMatchObject({ "app.tenant": "acme", "app.outcome": "success" });
  });
});

describe("global providers by default", () => {
  it("uses the global tracer provider when none is given, even one registered after the observer was made", () => {
    const observer = openTelemetryObserver();
    trace.setGlobalTracerProvider(telemetry.tracerProvider);
    try {
      const call = makeCall("get_weather");
      observer.onCallStart?.(call);
      observer.onCallEnd?.(call, makeEnd({ status: "success" }));
      expect(telemetry.spans().map((span) => span.name)).toEqual(["execute_tool get_weather"]);
    } finally {
      trace.disable();
    }
  });
});
