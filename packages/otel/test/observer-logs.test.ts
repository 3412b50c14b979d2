import { afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { openTelemetryObserver } from "../src/index.js";
import { makeCall, makeEnd, makeEvent } from "./helpers/fake-calls.js";
import { createTelemetry, installContextManager, type Telemetry } from "./helpers/telemetry-harness.js";

let telemetry: Telemetry;
beforeAll(installContextManager);
beforeEach(() => {
  telemetry = createTelemetry();
});
afterEach(() => telemetry.shutdown());

describe("log records", () => {
  it("mirror each event with its severity, verbatim message and fields, correlated with the call's span", () => {
    const observer = openTelemetryObserver({ tracerProvider: telemetry.tracerProvider, loggerProvider: telemetry.loggerProvider });
    const call = makeCall("get_weather");
    observer.onCallStart?.(call);
    observer.onEvent?.(
      makeEvent("retry", {
        call,
        fields: {
          tool_name: "get_weather",
          attempt: 1,
          max: 3,
          backoff_ms: 500,
          error: "Invalid units",
          error_code: "INVALID_ARGUMENTS",
          mode: "in_place",
        },
      }),
    );
    observer.onEvent?.(makeEvent("retry_succeeded", { call, fields: { tool_name: "get_weather", attempt: 2 } }));
    observer.onCallEnd?.(call, makeEnd({ status: "success", attempt: 2 }));

    const span = telemetry.span("execute_tool get_weather");
    const records = telemetry.logExporter.getFinishedLogRecords();
    expect(
      records.map((record) => ({
        eventName: record.eventName,
        severityNumber: record.severityNumber,
        severityText: record.severityText,
        body: record.body,
        attributes: { ...record.attributes },
        spanId: record.spanContext?.spanId,
        scope: record.instrumentationScope.name,
      })),
    ).toEqual([
      {
        eventName: "retry_reflect.retry",
        severityNumber: 13,
        severityText: "WARN",
        body: "tool call failed, retrying",
        attributes: {
          "gen_ai.tool.name": "get_weather",
          "retry_reflect.attempt": 1,
          "retry_reflect.max": 3,
          "retry_reflect.backoff_ms": 500,
          "retry_reflect.error": "Invalid units",
          "retry_reflect.error_code": "INVALID_ARGUMENTS",
          "retry_reflect.mode": "in_place",
        },
        spanId: span.spanContext().spanId,
        scope: "@retry-reflect/otel",
      },
      {
        eventName: "retry_reflect.retry_succeeded",
        severityNumber: 9,
        severityText: "INFO",
        body: "retry succeeded",
        attributes: { "gen_ai.tool.name": "get_weather", "retry_reflect.attempt": 2 },
        spanId: span.spanContext().spanId,
        scope: "@retry-reflect/otel",
      },
    ]);
  });

  it("an event outside any call is still logged", () => {
    const observer = openTelemetryObserver({ tracerProvider: telemetry.tracerProvider, loggerProvider: telemetry.loggerProvider });
    observer.onEvent?.(makeEvent("circuit_half_opened", { fields: { tool_name: "api_call" } }));
    const records = telemetry.logExporter.getFinishedLogRecords();
    expect(records.map((record) => [record.severityText, record.body])).toEqual([["INFO", "circuit breaker half-open"]]);
    expect(records[0]?.spanContext).toBeUndefined();
  });
});
