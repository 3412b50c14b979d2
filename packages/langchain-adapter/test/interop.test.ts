import { AIMessage, ToolMessage } from "@langchain/core/messages";
import { fakeModel } from "@langchain/core/testing";
import { tool } from "@langchain/core/tools";
import { Command } from "@langchain/langgraph";
import { RetryReflectPlugin } from "@retry-reflect/core";
import { createFakeClock } from "@retry-reflect/core/testing";
import { createAgent, createMiddleware, toolErrorMiddleware, toolRetryMiddleware } from "langchain";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { retryReflectMiddleware } from "../src/index.js";
import { callTools, drive, fieldOf, recordEvents } from "./helpers.js";

function flaky(failures: number) {
  const counter = { calls: 0 };
  const search = tool(
    async ({ query }) => {
      counter.calls += 1;
      if (counter.calls <= failures) throw Object.assign(new Error("upstream unavailable"), { status: 503 });
      return `results for ${query}`;
    },
    { name: "search", description: "Search.", schema: z.object({ query: z.string() }) },
  );
  return { counter, search };
}

function searchModel() {
  return fakeModel()
    .respond(callTools({ name: "search", args: { query: "q" }, id: "call_1" }))
    .respond(new AIMessage("ok"));
}

describe("beside LangChain's own tool middleware", () => {
  it("stacking toolRetryMiddleware inside ours multiplies attempts: each of our attempts is up to (its maxRetries + 1) tool calls", async () => {
    const clock = createFakeClock();
    const recorder = recordEvents();
    const plugin = RetryReflectPlugin.create({ clock, observers: [recorder] });
    const { counter, search } = flaky(3);
    const agent = createAgent({
      model: searchModel(),
      tools: [search],
      middleware: [retryReflectMiddleware(plugin), toolRetryMiddleware({ maxRetries: 1, initialDelayMs: 0, onFailure: "error" })],
    });
    const result = await drive(clock, agent.invoke({ messages: [{ role: "user", content: "q" }] }));
    expect((result.messages[2] as ToolMessage).content).toBe("results for q");
    expect(counter.calls).toBe(4); // 2 of our attempts x 2 calls each
    expect(recorder.events.map((event) => [event.type, fieldOf(event, "attempt")])).toEqual([
      ["retry", 1],
      ["retry_succeeded", 2],
    ]);
  });

  it("toolErrorMiddleware inside ours turns errors into error messages, which ours still treats as failures", async () => {
    const clock = createFakeClock();
    const recorder = recordEvents();
    const plugin = RetryReflectPlugin.create({ clock, observers: [recorder] });
    const { counter, search } = flaky(1);
    const agent = createAgent({
      model: searchModel(),
      tools: [search],
      middleware: [retryReflectMiddleware(plugin), toolErrorMiddleware({ onError: () => "Search is temporarily unavailable, try again." })],
    });
    const result = await drive(clock, agent.invoke({ messages: [{ role: "user", content: "q" }] }));
    // Its message hides the HTTP status, so the failure is not seen as transient: a reflection, not an in-place retry.
    const message = result.messages[2] as ToolMessage;
    expect(message.status).toBe("error");
    expect(String(message.content)).toContain("Search is temporarily unavailable, try again.");
    expect(counter.calls).toBe(1);
    expect(recorder.events.map((event) => event.fields)).toEqual([expect.objectContaining({ mode: "reflect", error_code: "TOOL_FAILED" })]);
  });

  it("toolErrorMiddleware outside ours never sees an in-scope tool's error: ours answers first", async () => {
    const clock = createFakeClock();
    // No in-place retry (no patience, no floor): the call ends at its first failure.
    const plugin = RetryReflectPlugin.create({ clock, maxRetries: 0, patienceMs: 0 });
    const { counter, search } = flaky(99);
    const seen: unknown[] = [];
    const agent = createAgent({
      model: searchModel(),
      tools: [search],
      middleware: [toolErrorMiddleware({ onError: (error) => void seen.push(error) }), retryReflectMiddleware(plugin)],
    });
    const result = await drive(clock, agent.invoke({ messages: [{ role: "user", content: "q" }] }));
    expect(seen).toEqual([]);
    expect(counter.calls).toBe(1);
    const message = result.messages[2] as ToolMessage;
    expect(message.status).toBe("error");
    expect(message.artifact).toMatchObject({ error_code: "TRANSIENT", recoverable: true });
    expect(message.response_metadata).toMatchObject({ retry_reflect: { status: "reflect" } });
  });

  it("a Command returned by a tool passes through untouched", async () => {
    const clock = createFakeClock();
    const plugin = RetryReflectPlugin.create({ clock });
    let command: Command | undefined;
    const handoff = tool(
      async (_input, config) => {
        command = new Command({
          update: { messages: [new ToolMessage({ content: "handed off", tool_call_id: String(config.toolCall?.id) })] },
        });
        return command;
      },
      { name: "handoff", description: "Hand off.", schema: z.object({}) },
    );
    const seen: unknown[] = [];
    const outer = createMiddleware({
      name: "outer",
      wrapToolCall: async (request, handler) => {
        const result = await handler(request);
        seen.push(result);
        return result;
      },
    });
    const model = fakeModel()
      .respond(callTools({ name: "handoff", args: {}, id: "call_1" }))
      .respond(new AIMessage("ok"));
    const agent = createAgent({ model, tools: [handoff], middleware: [outer, retryReflectMiddleware(plugin)] });
    const result = await drive(clock, agent.invoke({ messages: [{ role: "user", content: "go" }] }));
    expect(seen).toHaveLength(1);
    expect(seen[0]).toBe(command);
    expect((result.messages[2] as ToolMessage).content).toBe("handed off");
  });
});
