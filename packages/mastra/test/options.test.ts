import { createTool } from "@mastra/core/tools";
import { InMemoryIdempotencyStore, InvalidOptionError, RetryReflectPlugin } from "@retry-reflect/core";
import { createFakeClock } from "@retry-reflect/core/testing";
import { tool as aiTool } from "ai";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { availableTools, getToolContext, RetryReflectToolError, withRetryReflect } from "../src/index.js";

const noop = () =>
  createTool({ id: "noop", description: "Does nothing.", inputSchema: z.object({ x: z.string() }), execute: async () => "ok" });

describe("withRetryReflect's arguments", () => {
  const plugin = RetryReflectPlugin.create({ clock: createFakeClock() });

  it("refuses what is not an object of Mastra tools, naming it", () => {
    expect(() => withRetryReflect([] as never, plugin)).toThrow(InvalidOptionError);
    expect(() => withRetryReflect(null as never, plugin)).toThrow(/`tools`/);
    const aiSdkTool = aiTool({ description: "AI SDK", inputSchema: z.object({}), execute: async () => "ok" });
    expect(() => withRetryReflect({ search: aiSdkTool } as never, plugin)).toThrow(
      /Invalid option `tools.search`.*wrap AI SDK tools with withRetryReflect of @retry-reflect\/ai-sdk/,
    );
    const withoutExecute = createTool({ id: "client_side", description: "Runs on the client.", inputSchema: z.object({}) });
    expect(() => withRetryReflect({ client_side: withoutExecute }, plugin)).toThrow(/`tools.client_side.execute`/);
  });

  it("refuses bad adapter options early, naming the option and the value", () => {
    expect(() => withRetryReflect({ noop: noop() }, plugin, { scope: "" })).toThrow(/`scope`/);
    expect(() => withRetryReflect({ noop: noop() }, plugin, { namespace: 42 as never })).toThrow(/`namespace`.*42/);
    expect(() => withRetryReflect({ noop: noop() }, plugin, { trustAnnotations: "yes" as never })).toThrow(/`trustAnnotations`/);
    expect(() => withRetryReflect({ noop: noop() }, plugin, { toolEffects: { noop: "delete" as never } })).toThrow(/toolEffects/);
    expect(() => withRetryReflect({ noop: noop() }, plugin, { maxRetries: 2 } as never)).toThrow(
      /`maxRetries`.*the plugin's options go in the second argument/,
    );
    expect(() => withRetryReflect({ noop: noop() }, "plugin" as never)).toThrow(/`pluginOrOptions`/);
    expect(() => availableTools("plugin" as never, {})).toThrow(/`plugin`/);
    expect(() => availableTools(plugin, [] as never)).toThrow(/`tools`.*Mastra tools/);
  });
});

describe("a wrapped tool", () => {
  it("stays a Mastra tool with its own fields, and wrapping it again wraps the original (no stacking)", async () => {
    const clock = createFakeClock();
    const plugin = RetryReflectPlugin.create({ clock, maxRetries: 1 });
    const original = noop();
    const originalExecute = original.execute;
    const once = withRetryReflect({ noop: original }, plugin);
    const twice = withRetryReflect(once, plugin);
    expect(twice.noop).toBeInstanceOf(Object.getPrototypeOf(original).constructor);
    expect(twice.noop.id).toBe("noop");
    expect(twice.noop.inputSchema).toBe(original.inputSchema);
    expect(twice.noop.execute).not.toBe(original.execute);
    expect(original.execute).toBe(originalExecute); // the original is untouched
    await expect(twice.noop.execute?.({ x: "a" }, undefined as never)).resolves.toBe("ok");
  });

  it("runs when called by hand, without Mastra's context, and throws the plugin's error for a failure", async () => {
    const clock = createFakeClock();
    const plugin = RetryReflectPlugin.create({ clock });
    const failing = createTool({
      id: "lookup",
      description: "Looks up.",
      inputSchema: z.object({ id: z.string() }),
      execute: async () => {
        throw new Error("Unknown id: use a numeric id");
      },
    });
    const { lookup, ok } = withRetryReflect({ lookup: failing, ok: noop() }, plugin);
    await expect(ok.execute?.({ x: "a" }, undefined as never)).resolves.toBe("ok");
    const error: unknown = await lookup.execute?.({ id: "abc" }, undefined as never).catch((thrown: unknown) => thrown);
    expect(RetryReflectToolError.isInstance(error)).toBe(true);
    expect((error as RetryReflectToolError).status).toBe("reflect");
    expect((error as Error).message).toMatch(/^The tool 'lookup' failed with: "Unknown id: use a numeric id"\./);
  });
});

describe("the attempt's signal", () => {
  it("reaches the tool's function through Mastra's copy of its context, a signal of the attempt's own", async () => {
    const plugin = RetryReflectPlugin.create({ clock: createFakeClock() });
    const run = new AbortController();
    const seen: unknown[] = [];
    const probe = createTool({
      id: "probe",
      description: "Reads its signal.",
      inputSchema: z.object({}),
      execute: async (_input, context) => {
        seen.push(context?.abortSignal, getToolContext(context)?.attempt);
        return "ok";
      },
    });
    const { probe: wrapped } = withRetryReflect({ probe }, plugin);
    await wrapped.execute?.({}, { abortSignal: run.signal, agent: { toolCallId: "call_1" } } as never);
    expect(seen[0]).toBeInstanceOf(AbortSignal);
    expect(seen[0]).not.toBe(run.signal); // the attempt's (it aborts at the attempt's time limit, or with the run)
    expect(seen[1]).toBe(1);
  });
});

describe("MCP annotations (mcp.annotations)", () => {
  function destructive(runs: { count: number }) {
    return createTool({
      id: "delete_record",
      description: "Deletes a record.",
      inputSchema: z.object({ id: z.string() }),
      mcp: { annotations: { destructiveHint: true, readOnlyHint: false } },
      execute: async (_input, context) => {
        runs.count += 1;
        return { deleted: true, key: getToolContext(context)?.idempotencyKey };
      },
    });
  }
  const context = { agent: { toolCallId: "call_1" }, runId: "run-1" } as never;

  it("make a destructive tool a write: the same call re-issued runs once", async () => {
    const clock = createFakeClock();
    const plugin = RetryReflectPlugin.create({ clock, idempotency: { store: new InMemoryIdempotencyStore({ clock }) } });
    const runs = { count: 0 };
    const { delete_record } = withRetryReflect({ delete_record: destructive(runs) }, plugin);
    const first = await delete_record.execute?.({ id: "r1" }, context);
    const second = await delete_record.execute?.({ id: "r1" }, context);
    expect(runs.count).toBe(1);
    expect(second).toEqual(first);
    expect((first as { key?: unknown }).key).toEqual(expect.any(String));
  });

  it("are ignored with trustAnnotations: false (the plugin's defaultEffect applies): it runs twice", async () => {
    const clock = createFakeClock();
    const plugin = RetryReflectPlugin.create({ clock, idempotency: { store: new InMemoryIdempotencyStore({ clock }) } });
    const runs = { count: 0 };
    const { delete_record } = withRetryReflect({ delete_record: destructive(runs) }, plugin, { trustAnnotations: false });
    await delete_record.execute?.({ id: "r1" }, context);
    await delete_record.execute?.({ id: "r1" }, context);
    expect(runs.count).toBe(2);
  });
});
