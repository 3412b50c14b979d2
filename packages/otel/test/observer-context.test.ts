import { context, trace } from "@opentelemetry/api";
import { afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { openTelemetryObserver } from "../src/index.js";
import { makeCall, makeEnd } from "./helpers/fake-calls.js";
import { createTelemetry, installContextManager, type Telemetry } from "./helpers/telemetry-harness.js";

let telemetry: Telemetry;
beforeAll(installContextManager);
beforeEach(() => {
  telemetry = createTelemetry();
});
afterEach(() => telemetry.shutdown());

describe("the tool runs inside the execute_tool span's context", () => {
  it("a span the tool starts, after an await, is a child of the execute_tool span", async () => {
    const observer = openTelemetryObserver({ tracerProvider: telemetry.tracerProvider });
    const tracer = telemetry.tracerProvider.getTracer("http");
    const call = makeCall("get_weather");
    observer.onCallStart?.(call);
    const result = await observer.runInContext!(call, async () => {
      await new Promise((resolve) => setImmediate(resolve));
      const http = tracer.startSpan("GET /weather");
      http.end();
      return "sunny";
    });
    observer.onCallEnd?.(call, makeEnd({ status: "success" }));

    expect(result).toBe("sunny");
    const toolSpan = telemetry.span("execute_tool get_weather");
    const http = telemetry.span("GET /weather");
    expect(http.parentSpanContext?.spanId).toBe(toolSpan.spanContext().spanId);
    expect(http.spanContext().traceId).toBe(toolSpan.spanContext().traceId);
  });

  it("each in-place attempt runs in the same span's context", () => {
    const observer = openTelemetryObserver({ tracerProvider: telemetry.tracerProvider });
    const call = makeCall("get_weather");
    observer.onCallStart?.(call);
    const seen = [1, 2].map(() => observer.runInContext!(call, () => trace.getActiveSpan()?.spanContext().spanId));
    observer.onCallEnd?.(call, makeEnd({ status: "success", attempts: 2 }));
    const spanId = telemetry.span("execute_tool get_weather").spanContext().spanId;
    expect(seen).toEqual([spanId, spanId]);
  });

  it("a tool calling another tool nests the second execute_tool span under the first", () => {
    const observer = openTelemetryObserver({ tracerProvider: telemetry.tracerProvider });
    const outer = makeCall("plan_trip");
    const inner = makeCall("get_weather");
    observer.onCallStart?.(outer);
    observer.runInContext!(outer, () => {
      observer.onCallStart?.(inner);
      observer.runInContext!(inner, () => undefined);
      observer.onCallEnd?.(inner, makeEnd({ status: "success" }));
    });
    observer.onCallEnd?.(outer, makeEnd({ status: "success" }));
    expect(telemetry.span("execute_tool get_weather").parentSpanContext?.spanId).toBe(
      telemetry.span("execute_tool plan_trip").spanContext().spanId,
    );
  });

  it("outside runInContext the caller's context is untouched", () => {
    const observer = openTelemetryObserver({ tracerProvider: telemetry.tracerProvider });
    const call = makeCall("get_weather");
    observer.onCallStart?.(call);
    expect(trace.getActiveSpan()).toBeUndefined();
    observer.onCallEnd?.(call, makeEnd({ status: "success" }));
    expect(context.active()).toBe(context.active());
    expect(trace.getActiveSpan()).toBeUndefined();
  });

  it("runs the tool plainly for a call it never saw start", () => {
    const observer = openTelemetryObserver({ tracerProvider: telemetry.tracerProvider });
    expect(observer.runInContext!(makeCall("get_weather"), () => trace.getActiveSpan())).toBeUndefined();
  });
});
