import { metrics } from "@opentelemetry/api";
import { ToolError } from "@retry-reflect/core";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { openTelemetryObserver } from "../src/index.js";
import { makeCall, makeEnd, makeEvent } from "./helpers/fake-calls.js";
import { counterPoints, createTelemetry, histogramPoints, type Telemetry } from "./helpers/telemetry-harness.js";

let telemetry: Telemetry;
beforeEach(() => {
  telemetry = createTelemetry();
});
afterEach(() => telemetry.shutdown());

/** Attribute keys a metric point may carry: bounded sets only (no call id, scope, error text). */
const LOW_CARDINALITY_KEYS = new Set([
  "gen_ai.operation.name",
  "gen_ai.tool.name",
  "retry_reflect.outcome",
  "retry_reflect.mode",
  "retry_reflect.error_code",
  "retry_reflect.circuit.state",
  "error.type",
]);

function feedScenario(observer: ReturnType<typeof openTelemetryObserver>) {
  // get_weather: one reflection, then success on the retry.
  const first = makeCall("get_weather", { callId: "call_1", scope: "run-1" });
  observer.onCallStart?.(first);
  observer.onEvent?.(
    makeEvent("retry", {
      call: first,
      fields: {
        tool_name: "get_weather",
        attempt: 1,
        max: 3,
        backoff_ms: 500,
        error: "Invalid units",
        error_code: "INVALID_ARGUMENTS",
        mode: "reflect",
      },
    }),
  );
  const invalid = new ToolError({ code: "INVALID_ARGUMENTS", message: "Invalid units", recoverable: true });
  observer.onCallEnd?.(first, makeEnd({ status: "reflect", error: invalid, durationMs: 250 }));
  const second = makeCall("get_weather", { callId: "call_2", scope: "run-1" });
  observer.onCallStart?.(second);
  observer.onEvent?.(makeEvent("retry_succeeded", { call: second, fields: { tool_name: "get_weather", attempt: 2 } }));
  observer.onCallEnd?.(second, makeEnd({ status: "success", attempt: 2, durationMs: 1500 }));

  // api_call: two in-place retries, the breaker opens, a later call is rejected, then it recovers.
  const flaky = makeCall("api_call", { callId: "call_3", scope: "run-2" });
  observer.onCallStart?.(flaky);
  for (const attempt of [1, 2]) {
    observer.onEvent?.(
      makeEvent("retry", {
        call: flaky,
        fields: {
          tool_name: "api_call",
          attempt,
          max: 3,
          backoff_ms: 500 * attempt,
          error: "503",
          error_code: "TRANSIENT",
          mode: "in_place",
        },
      }),
    );
  }
  observer.onEvent?.(makeEvent("circuit_opened", { call: flaky, fields: { tool_name: "api_call", failures: 5, reset_ms: 60_000 } }));
  const transient = new ToolError({ code: "TRANSIENT", message: "503", recoverable: true });
  observer.onCallEnd?.(flaky, makeEnd({ status: "failed", reason: "exhausted", error: transient, durationMs: 3000, circuitState: "open" }));
  const rejected = makeCall("api_call", { callId: "call_4", scope: "run-2" });
  observer.onCallStart?.(rejected);
  observer.onEvent?.(makeEvent("call_rejected", { call: rejected, fields: { tool_name: "api_call", retry_after_ms: 60_000 } }));
  const open = new ToolError({ code: "CIRCUIT_OPEN", message: "open", recoverable: false });
  observer.onCallEnd?.(rejected, makeEnd({ status: "failed", reason: "circuit_open", error: open, durationMs: 0, circuitState: "open" }));
  // A call 10 s before the probe waits for recovery, is the probe, and succeeds.
  const waiting = makeCall("api_call", { callId: "call_6", scope: "run-3" });
  observer.onCallStart?.(waiting);
  observer.onEvent?.(makeEvent("waiting_for_recovery", { call: waiting, fields: { tool_name: "api_call", wait_ms: 10_000 } }));
  observer.onEvent?.(makeEvent("circuit_half_opened", { call: waiting, fields: { tool_name: "api_call" } }));
  observer.onEvent?.(makeEvent("circuit_closed", { call: waiting, fields: { tool_name: "api_call" } }));
  observer.onCallEnd?.(waiting, makeEnd({ status: "success", durationMs: 10_050 }));

  // search: a transient failure not retried in place, its retry budget spent.
  const spent = makeCall("search", { callId: "call_5" });
  observer.onCallStart?.(spent);
  observer.onEvent?.(
    makeEvent("retry_budget_spent", { call: spent, fields: { tool_name: "search", window_ms: 10_000, retry_after_ms: 4_000 } }),
  );

  // send_email: a replay.
  const replay = makeCall("send_email", { effect: "write" });
  observer.onCallStart?.(replay);
  observer.onEvent?.(makeEvent("idempotent_replay", { call: replay, fields: { tool_name: "send_email" } }));
  observer.onCallEnd?.(replay, makeEnd({ status: "success", replayed: true, attempts: 0, durationMs: 1 }));
}

describe("metrics", () => {
  it("records each documented instrument with its OTel unit", async () => {
    feedScenario(openTelemetryObserver({ tracerProvider: telemetry.tracerProvider, meterProvider: telemetry.meterProvider }));
    const collected = await telemetry.metrics();
    const units = Object.fromEntries([...collected].map(([name, metric]) => [name, metric.descriptor.unit]));
    expect(units).toEqual({
      "gen_ai.execute_tool.duration": "s",
      "retry_reflect.retries": "{retry}",
      "retry_reflect.reflections": "{reflection}",
      "retry_reflect.circuit.transitions": "{transition}",
      "retry_reflect.circuit.rejections": "{rejection}",
      "retry_reflect.circuit.waits": "{wait}",
      "retry_reflect.idempotency.replays": "{replay}",
      "retry_reflect.retry_budget.spent": "{retry}",
    });
  });

  it("counts retries by tool, mode and error code", async () => {
    feedScenario(openTelemetryObserver({ meterProvider: telemetry.meterProvider }));
    const points = counterPoints((await telemetry.metrics()).get("retry_reflect.retries"));
    expect(points).toEqual(
      expect.arrayContaining([
        {
          attributes: {
            "gen_ai.tool.name": "get_weather",
            "retry_reflect.mode": "reflect",
            "retry_reflect.error_code": "INVALID_ARGUMENTS",
          },
          value: 1,
        },
        {
          attributes: { "gen_ai.tool.name": "api_call", "retry_reflect.mode": "in_place", "retry_reflect.error_code": "TRANSIENT" },
          value: 2,
        },
      ]),
    );
    expect(points).toHaveLength(2);
  });

  it("counts reflections, breaker transitions by state entered, rejections, waits for recovery, replays and spent retry budgets", async () => {
    feedScenario(openTelemetryObserver({ meterProvider: telemetry.meterProvider }));
    const collected = await telemetry.metrics();
    expect(counterPoints(collected.get("retry_reflect.reflections"))).toEqual([
      { attributes: { "gen_ai.tool.name": "get_weather", "retry_reflect.error_code": "INVALID_ARGUMENTS" }, value: 1 },
    ]);
    const transitions = counterPoints(collected.get("retry_reflect.circuit.transitions"));
    expect(transitions).toHaveLength(3);
    expect(transitions).toEqual(
      expect.arrayContaining(
        ["open", "half-open", "closed"].map((state) => ({
          attributes: { "gen_ai.tool.name": "api_call", "retry_reflect.circuit.state": state },
          value: 1,
        })),
      ),
    );
    expect(counterPoints(collected.get("retry_reflect.circuit.rejections"))).toEqual([
      { attributes: { "gen_ai.tool.name": "api_call" }, value: 1 },
    ]);
    expect(counterPoints(collected.get("retry_reflect.circuit.waits"))).toEqual([
      { attributes: { "gen_ai.tool.name": "api_call" }, value: 1 },
    ]);
    expect(counterPoints(collected.get("retry_reflect.idempotency.replays"))).toEqual([
      { attributes: { "gen_ai.tool.name": "send_email" }, value: 1 },
    ]);
    expect(counterPoints(collected.get("retry_reflect.retry_budget.spent"))).toEqual([
      { attributes: { "gen_ai.tool.name": "search" }, value: 1 },
    ]);
  });

  it("records the call duration in seconds by tool, outcome and error.type", async () => {
    feedScenario(openTelemetryObserver({ meterProvider: telemetry.meterProvider }));
    const points = histogramPoints((await telemetry.metrics()).get("gen_ai.execute_tool.duration"));
    const find = (tool: string, outcome: string) =>
      points.find((point) => point.attributes["gen_ai.tool.name"] === tool && point.attributes["retry_reflect.outcome"] === outcome);
    expect(find("get_weather", "success")).toMatchObject({ count: 1, sum: 1.5 });
    expect(find("get_weather", "reflect")).toMatchObject({ count: 1, sum: 0.25 });
    expect(find("get_weather", "reflect")?.attributes["error.type"]).toBeUndefined();
    const failed = points.filter((point) => point.attributes["retry_reflect.outcome"] === "failed");
    expect(failed.map((point) => [point.attributes["error.type"], point.count, point.sum])).toEqual(
      expect.arrayContaining([
        ["TRANSIENT", 1, 3],
        ["CIRCUIT_OPEN", 1, 0],
      ]),
    );
    expect(points.every((point) => point.attributes["gen_ai.operation.name"] === "execute_tool")).toBe(true);
  });

  it("uses low-cardinality attributes only: no call id, scope, or error text on any point", async () => {
    feedScenario(openTelemetryObserver({ meterProvider: telemetry.meterProvider }));
    for (const [name, metric] of await telemetry.metrics()) {
      for (const point of metric.dataPoints) {
        for (const key of Object.keys(point.attributes)) expect(LOW_CARDINALITY_KEYS.has(key), `${name}: ${key}`).toBe(true);
      }
    }
  });

  it("uses the global meter provider by default, even one registered after the observer was made", async () => {
    const observer = openTelemetryObserver();
    metrics.setGlobalMeterProvider(telemetry.meterProvider);
    try {
      const call = makeCall("get_weather");
      observer.onCallStart?.(call);
      observer.onCallEnd?.(call, makeEnd({ status: "success", durationMs: 20 }));
      const points = histogramPoints((await telemetry.metrics()).get("gen_ai.execute_tool.duration"));
      expect(points).toMatchObject([{ count: 1, sum: 0.02 }]);
    } finally {
      metrics.disable();
    }
  });
});
