import { ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js";
import { RetryReflectPlugin } from "@retry-reflect/core";
import { createFakeClock } from "@retry-reflect/core/testing";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { withRetryReflect } from "../src/index.js";
import { connect, drive, recordCalls, text } from "./helpers.js";

describe("the wrapped client's surface", () => {
  it("passes listTools through, and what it returns refreshes the cached annotations (no second listing)", async () => {
    const { client } = await connect((server) => {
      server.registerTool("search", { inputSchema: { q: z.string() }, annotations: { readOnlyHint: true } }, async () => text("ok"));
    });
    let listings = 0;
    const listTools = client.listTools.bind(client);
    client.listTools = (...args) => {
      listings += 1;
      return listTools(...args);
    };
    const clock = createFakeClock();
    const tools = withRetryReflect(client, { clock });

    const listed = await tools.listTools();
    expect(listed.tools.map((tool) => tool.name)).toEqual(["search"]);
    await drive(clock, tools.callTool({ name: "search", arguments: { q: "x" } }));
    expect(listings).toBe(1);
  });

  it("leaves tools the plugin does not handle to the client: their errors pass through untouched, no listing is made", async () => {
    const thrown = new McpError(ErrorCode.InvalidParams, "nope");
    let listings = 0;
    const client = {
      callTool: async () => {
        throw thrown;
      },
      listTools: async () => {
        listings += 1;
        return { tools: [] };
      },
    };
    const tools = withRetryReflect(client, { excludeTools: ["exit_loop"] });
    await expect(tools.callTool({ name: "exit_loop" })).rejects.toBe(thrown);
    expect(listings).toBe(0);
  });

  it("rethrows a URL elicitation request (-32042) untouched: control flow, not a failure", async () => {
    const elicitation = new McpError(ErrorCode.UrlElicitationRequired, "open this URL first");
    const client = {
      callTool: async () => {
        throw elicitation;
      },
      listTools: async () => ({ tools: [] }),
    };
    const plugin = RetryReflectPlugin.create({ clock: createFakeClock() });
    await expect(withRetryReflect(client, plugin).callTool({ name: "connect_drive" })).rejects.toBe(elicitation);
    expect(plugin.circuits.state("connect_drive")).toBe("closed");
  });
});

describe("scope", () => {
  async function scopesSeen(adapterOptions?: Parameters<typeof withRetryReflect>[2], wrappers = 2): Promise<string[]> {
    const { client } = await connect((server) => {
      server.registerTool("search", { inputSchema: { q: z.string() } }, async () => text("ok"));
    });
    const clock = createFakeClock();
    const recorder = recordCalls();
    const plugin = RetryReflectPlugin.create({ clock, observers: [recorder] });
    for (let index = 0; index < wrappers; index++) {
      const tools = withRetryReflect(client, plugin, adapterOptions);
      await drive(clock, tools.callTool({ name: "search", arguments: { q: `run-${index}` } }));
      await drive(clock, tools.callTool({ name: "search", arguments: { q: `run-${index}` } }));
    }
    return recorder.calls.map((call) => call.scope);
  }

  it("is one per wrapped client by default", async () => {
    const [a1, a2, b1, b2] = await scopesSeen();
    expect(a1).toBe(a2);
    expect(b1).toBe(b2);
    expect(a1).not.toBe(b1);
  });

  it("can be a string, or a function of the call", async () => {
    expect(new Set(await scopesSeen({ scope: "run-7" }))).toEqual(new Set(["run-7"]));
    expect(await scopesSeen({ scope: (call) => `${call.toolName}:${String(call.args?.q)}` }, 1)).toEqual(["search:run-0", "search:run-0"]);
  });
});
