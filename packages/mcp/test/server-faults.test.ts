import { createFakeClock } from "@retry-reflect/core/testing";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { withRetryReflect } from "../src/index.js";
import { connect, drive, firstText } from "./helpers.js";

// A server that breaks its own contract is the server's fault, never the model's: the model must
// not be told to change its arguments.

describe("a server fault is not an argument error", () => {
  it("a tool whose result breaks its own output schema: TOOL_FAILED, not recoverable, not INVALID_ARGUMENTS", async () => {
    const { client } = await connect((server) => {
      server.registerTool("get_order", { inputSchema: { id: z.string() }, outputSchema: { total: z.number() } }, async () => ({
        content: [{ type: "text" as const, text: "{}" }],
        structuredContent: { total: "not a number" },
      }));
    });
    const clock = createFakeClock();
    const tools = withRetryReflect(client, { clock, maxRetries: 0 });
    const result = (await drive(clock, tools.callTool({ name: "get_order", arguments: { id: "A-1" } }))) as {
      isError?: boolean;
      structuredContent?: Record<string, unknown>;
    };
    expect(result.isError).toBe(true);
    expect(result.structuredContent).toMatchObject({ error_code: "TOOL_FAILED", recoverable: false });
    expect(firstText(result)).not.toMatch(/correct(ed)? (the )?arguments/i);
  });

  it("a tool whose result is not a CallToolResult at all: TOOL_FAILED, not recoverable", async () => {
    const { client } = await connect((server) => {
      server.registerTool("list_files", { inputSchema: { path: z.string() } }, async () => ({ content: "not an array" }) as never);
    });
    const clock = createFakeClock();
    const tools = withRetryReflect(client, { clock, maxRetries: 0 });
    const result = (await drive(clock, tools.callTool({ name: "list_files", arguments: { path: "/tmp" } }))) as {
      isError?: boolean;
      structuredContent?: Record<string, unknown>;
    };
    expect(result.isError).toBe(true);
    expect(result.structuredContent).toMatchObject({ error_code: "TOOL_FAILED", recoverable: false });
    expect(firstText(result)).not.toMatch(/correct(ed)? (the )?arguments/i);
  });
});

describe("what a failed result or a protocol error stands for is data, made without a stack capture", () => {
  it("a failed result's ToolResultError has its first line as its stack; a -32001 timeout's ToolError has none", async () => {
    const { McpError } = await import("@modelcontextprotocol/sdk/types.js");
    const { failureOfResult, failureOfThrown, ToolResultError } = await import("../src/index.js");
    const failure = failureOfResult({ isError: true, content: [{ type: "text", text: "HTTP 503 Service Unavailable" }] });
    expect(failure).toBeInstanceOf(ToolResultError);
    expect(failure?.stack).toBe("ToolResultError: HTTP 503 Service Unavailable");
    const timeout = failureOfThrown(new McpError(-32001, "Request timed out")) as Error & { code?: string };
    expect(timeout.code).toBe("TIMEOUT");
    expect(timeout.stack).toBeUndefined();
    expect(new Error("after").stack).toContain("\n    at ");
  });
});
