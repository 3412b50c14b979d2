import { AIMessage, ToolMessage } from "@langchain/core/messages";
import { fakeModel } from "@langchain/core/testing";
import { tool } from "@langchain/core/tools";
import { Command, interrupt, MemorySaver } from "@langchain/langgraph";
import { RetryReflectPlugin } from "@retry-reflect/core";
import { createFakeClock } from "@retry-reflect/core/testing";
import { createAgent } from "langchain";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { retryReflectMiddleware } from "../src/index.js";
import { callTools, drive } from "./helpers.js";

// Calls of healthy tools with no observer anywhere: a first failure is attempt 1 of the policy,
// control flow passes through uncounted, and a failure of one tool changes nothing for another.

describe("healthy tools, no observer", () => {
  it("a flaky tool's first failure is attempt 1 of the in-place retries", async () => {
    const clock = createFakeClock();
    const plugin = RetryReflectPlugin.create({ clock });
    let calls = 0;
    const search = tool(
      async ({ query }) => {
        calls += 1;
        if (calls <= 2) throw Object.assign(new Error("upstream unavailable"), { status: 503 });
        return `results for ${query}`;
      },
      { name: "search", description: "Search.", schema: z.object({ query: z.string() }) },
    );
    const model = fakeModel()
      .respond(callTools({ name: "search", args: { query: "retry" }, id: "call_1" }))
      .respond(new AIMessage("Found it."));
    const agent = createAgent({ model, tools: [search], middleware: [retryReflectMiddleware(plugin)] });
    const result = await drive(clock, agent.invoke({ messages: [{ role: "user", content: "search" }] }));
    // The first failure was attempt 1: two in-place retries, after 500 and 1000 ms.
    expect(calls).toBe(3);
    expect(model.callCount).toBe(2);
    expect(clock.sleeps.filter((ms) => ms > 0)).toEqual([500, 1000]);
    expect((result.messages[2] as ToolMessage).content).toBe("results for retry");
  });

  it("bad arguments found by the tool's schema reach the model as INVALID_ARGUMENTS naming the field", async () => {
    const clock = createFakeClock();
    const plugin = RetryReflectPlugin.create({ clock });
    const getWeather = tool(async ({ city, units }) => `22 ${units} in ${city}`, {
      name: "get_weather",
      description: "Weather.",
      schema: z.object({ city: z.string(), units: z.enum(["celsius", "fahrenheit"]) }),
    });
    const model = fakeModel()
      .respond(callTools({ name: "get_weather", args: { city: "nyc", units: "kelvin" }, id: "call_1" }))
      .respond(callTools({ name: "get_weather", args: { city: "NYC", units: "celsius" }, id: "call_2" }))
      .respond(new AIMessage("22 celsius in NYC."));
    const agent = createAgent({ model, tools: [getWeather], middleware: [retryReflectMiddleware(plugin)] });
    const result = await drive(clock, agent.invoke({ messages: [{ role: "user", content: "weather?" }] }));
    const reflection = result.messages[2] as ToolMessage;
    expect(reflection.status).toBe("error");
    expect(reflection.artifact).toMatchObject({ error_code: "INVALID_ARGUMENTS" });
    expect(String(reflection.content)).toContain("units: expected one of celsius, fahrenheit; received kelvin");
    expect((result.messages[4] as ToolMessage).content).toBe("22 celsius in NYC");
  });

  it("an interrupt passes through untouched and is not counted", async () => {
    const clock = createFakeClock();
    const plugin = RetryReflectPlugin.create({ clock });
    const deploy = tool(
      async () => {
        const answer = interrupt({ question: "Deploy?" });
        return `deploy: ${String(answer)}`;
      },
      { name: "deploy", description: "Deploy.", schema: z.object({}) },
    );
    const model = fakeModel()
      .respond(callTools({ name: "deploy", args: {}, id: "call_1" }))
      .respond(new AIMessage("Deployed."));
    const agent = createAgent({ model, tools: [deploy], middleware: [retryReflectMiddleware(plugin)], checkpointer: new MemorySaver() });
    const config = { configurable: { thread_id: "t-1" } };
    const paused = await drive(clock, agent.invoke({ messages: [{ role: "user", content: "deploy" }] }, config));
    expect(paused.__interrupt__).toEqual([expect.objectContaining({ value: { question: "Deploy?" } })]);
    expect(plugin.circuits.size).toBe(0);
    const resumed = await drive(clock, agent.invoke(new Command({ resume: "yes" }), config));
    expect(resumed.messages.filter((message) => ToolMessage.isInstance(message)).map((message) => message.content)).toEqual([
      "deploy: yes",
    ]);
  });

  it("a healthy tool answers as usual after another tool failed (bookkeeping is per tool)", async () => {
    const clock = createFakeClock();
    const plugin = RetryReflectPlugin.create({ clock });
    const broken = tool(
      async () => {
        throw new Error("Invalid input: the id must be numeric");
      },
      { name: "broken", description: "Fails.", schema: z.object({}) },
    );
    const healthy = tool(async () => "fine", { name: "healthy", description: "Works.", schema: z.object({}) });
    const model = fakeModel()
      .respond(callTools({ name: "broken", args: {}, id: "call_1" }))
      .respond(callTools({ name: "healthy", args: {}, id: "call_2" }))
      .respond(new AIMessage("Done."));
    const agent = createAgent({ model, tools: [broken, healthy], middleware: [retryReflectMiddleware(plugin)] });
    const result = await drive(clock, agent.invoke({ messages: [{ role: "user", content: "go" }] }));
    expect(result.messages.filter((message) => ToolMessage.isInstance(message)).map((message) => message.content)).toContain("fine");
  });
});
