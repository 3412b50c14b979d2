import { SpanStatusCode } from "@opentelemetry/api";
import { RetryReflectPlugin, ToolError } from "@retry-reflect/core";
import { createFakeClock } from "@retry-reflect/core/testing";
import { afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { openTelemetryObserver } from "../src/index.js";
import { createTelemetry, installContextManager, spanEvents, type Telemetry } from "./helpers/telemetry-harness.js";

let telemetry: Telemetry;
beforeAll(installContextManager);
beforeEach(() => {
  telemetry = createTelemetry();
});
afterEach(() => telemetry.shutdown());

const unavailable = () => new ToolError({ code: "TRANSIENT", message: "upstream 503 Service Unavailable", recoverable: true });

describe("traces a Jaeger user can read", () => {
  it("the call span carries gen_ai.tool.description and gen_ai.tool.type when the caller knows them", async () => {
    const plugin = RetryReflectPlugin.create({ observers: [openTelemetryObserver({ tracerProvider: telemetry.tracerProvider })] });
    await plugin.execute(
      { toolName: "get_weather", args: { city: "Paris" }, description: "Current weather for a city.", toolType: "function" },
      () => "sunny",
    );
    await plugin.execute({ toolName: "plain", args: {} }, () => "ok");
    expect(telemetry.span("execute_tool get_weather").attributes).toMatchObject({
      "gen_ai.tool.description": "Current weather for a city.",
      "gen_ai.tool.type": "function",
    });
    expect(telemetry.span("execute_tool plain").attributes["gen_ai.tool.description"]).toBeUndefined();
    expect(telemetry.span("execute_tool plain").attributes["gen_ai.tool.type"]).toBeUndefined();
  });

  it("spanPerAttempt: one child span per in-place attempt, failed ones with status ERROR and error.type, no error text", async () => {
    const clock = createFakeClock();
    const plugin = RetryReflectPlugin.create({
      clock,
      observers: [openTelemetryObserver({ tracerProvider: telemetry.tracerProvider, spanPerAttempt: true })],
    });
    let calls = 0;
    const outcome = plugin.execute({ toolName: "search", args: {}, callId: "call_1" }, () => {
      calls++;
      if (calls === 1) throw Object.assign(new Error("socket hang up, token=abc123"), { code: "ECONNRESET" });
      if (calls === 2) return unavailable();
      return ["result"];
    });
    await clock.runAll();
    expect((await outcome).status).toBe("success");
    const call = telemetry.span("execute_tool search");
    const attempts = [1, 2, 3].map((index) => telemetry.span(`execute_tool search attempt ${index}`));
    for (const attempt of attempts) {
      expect(attempt.parentSpanContext?.spanId).toBe(call.spanContext().spanId);
      expect(attempt.spanContext().traceId).toBe(call.spanContext().traceId);
    }
    expect(
      attempts.map((attempt) => [attempt.attributes["retry_reflect.attempt.index"], attempt.status.code, attempt.attributes["error.type"]]),
    ).toEqual([
      [1, SpanStatusCode.ERROR, "Error"],
      [2, SpanStatusCode.ERROR, "returned_error"],
      [3, SpanStatusCode.UNSET, undefined],
    ]);
    expect(JSON.stringify(attempts.map((attempt) => [attempt.attributes, attempt.status, attempt.events]))).not.toContain("abc123");
    expect(call.attributes).toMatchObject({ "retry_reflect.attempts": 3, "retry_reflect.outcome": "success" });
  });

  it("spanPerAttempt with attemptTimeoutMs: a hung attempt's span ends at the limit with status ERROR, even if the tool never settles", async () => {
    const clock = createFakeClock();
    const plugin = RetryReflectPlugin.create({
      clock,
      attemptTimeoutMs: 100,
      initialBackoffMs: 10,
      observers: [openTelemetryObserver({ tracerProvider: telemetry.tracerProvider, spanPerAttempt: true })],
    });
    let calls = 0;
    const outcome = plugin.execute({ toolName: "report", args: {} }, () => (++calls === 1 ? new Promise<never>(() => {}) : "done"));
    await clock.advance(100);
    await clock.advance(10);
    expect((await outcome).status).toBe("success");
    const [first, second] = [1, 2].map((index) => telemetry.span(`execute_tool report attempt ${index}`));
    expect(first?.status.code).toBe(SpanStatusCode.ERROR);
    expect(first?.attributes["error.type"]).toBeDefined();
    expect(second?.status.code).toBe(SpanStatusCode.UNSET);
  });

  it("without spanPerAttempt there is one span per call", async () => {
    const plugin = RetryReflectPlugin.create({
      initialBackoffMs: 0,
      observers: [openTelemetryObserver({ tracerProvider: telemetry.tracerProvider })],
    });
    let calls = 0;
    await plugin.execute({ toolName: "search", args: {} }, () => (++calls === 1 ? unavailable() : "ok"));
    expect(telemetry.spans().map((span) => span.name)).toEqual(["execute_tool search"]);
  });

  it("an invalid spanPerAttempt fails early, naming it", () => {
    expect(() => openTelemetryObserver({ spanPerAttempt: "yes" as unknown as boolean })).toThrow(/spanPerAttempt/);
  });

  it("the corrected call's span says it waited out the backoff (waiting before retry, wait_ms)", async () => {
    const clock = createFakeClock();
    const plugin = RetryReflectPlugin.create({ clock, observers: [openTelemetryObserver({ tracerProvider: telemetry.tracerProvider })] });
    const first = await plugin.execute({ toolName: "t", args: {}, callId: "call_1", scope: "run" }, () => {
      throw new Error("Invalid units");
    });
    expect(first.status).toBe("reflect");
    await clock.advance(120); // the model's round trip counts towards the wait
    const second = plugin.execute({ toolName: "t", args: {}, callId: "call_2", scope: "run" }, () => "ok");
    await clock.runAll();
    await second;
    const spans = telemetry.spans().filter((span) => span.name === "execute_tool t");
    expect(spanEvents(spans[1]!)[0]).toEqual({
      name: "waiting before retry",
      attributes: { "gen_ai.tool.name": "t", "retry_reflect.wait_ms": 380 },
    });
  });
});
