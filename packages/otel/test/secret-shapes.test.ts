import type { ReadableSpan } from "@opentelemetry/sdk-trace-base";
import { type RetryReflectOptions, RetryReflectPlugin, ToolError } from "@retry-reflect/core";
import { createFakeClock, drive } from "@retry-reflect/core/testing";
import { afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { leaksOf, SECRET_SHAPES, type SecretShape } from "../../core/test/helpers/secret-shapes.js";
import { openTelemetryObserver } from "../src/index.js";
import { createTelemetry, installContextManager, type Telemetry } from "./helpers/telemetry-harness.js";

// The secret shapes of issue 50 (the core's table, packages/core/test/helpers/secret-shapes.ts)
// never reach an OpenTelemetry sink: span attributes, span events, span status, log records, and
// with `captureContent: true` the captured arguments and result. Each row goes through a real
// plugin whose observer is `openTelemetryObserver`, wired to in-memory exporters.

let telemetry: Telemetry;
beforeAll(installContextManager);
beforeEach(() => {
  telemetry = createTelemetry();
});
afterEach(() => telemetry.shutdown());

/** Every string the finished spans and the log records hold, by sink. */
function sinks(): Record<string, string> {
  const spans: readonly ReadableSpan[] = telemetry.spans();
  const records = telemetry.logExporter.getFinishedLogRecords();
  return {
    "span attributes": spans.flatMap((span) => Object.values(span.attributes).map(String)).join("\n"),
    "span events": spans
      .flatMap((span) => span.events.flatMap((event) => [event.name, ...Object.values(event.attributes ?? {}).map(String)]))
      .join("\n"),
    "span status": spans.map((span) => span.status.message ?? "").join("\n"),
    "log records": records.flatMap((record) => [String(record.body), ...Object.values(record.attributes).map(String)]).join("\n"),
  };
}

function expectNoLeak(row: SecretShape, route: string): void {
  for (const [sink, text] of Object.entries(sinks())) expect(leaksOf(row, text), `${route}: ${sink}`).toEqual([]);
}

/** One call through a real plugin observed by OpenTelemetry (content captured), driven on a fake clock. */
async function callThroughPlugin(args: Record<string, unknown>, tool: () => unknown, options: RetryReflectOptions = {}) {
  const clock = createFakeClock();
  const observer = openTelemetryObserver({
    tracerProvider: telemetry.tracerProvider,
    loggerProvider: telemetry.loggerProvider,
    captureContent: true,
  });
  const plugin = RetryReflectPlugin.create({ clock, observers: [observer], ...options });
  return drive(clock, plugin.execute({ toolName: "call_api", args, scope: "run" }, tool));
}

describe("the secret shapes of issue 50 are absent from every OpenTelemetry sink", () => {
  it.each(SECRET_SHAPES)("$shape: a thrown error's message, retried and then failed (events, status, log records)", async (row) => {
    const outcome = await callThroughPlugin({ id: 1 }, () => {
      throw new Error(row.text);
    });
    expect(outcome.status).not.toBe("success");
    const exhausted = await callThroughPlugin(
      { id: 1 },
      () => {
        throw new Error(row.text);
      },
      { maxRetries: 0 },
    );
    expect(exhausted.status).toBe("failed");
    expect(sinks()["span status"]).toContain("[REDACTED]");
    expectNoLeak(row, "thrown");
  });

  it.each(SECRET_SHAPES)("$shape: a ToolError's message, suggested action and details", async (row) => {
    const outcome = await callThroughPlugin({ id: 1 }, () => {
      throw new ToolError({
        code: "UPSTREAM_ERROR",
        message: row.text,
        recoverable: true,
        suggestedAction: row.text,
        details: { body: row.text, request: row.value },
      });
    });
    expect(outcome.status).toBe("reflect");
    expect(telemetry.logExporter.getFinishedLogRecords().length).toBeGreaterThan(0);
    expectNoLeak(row, "ToolError");
  });

  it.each(SECRET_SHAPES)("$shape: captureContent, in the arguments and the result", async (row) => {
    const outcome = await callThroughPlugin({ request: row.value, note: row.text, page: 2 }, () => ({ echoed: row.value, text: row.text }));
    expect(outcome.status).toBe("success");
    const span = telemetry.span("execute_tool call_api");
    expect(span.attributes["gen_ai.tool.call.arguments"]).toContain('"page":2');
    expect(span.attributes["gen_ai.tool.call.result"]).toContain("[REDACTED]");
    expectNoLeak(row, "captured content");
    telemetry.spanExporter.reset();
    // A text as the whole value: arguments and result that are a string.
    await callThroughPlugin({ text: row.text }, () => row.text);
    expectNoLeak(row, "captured text");
  });
});
