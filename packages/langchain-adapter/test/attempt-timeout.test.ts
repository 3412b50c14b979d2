import { AIMessage, type ToolMessage } from "@langchain/core/messages";
import { fakeModel } from "@langchain/core/testing";
import { tool } from "@langchain/core/tools";
import { RetryReflectPlugin } from "@retry-reflect/core";
import { createFakeClock } from "@retry-reflect/core/testing";
import { createAgent } from "langchain";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { getToolContext, retryReflectMiddleware } from "../src/index.js";
import { callTools, drive } from "./helpers.js";

// LangChain hands a tool the agent run's signal, not the attempt's: a tool with attemptTimeoutMs
// reads its attempt's signal from getToolContext(), which the adapter provides for it.

describe("a hung read tool under attemptTimeoutMs, through createAgent", () => {
  it("is cut off at the limit, sees its attempt's signal abort through getToolContext(), and is retried in place", async () => {
    const clock = createFakeClock();
    const plugin = RetryReflectPlugin.create({ clock, initialBackoffMs: 100, tools: { generate_report: { attemptTimeoutMs: 1_000 } } });
    const signals: Array<AbortSignal | undefined> = [];
    let runs = 0;
    const report = tool(
      async ({ period }) => {
        runs++;
        const signal = getToolContext()?.signal;
        signals.push(signal);
        if (runs === 1) {
          // A stuck query that stops when its signal aborts.
          await new Promise<never>((_resolve, reject) => signal?.addEventListener("abort", () => reject(signal.reason), { once: true }));
        }
        return `report for ${period}`;
      },
      { name: "generate_report", description: "Builds a sales report.", schema: z.object({ period: z.string() }) },
    );
    const model = fakeModel()
      .respond(callTools({ name: "generate_report", args: { period: "2025-W14" }, id: "call_1" }))
      .respond(new AIMessage("Here it is."));
    const agent = createAgent({ model, tools: [report], middleware: [retryReflectMiddleware(plugin)] });

    const result = await drive(clock, agent.invoke({ messages: [{ role: "user", content: "the weekly report" }] }));

    expect(runs).toBe(2);
    expect(signals[0]?.aborted).toBe(true);
    expect((signals[0]?.reason as { code?: string } | undefined)?.code).toBe("TIMEOUT");
    expect(signals[1]?.aborted).toBe(false);
    expect((result.messages[2] as ToolMessage).content).toBe("report for 2025-W14");
  });

  it("a list of limits (one per attempt) reaches the tool too: the first attempt cut off at its limit, the retry given the longer one", async () => {
    const clock = createFakeClock();
    const plugin = RetryReflectPlugin.create({
      clock,
      initialBackoffMs: 100,
      tools: { generate_report: { attemptTimeoutMs: [1_000, 5_000] } },
    });
    const signals: Array<AbortSignal | undefined> = [];
    const report = tool(
      async ({ period }) => {
        const signal = getToolContext()?.signal;
        signals.push(signal);
        // A slow query: 3 s, or until its signal aborts.
        await new Promise<void>((resolve, reject) => {
          signal?.addEventListener("abort", () => reject(signal.reason), { once: true });
          void clock.sleep(3_000).then(resolve);
        });
        return `report for ${period}`;
      },
      { name: "generate_report", description: "Builds a sales report.", schema: z.object({ period: z.string() }) },
    );
    const model = fakeModel()
      .respond(callTools({ name: "generate_report", args: { period: "2025-W14" }, id: "call_1" }))
      .respond(new AIMessage("Here it is."));
    const agent = createAgent({ model, tools: [report], middleware: [retryReflectMiddleware(plugin)] });

    const result = await drive(clock, agent.invoke({ messages: [{ role: "user", content: "the weekly report" }] }));

    expect(signals).toHaveLength(2);
    expect((signals[0]?.reason as { code?: string } | undefined)?.code).toBe("TIMEOUT");
    expect(signals[1]?.aborted).toBe(false);
    expect((result.messages[2] as ToolMessage).content).toBe("report for 2025-W14");
    expect(clock.now()).toBe(1_000 + 100 + 3_000);
  });

  it("a read tool under the default limits keeps the direct path: no tool context", async () => {
    const clock = createFakeClock();
    const plugin = RetryReflectPlugin.create({ clock, tools: { generate_report: { attemptTimeoutMs: 1_000 } } });
    const seen: unknown[] = [];
    const search = tool(
      async () => {
        seen.push(getToolContext());
        return "hits";
      },
      { name: "search", description: "Search.", schema: z.object({}) },
    );
    const model = fakeModel()
      .respond(callTools({ name: "search", args: {}, id: "call_1" }))
      .respond(new AIMessage("Done."));
    const agent = createAgent({ model, tools: [search], middleware: [retryReflectMiddleware(plugin)] });
    await drive(clock, agent.invoke({ messages: [{ role: "user", content: "search" }] }));
    expect(seen).toEqual([undefined]);
  });
});
