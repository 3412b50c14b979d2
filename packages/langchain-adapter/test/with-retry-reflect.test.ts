import { AIMessage, ToolMessage } from "@langchain/core/messages";
import { fakeModel } from "@langchain/core/testing";
import { StructuredTool, tool } from "@langchain/core/tools";
import { Command, END, interrupt, MemorySaver, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
import { ToolNode, toolsCondition } from "@langchain/langgraph/prebuilt";
import { RetryReflectPlugin } from "@retry-reflect/core";
import { createFakeClock } from "@retry-reflect/core/testing";
import { createAgent } from "langchain";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { RetryReflectTool, withRetryReflect } from "../src/index.js";
import { callTools, drive, recordEvents } from "./helpers.js";

const REFLECTION = `The tool 'get_weather' failed with: "Invalid units. Supported: celsius, fahrenheit". Analyze what went wrong and provide corrected arguments.`;

function weather() {
  const calls: unknown[] = [];
  const getWeather = tool(
    async ({ city, units }) => {
      calls.push({ city, units });
      if (units !== "celsius" && units !== "fahrenheit") throw new Error("Invalid units. Supported: celsius, fahrenheit");
      return JSON.stringify({ temperature: 22, condition: "sunny" });
    },
    {
      name: "get_weather",
      description: "Current weather of a city.",
      schema: z.object({ city: z.string(), units: z.string() }),
      metadata: { team: "weather" },
    },
  );
  return { calls, getWeather };
}

describe("withRetryReflect(tool, plugin)", () => {
  it("keeps the tool's name, description, schema and metadata", () => {
    const { getWeather } = weather();
    const wrapped = withRetryReflect(getWeather, RetryReflectPlugin.create());
    expect(wrapped).toBeInstanceOf(StructuredTool);
    expect(wrapped).toBeInstanceOf(RetryReflectTool);
    expect(wrapped.name).toBe("get_weather");
    expect(wrapped.description).toBe("Current weather of a city.");
    expect(wrapped.schema).toBe(getWeather.schema);
    expect(wrapped.metadata).toEqual({ team: "weather" });
    expect(wrapped.tool).toBe(getWeather);
  });

  it("invoked with plain arguments: the tool's result, or the reflection message as a string", async () => {
    const { getWeather } = weather();
    const wrapped = withRetryReflect(getWeather, RetryReflectPlugin.create({ clock: createFakeClock() }));
    await expect(wrapped.invoke({ city: "NYC", units: "celsius" })).resolves.toBe(`{"temperature":22,"condition":"sunny"}`);
    const reflection = await wrapped.invoke({ city: "nyc", units: "kelvin" });
    expect(typeof reflection).toBe("string");
    expect(String(reflection).split("\n\n")[0]).toBe(REFLECTION);
  });

  it("invoked with a tool call: a ToolMessage, with status error and the structured error as artifact on failure", async () => {
    const { getWeather } = weather();
    const wrapped = withRetryReflect(getWeather, { clock: createFakeClock() });
    const message = (await wrapped.invoke({
      type: "tool_call",
      id: "call_9",
      name: "get_weather",
      args: { city: "nyc", units: "kelvin" },
    })) as ToolMessage;
    expect(ToolMessage.isInstance(message)).toBe(true);
    expect(message.status).toBe("error");
    expect(message.tool_call_id).toBe("call_9");
    expect(message.artifact).toMatchObject({ error_code: "INVALID_ARGUMENTS" });
  });

  it("schema failures become INVALID_ARGUMENTS naming the field", async () => {
    const strict = tool(async ({ units }) => units, {
      name: "get_weather",
      description: "w",
      schema: z.object({ units: z.enum(["celsius", "fahrenheit"]) }),
    });
    const wrapped = withRetryReflect(strict, { clock: createFakeClock() });
    const message = (await wrapped.invoke({ type: "tool_call", id: "c", name: "get_weather", args: { units: "kelvin" } })) as ToolMessage;
    expect(message.artifact).toMatchObject({
      error_code: "INVALID_ARGUMENTS",
      message: "units: expected one of celsius, fahrenheit; received kelvin",
    });
  });

  it("runs the seed's weather transcript in createAgent with no middleware", async () => {
    const clock = createFakeClock();
    const recorder = recordEvents();
    const plugin = RetryReflectPlugin.create({ clock, observers: [recorder] });
    const { calls, getWeather } = weather();
    const model = fakeModel()
      .respond(callTools({ name: "get_weather", args: { city: "nyc", units: "kelvin" }, id: "call_1" }))
      .respond(callTools({ name: "get_weather", args: { city: "NYC", units: "celsius" }, id: "call_2" }))
      .respond(new AIMessage("22 °C and sunny."));
    const agent = createAgent({ model, tools: [withRetryReflect(getWeather, plugin)] });
    const result = await drive(clock, agent.invoke({ messages: [{ role: "user", content: "What's the weather in NYC?" }] }));
    expect(String((result.messages[2] as ToolMessage).content).split("\n\n")[0]).toBe(REFLECTION);
    expect((result.messages[4] as ToolMessage).content).toBe(`{"temperature":22,"condition":"sunny"}`);
    expect(calls).toHaveLength(2);
    expect(recorder.events.map((event) => event.type)).toEqual(["retry", "waiting_before_retry", "retry_succeeded"]);
  });

  it("retries in place inside LangGraph's prebuilt ToolNode, and lets an interrupt through", async () => {
    const clock = createFakeClock();
    const plugin = RetryReflectPlugin.create({ clock });
    let searches = 0;
    const search = tool(
      async ({ query }) => {
        searches += 1;
        if (searches === 1) throw Object.assign(new Error("connection reset"), { code: "ECONNRESET" });
        return `results for ${query}`;
      },
      { name: "search", description: "Search.", schema: z.object({ query: z.string() }) },
    );
    const approve = tool(async ({ what }) => `approved: ${String(interrupt({ what }))}`, {
      name: "approve",
      description: "Ask a human.",
      schema: z.object({ what: z.string() }),
    });
    const model = fakeModel()
      .respond(callTools({ name: "search", args: { query: "q" }, id: "call_1" }))
      .respond(callTools({ name: "approve", args: { what: "deploy" }, id: "call_2" }))
      .respond(new AIMessage("done"));
    const graph = new StateGraph(MessagesAnnotation)
      .addNode("agent", async (state) => ({ messages: [await model.invoke(state.messages)] }))
      .addNode("tools", new ToolNode([withRetryReflect(search, plugin), withRetryReflect(approve, plugin)]))
      .addEdge(START, "agent")
      .addConditionalEdges("agent", toolsCondition, ["tools", END])
      .addEdge("tools", "agent")
      .compile({ checkpointer: new MemorySaver() });
    const config = { configurable: { thread_id: "t" } };

    const paused = await drive(clock, graph.invoke({ messages: [{ role: "user", content: "go" }] }, config));
    expect(searches).toBe(2);
    expect(clock.sleeps.filter((ms) => ms > 0)).toEqual([500]);
    expect((paused.messages[2] as ToolMessage).content).toBe("results for q");
    expect((paused as { __interrupt__?: unknown[] }).__interrupt__).toEqual([expect.objectContaining({ value: { what: "deploy" } })]);

    const resumed = await drive(clock, graph.invoke(new Command({ resume: "yes" }), config));
    expect((resumed.messages[4] as ToolMessage).content).toBe("approved: yes");
    expect(resumed.messages.at(-1)?.content).toBe("done");
  });
});
