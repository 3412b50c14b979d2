import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { type RetryReflectOptions, RetryReflectPlugin } from "@retry-reflect/core";
import { createFakeClock } from "@retry-reflect/core/testing";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { effectOfAnnotations, withRetryReflect } from "../src/index.js";
import { connect, drive, recordCalls, text } from "./helpers.js";

describe("effectOfAnnotations", () => {
  it.each([
    [{ readOnlyHint: true }, "read"],
    [{ readOnlyHint: true, destructiveHint: true }, "read"],
    [{ idempotentHint: true }, "idempotent"],
    [{ readOnlyHint: false, destructiveHint: true, idempotentHint: true }, "idempotent"],
    [{ destructiveHint: true }, "write"],
    [{ readOnlyHint: false }, "write"], // the spec's defaults for a tool that is not read-only: destructive, not idempotent
    [{ destructiveHint: false }, undefined],
    [{ title: "Search" }, undefined],
    [undefined, undefined],
  ])("%j → %s", (annotations, effect) => {
    expect(effectOfAnnotations(annotations)).toBe(effect);
  });
});

function register(server: McpServer) {
  const ok = async () => text("ok");
  server.registerTool("search", { inputSchema: { q: z.string() }, annotations: { readOnlyHint: true } }, ok);
  server.registerTool("set_status", { inputSchema: { q: z.string() }, annotations: { readOnlyHint: false, idempotentHint: true } }, ok);
  server.registerTool("delete_file", { inputSchema: { q: z.string() }, annotations: { destructiveHint: true } }, ok);
  server.registerTool("plain", { inputSchema: { q: z.string() } }, ok);
}

async function effectsSeen(
  pluginOptions: RetryReflectOptions,
  adapterOptions?: Parameters<typeof withRetryReflect>[2],
): Promise<{ effects: Record<string, string>; listings: number }> {
  const { client } = await connect(register);
  let listings = 0;
  const listTools = client.listTools.bind(client);
  client.listTools = (...args) => {
    listings += 1;
    return listTools(...args);
  };
  const clock = createFakeClock();
  const recorder = recordCalls();
  const plugin = RetryReflectPlugin.create({ clock, observers: [recorder], ...pluginOptions });
  const tools = withRetryReflect(client, plugin, adapterOptions);
  for (const name of ["search", "set_status", "delete_file", "plain"]) {
    await drive(clock, tools.callTool({ name, arguments: { q: "x", idempotency_key: "k" } }));
  }
  return { effects: Object.fromEntries(recorder.calls.map((call) => [call.toolName, call.effect])), listings };
}

describe("tool annotations as effects", () => {
  it("map readOnlyHint → read, idempotentHint → idempotent, destructiveHint → write; fetched with one listTools, then cached", async () => {
    const { effects, listings } = await effectsSeen({});
    expect(effects).toEqual({ search: "read", set_status: "idempotent", delete_file: "write", plain: "read" /* defaultEffect */ });
    expect(listings).toBe(1);
  });

  it("lose to the plugin's toolEffects and tool policies, which lose to the adapter's toolEffects; defaultEffect comes last", async () => {
    const { effects } = await effectsSeen(
      { toolEffects: { search: "write" }, tools: { set_status: { effect: "write" } }, defaultEffect: "idempotent" },
      { toolEffects: { delete_file: "idempotent", search: "idempotent" } },
    );
    expect(effects).toEqual({ search: "idempotent", set_status: "write", delete_file: "idempotent", plain: "idempotent" });
  });

  it("are not fetched when every tool's effect is configured, nor read at all with trustAnnotations: false", async () => {
    const configured = await effectsSeen({ toolEffects: { search: "read", set_status: "read", delete_file: "read", plain: "read" } });
    expect(configured.listings).toBe(0);
    const untrusted = await effectsSeen({ defaultEffect: "write" }, { trustAnnotations: false });
    expect(untrusted.listings).toBe(0);
    expect(untrusted.effects).toEqual({ search: "write", set_status: "write", delete_file: "write", plain: "write" });
  });

  it("decide what a transient failure does: a read is retried in place, and so is a hinted write whose schema takes no key (a derived key guards it)", async () => {
    const calls = { search: 0, drop_table: 0 };
    const { client } = await connect((server) => {
      const flaky = (name: keyof typeof calls) => async () => {
        calls[name] += 1;
        if (calls[name] === 1) throw new Error("HTTP 503 Service Unavailable");
        return text("ok");
      };
      server.registerTool("search", { inputSchema: { q: z.string() }, annotations: { readOnlyHint: true } }, flaky("search"));
      server.registerTool("drop_table", { inputSchema: { q: z.string() }, annotations: { destructiveHint: true } }, flaky("drop_table"));
    });
    const clock = createFakeClock();
    const tools = withRetryReflect(client, { clock });

    const read = await drive(clock, tools.callTool({ name: "search", arguments: { q: "x" } }));
    expect(read.isError).toBeUndefined();
    expect(calls.search).toBe(2);

    // Before, the write was refused with IDEMPOTENCY_KEY_REQUIRED: its schema has no key to give.
    const write = await drive(clock, tools.callTool({ name: "drop_table", arguments: { q: "x" } }));
    expect(write.isError).toBeUndefined();
    expect(calls.drop_table).toBe(2);
  });
});

describe("a listing that fails", () => {
  it("gives no hints for that call (defaultEffect) and is tried again on the next call", async () => {
    const { client } = await connect((server) => {
      server.registerTool("delete_file", { inputSchema: { q: z.string() }, annotations: { destructiveHint: true } }, async () =>
        text("ok"),
      );
    });
    let listings = 0;
    const listTools = client.listTools.bind(client);
    client.listTools = (...args) => {
      listings += 1;
      if (listings === 1) return Promise.reject(new Error("connection reset"));
      return listTools(...args);
    };
    const clock = createFakeClock();
    const recorder = recordCalls();
    const tools = withRetryReflect(client, { clock, observers: [recorder] });

    await drive(clock, tools.callTool({ name: "delete_file", arguments: { q: "x", idempotency_key: "k1" } }));
    await drive(clock, tools.callTool({ name: "delete_file", arguments: { q: "x", idempotency_key: "k1" } }));

    expect(listings).toBe(2);
    expect(recorder.calls.map((call) => call.effect)).toEqual(["read", "write"]);
  });
});
