import { describe, expect, it } from "vitest";
import { ToolError } from "../src/index.js";
import { cleanToolError } from "../src/primitives.js";

// `cleanToolError` (primitives): a tool error as a plugin's sinks show it, for code outside a plugin
// (an MCP server's `structuredToolError`). Its sinks' tests: packages/mcp/test/structured-tool-error.test.ts.

describe("cleanToolError", () => {
  const dirty = new ToolError({
    code: "UPSTREAM_ERROR",
    message: "token ghp_16C7e42F292c6912E7710c838347Ae178B4a\u202e rejected",
    recoverable: true,
    suggestedAction: "Retry with password=hunter2-Qx7",
    retryAfterMs: 2_000,
    details: { pass: "Sm7p-9931", note: "x".repeat(50) },
  });

  it("cleans message, suggested action and details as the plugin's defaults do, and keeps the rest", () => {
    expect(cleanToolError(dirty).toJSON()).toEqual({
      error_code: "UPSTREAM_ERROR",
      message: "token [REDACTED] rejected",
      recoverable: true,
      suggested_action: "Retry with password=[REDACTED]",
      retry_after_ms: 2_000,
      details: { pass: "[REDACTED]", note: "x".repeat(50) },
    });
  });

  it("takes a plugin's maxErrorLength and redact", () => {
    const cleaned = cleanToolError(dirty, { maxErrorLength: 40, redact: (text) => text.replaceAll("x", "y") }).toJSON();
    expect(cleaned.message).toBe("token ghp_16C7e42F292c6912E… [truncated]");
    expect(cleaned.details).toEqual({ pass: "Sm7p-9931", note: `${"y".repeat(27)}… [truncated]` });
  });

  it("never hands the original on, and never throws on a hostile error", () => {
    expect(cleanToolError(dirty).details).not.toBe(dirty.details);
    const hostile = new ToolError({ code: "X", message: "m", recoverable: true });
    Object.defineProperty(hostile, "message", {
      get() {
        throw new Error("exploded");
      },
    });
    expect(cleanToolError(hostile).toJSON()).toMatchObject({ error_code: "TOOL_FAILED", recoverable: false });
  });
});
