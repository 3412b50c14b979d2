import { ToolError } from "@retry-reflect/core";
import { createFakeClock } from "@retry-reflect/core/testing";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { structuredToolError, withRetryReflect } from "../src/index.js";
import { connect, drive, firstText } from "./helpers.js";

describe("structuredToolError, for MCP servers", () => {
  it("keeps a ToolError's code, recoverable, suggested action, retry_after_ms and details; the text block is the same JSON", () => {
    const result = structuredToolError(
      new ToolError({
        code: "QUOTA_EXCEEDED",
        message: "Daily quota of 100 lookups used",
        recoverable: true,
        suggestedAction: "Wait until tomorrow or ask the user to raise the quota.",
        retryAfterMs: 2_000,
        details: { quota: 100 },
      }),
    );
    const json = {
      error_code: "QUOTA_EXCEEDED",
      message: "Daily quota of 100 lookups used",
      recoverable: true,
      suggested_action: "Wait until tomorrow or ask the user to raise the quota.",
      retry_after_ms: 2_000,
      details: { quota: 100 },
    };
    expect(result).toEqual({ content: [{ type: "text", text: JSON.stringify(json) }], structuredContent: json, isError: true });
  });

  it("classifies other errors as the core does, and cleans their text (no stack lines, secrets redacted)", () => {
    const transient = structuredToolError(new Error("upstream: HTTP 503 Service Unavailable"));
    expect(transient.structuredContent).toMatchObject({ error_code: "TRANSIENT", recoverable: true });

    const leaky = new Error("request to https://api.example.com/?token=abc123secret failed");
    leaky.stack = `${leaky.message}\n    at fetchIt (/srv/app.js:1:1)`;
    const cleaned = structuredToolError(leaky).structuredContent as { message: string; error_code: string };
    expect(cleaned.error_code).toBe("TOOL_FAILED");
    expect(cleaned.message).not.toContain("abc123secret");
    expect(cleaned.message).not.toContain("at fetchIt");

    expect(structuredToolError("plain text").structuredContent).toMatchObject({ error_code: "TOOL_FAILED", message: "plain text" });
    expect(
      structuredToolError({ error_code: "RECORD_NOT_FOUND", message: "No order 7", recoverable: false, suggested_action: "Stop." })
        .structuredContent,
    ).toEqual({ error_code: "RECORD_NOT_FOUND", message: "No order 7", recoverable: false, suggested_action: "Stop." });
    expect(structuredToolError(new Error("x"), { structuredContent: false }).structuredContent).toBeUndefined();
  });

  it("a server returning it keeps its error_code, recoverable and retry_after_ms through the adapter", async () => {
    let calls = 0;
    const { client } = await connect((server) => {
      server.registerTool("orders", { inputSchema: { id: z.string() } }, async ({ id }) => {
        calls += 1;
        if (id === "7") return structuredToolError(new ToolError({ code: "RECORD_NOT_FOUND", message: "No order 7", recoverable: false }));
        return structuredToolError(
          new ToolError({ code: "QUOTA_EXCEEDED", message: "Quota used", recoverable: true, retryAfterMs: 2_000 }),
        );
      });
    });
    const clock = createFakeClock();
    const tools = withRetryReflect(client, { clock });

    const quota = await drive(clock, tools.callTool({ name: "orders", arguments: { id: "1" } }));
    expect(quota.structuredContent).toMatchObject({ error_code: "QUOTA_EXCEEDED", recoverable: true, retry_after_ms: 2_000 });
    expect(quota._meta).toEqual({ "retry-reflect/outcome": { status: "reflect", attempt: 1 } });

    const missing = await drive(clock, tools.callTool({ name: "orders", arguments: { id: "7" } }));
    expect(missing.structuredContent).toMatchObject({ error_code: "RECORD_NOT_FOUND", recoverable: false });
    expect(missing._meta).toMatchObject({ "retry-reflect/outcome": { status: "failed", reason: "not_recoverable" } });
    expect(firstText(missing)).toContain('"error_code":"RECORD_NOT_FOUND"');
    expect(calls).toBe(2);
  });

  it("is read from the text block too, when a result carries no structuredContent", async () => {
    const { client } = await connect((server) => {
      server.registerTool("orders", { inputSchema: { id: z.string() } }, async () =>
        structuredToolError(new ToolError({ code: "RECORD_NOT_FOUND", message: "No order 7", recoverable: false }), {
          structuredContent: false,
        }),
      );
    });
    const clock = createFakeClock();
    const result = await drive(clock, withRetryReflect(client, { clock }).callTool({ name: "orders", arguments: { id: "7" } }));
    expect(result.structuredContent).toMatchObject({ error_code: "RECORD_NOT_FOUND", recoverable: false });
  });
});

describe("structuredToolError with details JSON cannot write", () => {
  it("a cycle, a BigInt or nesting past the stack never throws: the details are replaced, said so", () => {
    const cyclic: Record<string, unknown> = { a: 1 };
    cyclic.self = cyclic;
    let deep: Record<string, unknown> = {};
    const root = deep;
    for (let level = 0; level < 20_000; level++) {
      const next: Record<string, unknown> = {};
      deep.next = next;
      deep = next;
    }
    for (const details of [cyclic, { n: 1n }, root]) {
      const result = structuredToolError(new ToolError({ code: "UPSTREAM", message: "failed", recoverable: true, details }));
      expect(result.isError).toBe(true);
      expect(JSON.parse((result.content[0] as { text: string }).text)).toMatchObject({
        error_code: "UPSTREAM",
        details: { truncated: "[unserializable]" },
      });
      expect(() => JSON.stringify(result)).not.toThrow();
    }
  });
});
