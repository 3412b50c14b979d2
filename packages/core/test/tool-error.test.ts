import { describe, expect, it } from "vitest";
import { createToolError, type ToolErrorJSON } from "../src/errors/tool-error.js";
import { ErrorCodes, RetriesExhaustedError, ToolError } from "../src/index.js";
import { isToolErrorShape } from "../src/primitives.js";

describe("ToolError", () => {
  it("is an Error carrying the structured fields", () => {
    const cause = new Error("upstream 404");
    const error = new ToolError({
      code: "RECORD_NOT_FOUND",
      message: "No order 1234",
      recoverable: true,
      suggestedAction: "Search orders by customer email.",
      cause,
    });
    expect(error).toBeInstanceOf(Error);
    expect(error.name).toBe("ToolError");
    expect(error.message).toBe("No order 1234");
    expect(error.code).toBe("RECORD_NOT_FOUND");
    expect(error.recoverable).toBe(true);
    expect(error.suggestedAction).toBe("Search orders by customer email.");
    expect(error.cause).toBe(cause);
    expect(error.retryAfterMs).toBeUndefined();
    expect(error.details).toBeUndefined();
    expect(ToolError.isInstance(error)).toBe(true);
  });

  it("derives its kind from standard codes, unless given", () => {
    expect(new ToolError({ code: ErrorCodes.INVALID_ARGUMENTS, message: "m", recoverable: true }).kind).toBe("invalid_arguments");
    expect(new ToolError({ code: ErrorCodes.RATE_LIMITED, message: "m", recoverable: true }).kind).toBe("transient");
    expect(new ToolError({ code: ErrorCodes.TIMEOUT, message: "m", recoverable: true }).kind).toBe("transient");
    expect(new ToolError({ code: ErrorCodes.TRANSIENT, message: "m", recoverable: true }).kind).toBe("transient");
    expect(new ToolError({ code: "QUOTA_EXCEEDED", message: "m", recoverable: false }).kind).toBe("other");
    expect(new ToolError({ code: "UPSTREAM_FLAKY", message: "m", recoverable: true, kind: "transient" }).kind).toBe("transient");
  });

  it("toJSON gives the seed's snake_case shape, without optional members when absent", () => {
    const error = new ToolError({
      code: "RECORD_NOT_FOUND",
      message: "No order 1234",
      recoverable: false,
      suggestedAction: "Tell the user.",
    });
    expect(error.toJSON()).toStrictEqual({
      error_code: "RECORD_NOT_FOUND",
      message: "No order 1234",
      recoverable: false,
      suggested_action: "Tell the user.",
    });
    expect(Object.keys(error.toJSON())).toEqual(["error_code", "message", "recoverable", "suggested_action"]);
  });

  it("toJSON includes retry_after_ms and details when present", () => {
    const error = new ToolError({
      code: "RATE_LIMITED",
      message: "Too many requests",
      recoverable: true,
      suggestedAction: "Wait, then call again.",
      retryAfterMs: 2_000,
      details: { limit: 60, window: "1m" },
    });
    expect(error.toJSON()).toStrictEqual({
      error_code: "RATE_LIMITED",
      message: "Too many requests",
      recoverable: true,
      suggested_action: "Wait, then call again.",
      retry_after_ms: 2_000,
      details: { limit: 60, window: "1m" },
    });
  });

  it("includes retry_after_ms: 0 (retry now) rather than dropping it", () => {
    expect(new ToolError({ code: "RATE_LIMITED", message: "m", recoverable: true, retryAfterMs: 0 }).toJSON().retry_after_ms).toBe(0);
  });

  it("an omitted suggestedAction is an empty string in JSON, never undefined", () => {
    const json = new ToolError({ code: "X", message: "m", recoverable: true }).toJSON();
    expect(json.suggested_action).toBe("");
  });

  it("JSON.stringify uses toJSON and never leaks the cause", () => {
    const error = new ToolError({
      code: "TOOL_FAILED",
      message: "failed",
      recoverable: true,
      suggestedAction: "retry",
      cause: new Error("password=hunter2 in the original"),
    });
    const text = JSON.stringify(error);
    expect(JSON.parse(text)).toEqual({ error_code: "TOOL_FAILED", message: "failed", recoverable: true, suggested_action: "retry" });
    expect(text).not.toContain("hunter2");
  });

  it("fromJSON(toJSON()) round-trips every field", () => {
    const original = new ToolError({
      code: "RATE_LIMITED",
      message: "Too many requests",
      recoverable: true,
      suggestedAction: "Wait, then call again.",
      retryAfterMs: 1_500,
      details: { limit: 60 },
    });
    const copy = ToolError.fromJSON(original.toJSON());
    expect(ToolError.isInstance(copy)).toBe(true);
    expect(copy.toJSON()).toStrictEqual(original.toJSON());
    expect(copy.code).toBe("RATE_LIMITED");
    expect(copy.kind).toBe("transient");
    expect(copy.retryAfterMs).toBe(1_500);
    expect(copy.details).toEqual({ limit: 60 });
  });

  it("fromJSON round-trips through text (what a tool returns over the wire)", () => {
    const json: ToolErrorJSON = {
      error_code: "RECORD_NOT_FOUND",
      message: "No order 1234",
      recoverable: true,
      suggested_action: "Search by email.",
    };
    const parsed = JSON.parse(JSON.stringify(json)) as ToolErrorJSON;
    const error = ToolError.fromJSON(parsed, parsed);
    expect(error.toJSON()).toStrictEqual(json);
    expect(error.cause).toBe(parsed);
  });

  it("fromJSON of an untrusted shape still yields the documented JSON types", () => {
    // A tool (or MCP server) returns loosely typed JSON: wrong member types must not leak through.
    const loose = JSON.parse(
      '{"error_code":"RATE_LIMITED","message":"slow down","recoverable":true,"suggested_action":42,"retry_after_ms":"30","details":"n/a"}',
    ) as ToolErrorJSON;
    const json = ToolError.fromJSON(loose).toJSON();
    expect(typeof json.suggested_action).toBe("string");
    expect(json.retry_after_ms === undefined || typeof json.retry_after_ms === "number").toBe(true);
    expect(json.details === undefined || (typeof json.details === "object" && json.details !== null)).toBe(true);
    const negative = ToolError.fromJSON({ error_code: "X", message: "m", recoverable: true, suggested_action: "s", retry_after_ms: -5 });
    expect(negative.retryAfterMs).toBeUndefined();
  });
});

describe("isToolErrorShape", () => {
  it("needs error_code, message and recoverable of the right types", () => {
    expect(isToolErrorShape({ error_code: "X", message: "m", recoverable: false, suggested_action: "s" })).toBe(true);
    expect(isToolErrorShape({ error_code: "X", message: "m", recoverable: false })).toBe(true);
    expect(isToolErrorShape({ error_code: "X", message: "m", recoverable: "false" })).toBe(false);
    expect(isToolErrorShape({ error_code: 1, message: "m", recoverable: false })).toBe(false);
    expect(isToolErrorShape({ message: "m", recoverable: false })).toBe(false);
    expect(isToolErrorShape(null)).toBe(false);
    expect(isToolErrorShape("error_code")).toBe(false);
  });
});

describe("RetriesExhaustedError", () => {
  it("names the tool, the attempts and the last error", () => {
    const last = new ToolError({ code: "TRANSIENT", message: "ECONNRESET", recoverable: true });
    const error = new RetriesExhaustedError({ toolName: "get_weather", attempts: 4, error: last });
    expect(error).toBeInstanceOf(Error);
    expect(error.name).toBe("RetriesExhaustedError");
    expect(error.message).toBe("Tool 'get_weather' failed 4 times: ECONNRESET");
    expect(error.toolName).toBe("get_weather");
    expect(error.attempts).toBe(4);
    expect(error.error).toBe(last);
    expect(error.cause).toBe(last);
  });
});

describe("createToolError (the engine's stackless errors)", () => {
  it("looks like new ToolError(init) to a user, without a stack", () => {
    const init = { code: "CIRCUIT_OPEN", message: "open", recoverable: false, suggestedAction: "wait", retryAfterMs: 5, cause: "why" };
    const made = createToolError(init);
    const constructed = new ToolError(init);
    expect(made).toBeInstanceOf(ToolError);
    expect(made).toBeInstanceOf(Error);
    expect(ToolError.isInstance(made)).toBe(true);
    expect(made.toJSON()).toEqual(constructed.toJSON());
    expect(String(made)).toBe(String(constructed));
    expect(Object.keys(made).filter((key) => key !== "message")).toEqual(Object.keys(constructed));
    expect(made.message).toBe("open");
    expect(made.cause).toBe("why");
    expect(made.stack).toBeUndefined();
  });
});
