import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { openTelemetryObserver } from "../src/index.js";
import { makeCall, makeEnd } from "./helpers/fake-calls.js";
import { createTelemetry, type Telemetry } from "./helpers/telemetry-harness.js";

let telemetry: Telemetry;
beforeEach(() => {
  telemetry = createTelemetry();
});
afterEach(() => telemetry.shutdown());

const ARGS = { to: "ada@example.com", body: "secret plan", idempotency_key: "idem-7f3a9c" };
const RESULT = { messageId: "msg-991", status: "sent" };

function runCall(options: Parameters<typeof openTelemetryObserver>[0]) {
  const observer = openTelemetryObserver({ tracerProvider: telemetry.tracerProvider, ...options });
  const call = makeCall("send_email", { effect: "write", args: ARGS });
  observer.onCallStart?.(call);
  observer.onCallEnd?.(call, makeEnd({ status: "success", value: RESULT }));
  return telemetry.span("execute_tool send_email");
}

describe("content capture", () => {
  it("is off by default: neither arguments nor result appear anywhere in the span", () => {
    const span = runCall({});
    const dump = JSON.stringify({ attributes: span.attributes, events: span.events, status: span.status, name: span.name });
    expect(span.attributes["gen_ai.tool.call.arguments"]).toBeUndefined();
    expect(span.attributes["gen_ai.tool.call.result"]).toBeUndefined();
    for (const secret of ["ada@example.com", "secret plan", "idem-7f3a9c", "msg-991"]) expect(dump).not.toContain(secret);
  });

  it("with captureContent: true records arguments and result as JSON, without the idempotency key", () => {
    const span = runCall({ captureContent: true });
    expect(span.attributes["gen_ai.tool.call.arguments"]).toBe(JSON.stringify({ to: "ada@example.com", body: "secret plan" }));
    expect(span.attributes["gen_ai.tool.call.result"]).toBe(JSON.stringify(RESULT));
    expect(JSON.stringify(span.attributes)).not.toContain("idem-7f3a9c");
  });

  it("removes the fields named in contentExcludeFields", () => {
    const span = runCall({ captureContent: true, contentExcludeFields: ["idempotency_key", "body"] });
    expect(span.attributes["gen_ai.tool.call.arguments"]).toBe(JSON.stringify({ to: "ada@example.com" }));
  });

  it("cuts long content and marks it; an unserialisable value does not throw", () => {
    const observer = openTelemetryObserver({ tracerProvider: telemetry.tracerProvider, captureContent: true, maxContentLength: 32 });
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    const call = makeCall("echo", { args: { text: "x".repeat(100) } });
    observer.onCallStart?.(call);
    observer.onCallEnd?.(call, makeEnd({ status: "success", value: cyclic }));
    const span = telemetry.span("execute_tool echo");
    const args = span.attributes["gen_ai.tool.call.arguments"] as string;
    expect(args).toHaveLength(32);
    expect(args.endsWith("…[truncated]")).toBe(true);
    expect(span.attributes["gen_ai.tool.call.result"]).toBe("[unserializable]");
  });
});
