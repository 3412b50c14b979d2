// Tools from `@ai-sdk/mcp` (2.0.99, pinned in package.json): `createMCPClient().tools()` gives AI
// SDK tools carrying the server's annotations in `metadata.annotations`. Against a real `McpServer`
// of `@modelcontextprotocol/sdk` (1.32.2), in process over its in-memory transport.
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { InvalidOptionError, RetryReflectPlugin } from "@retry-reflect/core";
import { createFakeClock } from "@retry-reflect/core/testing";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { RetryReflectToolError, withRetryReflect } from "../src/index.js";
import { mcpClientOf } from "./mcp-client.js";

/** A server with a destructive `send_email`, a read-only `lookup` and an unannotated `ping`; `sent` counts emails. */
async function connect() {
  const sent: string[] = [];
  const server = new McpServer({ name: "mail", version: "1.0.0" });
  server.registerTool(
    "send_email",
    { description: "Send an email", inputSchema: { to: z.string() }, annotations: { destructiveHint: true, readOnlyHint: false } },
    async ({ to }) => {
      sent.push(to);
      return { content: [{ type: "text", text: `sent to ${to}` }] };
    },
  );
  server.registerTool(
    "lookup",
    { description: "Look up", inputSchema: { id: z.string() }, annotations: { readOnlyHint: true } },
    async () => ({
      content: [{ type: "text", text: "no such id" }],
      isError: true,
    }),
  );
  const client = await mcpClientOf(server);
  return { tools: await client.tools(), sent };
}

/** The execution options of one step of one run (its messages tell the run): a call re-issued in it is the same write. */
const step = [{ role: "user", content: "Email Ana." }];
const options = (toolCallId: string) => ({ toolCallId, messages: step });

describe("tools from @ai-sdk/mcp", () => {
  it("read their MCP annotations as effects: a destructive tool is a write, run once for the same call", async () => {
    const { tools, sent } = await connect();
    expect((tools.send_email as { metadata?: { annotations?: unknown } }).metadata?.annotations).toMatchObject({ destructiveHint: true });
    const plugin = RetryReflectPlugin.create({ clock: createFakeClock() });
    const wrapped = withRetryReflect(tools, plugin);
    const execute = wrapped.send_email?.execute as (input: unknown, options: unknown) => Promise<unknown>;

    const first = await execute({ to: "ana@example.com" }, options("c1"));
    const again = await execute({ to: "ana@example.com" }, options("c2")); // the model re-issues the same write
    expect(sent).toEqual(["ana@example.com"]);
    expect(again).toEqual(first);
    expect(plugin.effectOf("send_email")).toBe("read"); // the plugin itself knows nothing of the server
  });

  it("with trustAnnotations: false, the plugin's defaultEffect applies: the same call runs again", async () => {
    const { tools, sent } = await connect();
    const wrapped = withRetryReflect(tools, RetryReflectPlugin.create({ clock: createFakeClock() }), { trustAnnotations: false });
    const execute = wrapped.send_email?.execute as (input: unknown, options: unknown) => Promise<unknown>;
    await execute({ to: "ana@example.com" }, options("c1"));
    await execute({ to: "ana@example.com" }, options("c2"));
    expect(sent).toEqual(["ana@example.com", "ana@example.com"]);
  });

  it("the plugin's own toolEffects win over the annotations", async () => {
    const { tools, sent } = await connect();
    const plugin = RetryReflectPlugin.create({ clock: createFakeClock(), toolEffects: { send_email: "read" } });
    const execute = withRetryReflect(tools, plugin).send_email?.execute as (input: unknown, options: unknown) => Promise<unknown>;
    await execute({ to: "ana@example.com" }, options("c1"));
    await execute({ to: "ana@example.com" }, options("c2"));
    expect(sent).toHaveLength(2);
  });

  it("an isError result (which @ai-sdk/mcp returns, not throws) reaches the model as a reflection", async () => {
    const { tools } = await connect();
    const execute = withRetryReflect(tools, RetryReflectPlugin.create({ clock: createFakeClock() })).lookup?.execute as (
      input: unknown,
      options: unknown,
    ) => Promise<unknown>;
    const error = await execute({ id: "x" }, options("c1")).then(
      () => undefined,
      (thrown: unknown) => thrown,
    );
    expect(RetryReflectToolError.isInstance(error)).toBe(true);
    expect((error as RetryReflectToolError).message).toContain("The tool 'lookup' failed");
    expect((error as RetryReflectToolError).message).toContain("no such id");
  });

  it("rejects a trustAnnotations that is not a boolean", () => {
    expect(() => withRetryReflect({}, {}, { trustAnnotations: "yes" as never })).toThrow(InvalidOptionError);
    expect(() => withRetryReflect({}, {}, { trustAnnotations: "yes" as never })).toThrow("`trustAnnotations`");
  });
});
