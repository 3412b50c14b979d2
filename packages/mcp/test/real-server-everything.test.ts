import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { RetryReflectPlugin } from "@retry-reflect/core";
import { createFakeClock } from "@retry-reflect/core/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { effectOfAnnotations, withRetryReflect } from "../src/index.js";
import { type RealServer, startEverythingServer } from "./helpers/real-servers.js";
import { drive, firstText, recordCalls } from "./helpers.js";

// `@modelcontextprotocol/server-everything` (the MCP reference server) as a child process over
// stdio, its real `Client` wrapped by the adapter.

let server: RealServer;

beforeAll(async () => {
  server = await startEverythingServer();
}, 30_000);

afterAll(async () => {
  await server?.close();
});

function wrap(options: Parameters<typeof RetryReflectPlugin.create>[0] = {}) {
  const clock = createFakeClock();
  const calls = recordCalls();
  const plugin = RetryReflectPlugin.create({ clock, observers: [calls], ...options });
  return { tools: withRetryReflect(server.client, plugin), clock, calls };
}

describe("server-everything, started over stdio", () => {
  it("successes pass through untouched: text, and an image between two texts", async () => {
    const { tools, clock } = wrap();
    for (const params of [
      { name: "echo", arguments: { message: "hello" } },
      { name: "get-tiny-image", arguments: {} },
    ]) {
      const wrapped = await drive(clock, tools.callTool(params));
      expect(wrapped).toEqual(await server.client.callTool(params));
    }
    const image = await drive(clock, tools.callTool({ name: "get-tiny-image", arguments: {} }));
    expect((image.content as Array<{ type: string }>).map((block) => block.type)).toEqual(["text", "image", "text"]);
  });

  it("arguments the server's schema rejects are reflected as INVALID_ARGUMENTS; the corrected call succeeds", async () => {
    const { tools, clock } = wrap();
    const wrong = (await drive(clock, tools.callTool({ name: "get-sum", arguments: { a: "one", b: 2 } }))) as CallToolResult;
    expect(wrong.isError).toBe(true);
    expect(wrong.structuredContent).toMatchObject({ error_code: "INVALID_ARGUMENTS", recoverable: true });
    expect(wrong._meta).toMatchObject({ "retry-reflect/outcome": { status: "reflect", attempt: 1 } });
    expect(firstText(wrong)).toMatch(/provide corrected arguments/);

    const corrected = await drive(clock, tools.callTool({ name: "get-sum", arguments: { a: 1, b: 2 } }));
    expect(corrected.isError).toBeUndefined();
    expect(firstText(corrected)).toContain("3");
  });

  it("its tool annotations are read: the tools that are not read-only nor idempotent come out as writes", async () => {
    const { tools, clock, calls } = wrap();
    const listed = await tools.listTools();
    const byEffect = (effect: string) =>
      listed.tools
        .filter((tool) => effectOfAnnotations(tool.annotations) === effect)
        .map((tool) => tool.name)
        .sort();
    expect(byEffect("write")).toEqual(["simulate-research-query", "toggle-simulated-logging", "toggle-subscriber-updates"]);
    expect(byEffect("idempotent")).toEqual(["gzip-file-as-resource"]);
    expect(byEffect("read")).toContain("echo");

    // The effect each call runs with is the annotation's. Called with arguments the server rejects,
    // so that nothing runs: no research task is started, no file is fetched. (The toggles take no
    // arguments and would toggle: they are not called.)
    for (const params of [
      { name: "echo", arguments: {} },
      { name: "gzip-file-as-resource", arguments: { name: 1 } },
      { name: "simulate-research-query", arguments: {} },
    ]) {
      await drive(clock, tools.callTool(params));
    }
    expect(calls.calls.map((call) => [call.toolName, call.effect])).toEqual([
      ["echo", "read"],
      ["gzip-file-as-resource", "idempotent"],
      ["simulate-research-query", "write"],
    ]);
  });

  it("a result the plugin's isFailure turns into a failure keeps the server's annotated image for the caller", async () => {
    const isFailure = (result: unknown) => firstText(result).startsWith("Error:");
    const { tools, clock } = wrap({ isFailure, maxRetries: 0 });
    const params = { name: "get-annotated-message", arguments: { messageType: "error", includeImage: true } };

    const result = (await drive(clock, tools.callTool(params))) as CallToolResult;
    const sent = await server.client.callTool(params);

    expect(sent.isError).toBeUndefined(); // the server calls it a success
    expect(result.isError).toBe(true);
    expect(result._meta).toMatchObject({ "retry-reflect/outcome": { status: expect.stringMatching(/^(reflect|failed)$/) } });
    expect(firstText(result)).toContain("Error: Operation failed");
    expect(result.content.slice(1)).toEqual((sent.content as unknown[]).filter((block) => (block as { type: string }).type !== "text"));
    expect(result.content[1]).toMatchObject({ type: "image", mimeType: "image/png", annotations: { priority: 0.5 } });
  });
});
