import { afterEach, describe, expect, it, vi } from "vitest";
import { EVENT_MESSAGES, formatEvent, type RetryReflectEvent } from "../src/events.js";
import { consoleLogger } from "../src/index.js";

type EventOfType<T extends RetryReflectEvent["type"]> = Extract<RetryReflectEvent, { type: T }>;

function event<T extends RetryReflectEvent["type"]>(type: T, fields: EventOfType<T>["fields"]): EventOfType<T> {
  const { level, message } = EVENT_MESSAGES[type];
  return { type, level, message, toolName: String(fields.tool_name), time: 0, call: undefined, fields } as unknown as EventOfType<T>;
}

afterEach(() => {
  vi.restoreAllMocks();
});

describe("formatEvent: the seed's log lines", () => {
  it("retry", () => {
    const line = formatEvent(
      event("retry", {
        tool_name: "get_weather",
        attempt: 1,
        max: 3,
        backoff_ms: 500,
        error: "Invalid units",
        error_code: "INVALID_ARGUMENTS",
        mode: "reflect",
      }),
    );
    expect(line).toBe(
      'WARN retry_reflect: tool call failed, retrying tool_name=get_weather attempt=1 max=3 backoff_ms=500 error="Invalid units" error_code=INVALID_ARGUMENTS mode=reflect',
    );
  });

  it("retry_succeeded", () => {
    expect(formatEvent(event("retry_succeeded", { tool_name: "get_weather", attempt: 2 }))).toBe(
      "INFO retry_reflect: retry succeeded tool_name=get_weather attempt=2",
    );
  });

  it("circuit_opened", () => {
    expect(formatEvent(event("circuit_opened", { tool_name: "broken_api", failures: 5, reset_ms: 60_000 }))).toBe(
      "WARN retry_reflect: circuit breaker opened tool_name=broken_api failures=5 reset_ms=60000",
    );
  });

  it("circuit_half_opened and circuit_closed", () => {
    expect(formatEvent(event("circuit_half_opened", { tool_name: "broken_api" }))).toBe(
      "INFO retry_reflect: circuit breaker half-open tool_name=broken_api",
    );
    expect(formatEvent(event("circuit_closed", { tool_name: "broken_api" }))).toBe(
      "INFO retry_reflect: circuit breaker closed tool_name=broken_api",
    );
  });

  it("call_rejected", () => {
    expect(formatEvent(event("call_rejected", { tool_name: "broken_api", retry_after_ms: 42_000 }))).toBe(
      "WARN retry_reflect: call rejected, circuit open tool_name=broken_api retry_after_ms=42000",
    );
  });

  it("retries_exhausted", () => {
    expect(formatEvent(event("retries_exhausted", { tool_name: "flaky_api", attempts: 4, error: "ECONNRESET" }))).toBe(
      'WARN retry_reflect: retries exhausted tool_name=flaky_api attempts=4 error="ECONNRESET"',
    );
  });

  it("idempotent_replay and idempotency_conflict", () => {
    expect(formatEvent(event("idempotent_replay", { tool_name: "send_email" }))).toBe(
      "INFO retry_reflect: idempotent replay tool_name=send_email",
    );
    expect(formatEvent(event("idempotency_conflict", { tool_name: "send_email", reason: "key_reused" }))).toBe(
      "WARN retry_reflect: idempotency conflict tool_name=send_email reason=key_reused",
    );
  });

  it("uses another target when asked (the seed's adk_retry_reflect)", () => {
    expect(formatEvent(event("retry_succeeded", { tool_name: "get_weather", attempt: 2 }), "adk_retry_reflect")).toBe(
      "INFO adk_retry_reflect: retry succeeded tool_name=get_weather attempt=2",
    );
  });
});

describe("formatEvent: quoting", () => {
  it("quotes a string value with spaces or other non-bare characters", () => {
    expect(formatEvent(event("circuit_closed", { tool_name: "my tool" }))).toBe(
      'INFO retry_reflect: circuit breaker closed tool_name="my tool"',
    );
    expect(formatEvent(event("circuit_closed", { tool_name: "a=b" }))).toBe('INFO retry_reflect: circuit breaker closed tool_name="a=b"');
    expect(formatEvent(event("circuit_closed", { tool_name: "" }))).toBe('INFO retry_reflect: circuit breaker closed tool_name=""');
  });

  it("leaves names such as mcp.server/tool-name bare", () => {
    expect(formatEvent(event("circuit_closed", { tool_name: "mcp.github/create-issue_v2" }))).toBe(
      "INFO retry_reflect: circuit breaker closed tool_name=mcp.github/create-issue_v2",
    );
  });

  it("always quotes error, even a single word", () => {
    const line = formatEvent(event("retries_exhausted", { tool_name: "t", attempts: 1, error: "timeout" }));
    expect(line).toContain('error="timeout"');
  });

  it("keeps one event on one line: quotes and newlines in a value are escaped", () => {
    const line = formatEvent(
      event("retry", {
        tool_name: "evil\nINFO retry_reflect: retry succeeded",
        attempt: 1,
        max: 3,
        backoff_ms: 500,
        error: 'bad "units"\nWARN forged line',
        error_code: "INVALID_ARGUMENTS",
        mode: "in_place",
      }),
    );
    expect(line.split("\n")).toHaveLength(1);
    expect(line).toContain(String.raw`tool_name="evil\nINFO retry_reflect: retry succeeded"`);
    expect(line).toContain(String.raw`error="bad \"units\"\nWARN forged line"`);
  });

  it("prints fields in their documented order", () => {
    const line = formatEvent(
      event("retry", { tool_name: "t", attempt: 2, max: 3, backoff_ms: 1000, error: "e", error_code: "TRANSIENT", mode: "in_place" }),
    );
    const keys = [...line.matchAll(/ (\w+)=/g)].map((match) => match[1]);
    expect(keys).toEqual(["tool_name", "attempt", "max", "backoff_ms", "error", "error_code", "mode"]);
  });
});

describe("consoleLogger", () => {
  it("writes WARN events with console.warn and INFO events with console.info", () => {
    const warn = vi.spyOn(console, "warn").mockImplementation(() => {});
    const info = vi.spyOn(console, "info").mockImplementation(() => {});
    const logger = consoleLogger();
    logger.onEvent?.(event("circuit_opened", { tool_name: "broken_api", failures: 5, reset_ms: 60_000 }));
    logger.onEvent?.(event("retry_succeeded", { tool_name: "get_weather", attempt: 2 }));
    expect(warn.mock.calls).toEqual([["WARN retry_reflect: circuit breaker opened tool_name=broken_api failures=5 reset_ms=60000"]]);
    expect(info.mock.calls).toEqual([["INFO retry_reflect: retry succeeded tool_name=get_weather attempt=2"]]);
  });

  it("sends each line and its event to a custom writer, with a custom target", () => {
    const lines: Array<[string, RetryReflectEvent]> = [];
    const logger = consoleLogger({ write: (line, logged) => lines.push([line, logged]), target: "agent" });
    const opened = event("circuit_opened", { tool_name: "broken_api", failures: 5, reset_ms: 60_000 });
    logger.onEvent?.(opened);
    expect(lines).toEqual([["WARN agent: circuit breaker opened tool_name=broken_api failures=5 reset_ms=60000", opened]]);
  });

  it("only listens to events (no call hooks that would cost per call)", () => {
    const logger = consoleLogger({ write: () => {} });
    expect(logger.onCallStart).toBeUndefined();
    expect(logger.onCallEnd).toBeUndefined();
    expect(logger.runInContext).toBeUndefined();
  });
});
