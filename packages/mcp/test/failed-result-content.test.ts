import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js";
import { type RetryReflectOptions, RetryReflectPlugin, ToolError } from "@retry-reflect/core";
import { createFakeClock } from "@retry-reflect/core/testing";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { outcomeResult, structuredToolError, withRetryReflect } from "../src/index.js";
import { connect, drive, errorText, text } from "./helpers.js";

// A failed tool result keeps what the server sent beside its error text (images, resources,
// `structuredContent`, `_meta`) for the caller; the model-facing text and the structured error are
// the same as for a server that sent the error text alone.

const image = (data: string) => ({ type: "image" as const, data: Buffer.from(data).toString("base64"), mimeType: "image/png" });
const resource = {
  type: "resource" as const,
  resource: { uri: "file:///srv/reports/partial.csv", mimeType: "text/csv", text: "id,total\n1,40" },
};
const resourceLink = { type: "resource_link" as const, uri: "file:///srv/logs/render.log", name: "render.log" };

/** The server's structuredContent, kept beside the structured error (which stays `structuredContent`). */
const SERVER_STRUCTURED = "retry-reflect/server-structured-content";

/** One `render` tool that returns `result` (a function of the attempt number at the server). */
async function serverReturning(result: (call: number) => CallToolResult) {
  let calls = 0;
  const { client } = await connect((server) => {
    server.registerTool("render", { inputSchema: { page: z.number() }, annotations: { readOnlyHint: true } }, async () => {
      calls += 1;
      return result(calls);
    });
  });
  return { client, calls: () => calls };
}

async function callOnce(result: (call: number) => CallToolResult, options: RetryReflectOptions = {}) {
  const server = await serverReturning(result);
  const clock = createFakeClock();
  const tools = withRetryReflect(server.client, { clock, ...options });
  const got = await drive(clock, tools.callTool({ name: "render", arguments: { page: 3 } }));
  return { result: got as CallToolResult, calls: server.calls() };
}

describe("a failed result keeps the server's other content, structuredContent and _meta", () => {
  it("a stop (not recoverable): images and resources after the model-facing text, which is the text-only failure's; the structured error as before", async () => {
    const message = "401 Unauthorized: invalid api key";
    const plain = await callOnce(() => errorText(message));
    const rich = await callOnce(() => ({
      content: [{ type: "text", text: message }, image("chart"), resource, resourceLink],
      structuredContent: { request_id: "req-7", partial: true },
      _meta: { "example.com/trace-id": "trace-7" },
      isError: true,
    }));

    expect(rich.calls).toBe(1);
    expect(rich.result.isError).toBe(true);
    expect(rich.result.content).toEqual([plain.result.content[0], image("chart"), resource, resourceLink]);
    expect(rich.result.structuredContent).toEqual(plain.result.structuredContent);
    expect(rich.result.structuredContent).toMatchObject({ error_code: "UNAUTHORIZED", recoverable: false });
    expect(rich.result._meta).toEqual({
      "example.com/trace-id": "trace-7",
      "retry-reflect/outcome": { status: "failed", attempt: 1, reason: "not_recoverable" },
      [SERVER_STRUCTURED]: { request_id: "req-7", partial: true },
    });
  });

  it("a reflection: the server's content and _meta are kept, its text is not repeated beside the prompt", async () => {
    const message = "invalid argument page: expected 1 to 2";
    const rich = await callOnce(() => ({
      content: [{ type: "text", text: message }, image("page-2-preview"), { type: "text", text: "see the preview" }],
      _meta: { "example.com/pages": 2 },
      isError: true,
    }));

    expect(rich.result.structuredContent).toMatchObject({ error_code: "INVALID_ARGUMENTS" });
    expect(rich.result._meta).toMatchObject({ "example.com/pages": 2, "retry-reflect/outcome": { status: "reflect", attempt: 1 } });
    expect(rich.result._meta).not.toHaveProperty(SERVER_STRUCTURED); // the server sent none
    // One text block, the reflection prompt, whose quoted error holds both server texts.
    expect(rich.result.content).toHaveLength(2);
    expect(rich.result.content[1]).toEqual(image("page-2-preview"));
    expect((rich.result.content[0] as { text: string }).text).toContain("see the preview");
  });

  it("the server cannot overwrite the outcome's _meta: the outcome key is the adapter's", async () => {
    const { result } = await callOnce(() => ({
      content: [{ type: "text", text: "401 Unauthorized" }],
      structuredContent: { note: "x" },
      _meta: { "retry-reflect/outcome": { status: "success" }, [SERVER_STRUCTURED]: "forged", "example.com/kept": true },
      isError: true,
    }));
    expect(result._meta).toEqual({
      "example.com/kept": true,
      "retry-reflect/outcome": { status: "failed", attempt: 1, reason: "not_recoverable" },
      [SERVER_STRUCTURED]: { note: "x" },
    });
  });

  it("a structured error from the server (structuredToolError) is the structured error itself: not handed on raw beside it", async () => {
    const { result } = await callOnce(() => {
      const error = structuredToolError(
        new ToolError({ code: "RECORD_NOT_FOUND", message: "No page 3", recoverable: false, details: { password: "hunter2-secret" } }),
      );
      return { ...error, content: [...error.content, image("thumbnail")], _meta: { "example.com/k": 1 } };
    });
    expect(result.structuredContent).toMatchObject({ error_code: "RECORD_NOT_FOUND", recoverable: false });
    expect(result.content.slice(1)).toEqual([image("thumbnail")]);
    expect(result._meta).toEqual({
      "example.com/k": 1,
      "retry-reflect/outcome": { status: "failed", attempt: 1, reason: "not_recoverable" },
    });
    expect(JSON.stringify(result)).not.toContain("hunter2-secret");
  });

  it("after in-place retries run out: what the last attempt's result carried, not an earlier one's", async () => {
    const { result, calls } = await callOnce(
      (call) => ({
        content: [{ type: "text", text: "upstream answered HTTP 503 Service Unavailable" }, image(`frame-${call}`)],
        _meta: { "example.com/attempt": call },
        isError: true,
      }),
      { maxRetries: 2, patienceMs: 0 }, // exactly two in-place retries, then the temporary text
    );
    expect(calls).toBe(3);
    expect(result.structuredContent).toMatchObject({ error_code: "TRANSIENT", recoverable: true });
    expect(result._meta).toMatchObject({ "retry-reflect/outcome": { status: "reflect", attempt: 3 }, "example.com/attempt": 3 });
    expect(result.content.slice(1)).toEqual([image("frame-3")]);
  });

  it("a success the plugin's isFailure turns into a failure keeps the server's content, structuredContent and _meta", async () => {
    const isFailure = (value: unknown) => (value as CallToolResult).structuredContent?.status === "error";
    const { result, calls } = await callOnce(
      () => ({
        content: [{ type: "text", text: "render stopped: quota of 3 pages" }, image("page-1")],
        structuredContent: { status: "error", pages: 1 },
        _meta: { "example.com/quota": 3 },
      }),
      { isFailure, maxRetries: 0 },
    );
    expect(calls).toBe(1);
    expect(result.isError).toBe(true);
    expect(result.structuredContent).toHaveProperty("error_code");
    expect(result.content.slice(1)).toEqual([image("page-1")]);
    expect(result._meta).toMatchObject({ "example.com/quota": 3, [SERVER_STRUCTURED]: { status: "error", pages: 1 } });
  });

  it("nothing of an earlier attempt stays when the last attempt threw (its failure has no result)", async () => {
    let calls = 0;
    const client = {
      callTool: async (): Promise<CallToolResult> => {
        calls += 1;
        if (calls === 1)
          return { content: [{ type: "text", text: "HTTP 503" }, image("stale")], _meta: { "example.com/stale": true }, isError: true };
        throw new McpError(ErrorCode.InvalidParams, "page must be a number");
      },
      listTools: async () => ({ tools: [] }),
    };
    const clock = createFakeClock();
    const tools = withRetryReflect(client, { clock });
    const result = (await drive(clock, tools.callTool({ name: "render", arguments: { page: 3 } }))) as CallToolResult;
    expect(calls).toBe(2);
    expect(result.structuredContent).toMatchObject({ error_code: "INVALID_ARGUMENTS" });
    expect(result.content).toHaveLength(1);
    expect(result._meta).toEqual({ "retry-reflect/outcome": { status: "reflect", attempt: 2 } });
  });

  it("a call refused without running (its circuit open) carries no server content from the call that opened it", async () => {
    const server = await serverReturning(() => ({
      content: [{ type: "text", text: "HTTP 503" }, image("opening")],
      _meta: { "example.com/opening": true },
      isError: true,
    }));
    const clock = createFakeClock();
    const plugin = RetryReflectPlugin.create({ clock, maxRetries: 0, circuitBreakerThreshold: 1, circuitBreakerResetMs: 60_000 });
    const opening = (await drive(
      clock,
      withRetryReflect(server.client, plugin).callTool({ name: "render", arguments: { page: 1 } }),
    )) as CallToolResult;
    expect(opening.content).toHaveLength(2);

    const refused = (await drive(
      clock,
      withRetryReflect(server.client, plugin).callTool({ name: "render", arguments: { page: 1 } }),
    )) as CallToolResult;
    expect(server.calls()).toBe(1);
    expect(refused.structuredContent).toMatchObject({ error_code: "CIRCUIT_OPEN", recoverable: true });
    expect(refused.content).toHaveLength(1);
    expect(refused._meta).toEqual({ "retry-reflect/outcome": { status: "reflect", attempt: 1 } });
  });

  it("a success is still the server's result, untouched", async () => {
    const sent = {
      content: [text("rendered").content[0], image("page-3")],
      structuredContent: { pages: 3 },
      _meta: { "example.com/x": 1 },
    };
    const { result } = await callOnce(() => sent as CallToolResult);
    expect(result).toEqual(sent);
  });
});

describe("outcomeResult(outcome, serverResult)", () => {
  const outcome = {
    status: "reflect" as const,
    message: "The tool 'render' failed.",
    prompt: "The tool 'render' failed.",
    error: new ToolError({ code: "TOOL_FAILED", message: "boom", recoverable: true }),
    attempt: 1,
  };

  it("without a server result (or with one that is not an object) is the outcome's text, structured error and outcome _meta alone", () => {
    const alone = outcomeResult(outcome);
    expect(alone).toEqual({
      content: [{ type: "text", text: outcome.message }],
      structuredContent: outcome.error.toJSON(),
      isError: true,
      _meta: { "retry-reflect/outcome": { status: "reflect", attempt: 1 } },
    });
    expect(outcomeResult(outcome, "not a result")).toEqual(alone);
    expect(outcomeResult(outcome, { content: "not an array", _meta: ["not", "a record"] })).toEqual(alone);
  });

  it("skips content items that are not objects, and a server result whose fields throw when read", () => {
    const kept = outcomeResult(outcome, { content: [null, 7, "text", image("ok")] });
    expect(kept.content).toEqual([{ type: "text", text: outcome.message }, image("ok")]);
    const hostile = {
      get content(): never {
        throw new Error("hostile getter");
      },
    };
    expect(outcomeResult(outcome, hostile)).toEqual(outcomeResult(outcome));
  });
});
