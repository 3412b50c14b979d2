import { AIMessage } from "@langchain/core/messages";
import { fakeModel } from "@langchain/core/testing";
import { tool } from "@langchain/core/tools";
import { MemorySaver } from "@langchain/langgraph";
import { InvalidOptionError, RetryReflectPlugin } from "@retry-reflect/core";
import { createFakeClock } from "@retry-reflect/core/testing";
import { createAgent } from "langchain";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { retryReflectMiddleware, type ScopeInput, withRetryReflect } from "../src/index.js";
import { callTools, drive, fieldOf, recordEvents } from "./helpers.js";

describe("retryReflectMiddleware options", () => {
  it("rejects invalid options, naming the option and the value", () => {
    expect(() => retryReflectMiddleware({ maxRetries: -1 })).toThrow(InvalidOptionError);
    expect(() => retryReflectMiddleware({ maxRetries: -1 })).toThrow(/maxRetries.*-1/);
    expect(() => retryReflectMiddleware({ name: "" })).toThrow(/`name`/);
    expect(() => retryReflectMiddleware(RetryReflectPlugin.create(), { scope: "" })).toThrow(/`scope`.*""/);
    expect(() => retryReflectMiddleware({ namespace: 7 as never })).toThrow(/`namespace`.*7/);
    expect(() => retryReflectMiddleware({ toolContext: "some" as never })).toThrow(/`toolContext`.*"some"/);
  });

  it("withRetryReflect rejects invalid options and non-tools, naming them", () => {
    const plugin = RetryReflectPlugin.create();
    const noop = tool(async () => "ok", { name: "noop", description: "No-op.", schema: z.object({}) });
    expect(() => withRetryReflect(noop, plugin, { effect: "delete" as never })).toThrow(/`effect`.*"delete"/);
    expect(() => withRetryReflect(noop, plugin, { scope: 3 as never })).toThrow(/`scope`/);
    expect(() => withRetryReflect(noop, plugin, { toolContext: "none" as never })).toThrow(/`toolContext`.*"none"/);
    expect(() => withRetryReflect(null as never, plugin)).toThrow(/LangChain tool.*null/);
    expect(() => withRetryReflect(noop, { maxBackoffMs: Number.NaN })).toThrow(/maxBackoffMs.*NaN/);
  });

  it("scopes attempts to one run by default, and to whatever a custom `scope` returns", async () => {
    const run = async (scope?: (input: ScopeInput) => string) => {
      const clock = createFakeClock();
      const recorder = recordEvents();
      const plugin = RetryReflectPlugin.create({ clock, observers: [recorder] });
      const failing = tool(
        async () => {
          throw new Error("report generation failed");
        },
        { name: "report", description: "Build a report.", schema: z.object({}) },
      );
      const model = fakeModel();
      for (let turn = 1; turn <= 2; turn++)
        model.respond(callTools({ name: "report", args: {}, id: `call_${turn}` })).respond(new AIMessage(`turn ${turn}`));
      const agent = createAgent({
        model,
        tools: [failing],
        middleware: [retryReflectMiddleware(plugin, scope === undefined ? {} : { scope })],
        checkpointer: new MemorySaver(),
      });
      const config = { configurable: { thread_id: "thread-9" } };
      await drive(clock, agent.invoke({ messages: [{ role: "user", content: "report please" }] }, config));
      await drive(clock, agent.invoke({ messages: [{ role: "user", content: "again" }] }, config));
      return recorder.events.filter((event) => event.type === "retry").map((event) => fieldOf(event, "attempt"));
    };

    expect(await run()).toEqual([1, 1]); // two runs of one thread: two scopes
    const seen: ScopeInput[] = [];
    const perThread = (input: ScopeInput) => {
      seen.push(input);
      return `thread:${input.threadId}`;
    };
    expect(await run(perThread)).toEqual([1, 2]); // one scope per thread: the second run goes on counting
    expect(seen.map((input) => [input.threadId, input.toolCall.id])).toEqual([
      ["thread-9", "call_1"],
      ["thread-9", "call_2"],
    ]);
    expect(seen[0]?.runId).toEqual(expect.any(String));
    expect(seen[0]?.runId).not.toBe(seen[1]?.runId);
  });
});
