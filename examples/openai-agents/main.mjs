// OpenAI Agents SDK: an Agent whose function tools are built by withRetryReflect, run by the SDK's real runner.
// The model is the SDK's ScriptedModel (from "@openai/agents/testing"): no API key, no network.
import { Agent, run, setTracingDisabled } from "@openai/agents";
import { assistantMessage, functionCall, ScriptedModel } from "@openai/agents/testing";
import { consoleLogger, RetryReflectPlugin } from "@retry-reflect/core";
import { withRetryReflect } from "@retry-reflect/openai-agents";
import { z } from "zod";

setTracingDisabled(true); // the SDK's own tracing would export to OpenAI: off, offline

// Tool definitions (the objects you would pass to tool()): withRetryReflect builds the SDK tools.
let searchRuns = 0;
const searchDocs = {
  name: "search_docs",
  description: "Search the docs.",
  parameters: z.object({ query: z.string() }),
  // A flaky backend: 503 once, then it works. Retried in place, the model never sees the 503.
  execute: async ({ query }) => {
    searchRuns += 1;
    if (searchRuns === 1) throw Object.assign(new Error("503 Service Unavailable"), { status: 503 });
    return `Doc: "${query}" is covered in chapter 3.`;
  },
};
const getWeather = {
  name: "get_weather",
  description: "Current weather of a city.",
  parameters: z.object({ city: z.string(), units: z.string() }),
  // The model sends bad units first: the failure goes back to it as a reflection.
  execute: async ({ city, units }) => {
    if (units !== "celsius" && units !== "fahrenheit") throw new Error("Invalid units. Supported: celsius, fahrenheit");
    return `22 degrees ${units}, sunny in ${city}`;
  },
};

// The scripted model: one list of output items per model turn.
const model = new ScriptedModel([
  [functionCall("search_docs", { query: "retries" }, { callId: "call_1" })],
  [functionCall("get_weather", { city: "NYC", units: "kelvin" }, { callId: "call_2" })],
  [functionCall("get_weather", { city: "NYC", units: "celsius" }, { callId: "call_3" })],
  [assistantMessage("Retries are in chapter 3, and it is 22 °C and sunny in NYC.")],
]);

const plugin = RetryReflectPlugin.create({ maxRetries: 3, observers: [consoleLogger()] });
const tools = withRetryReflect([searchDocs, getWeather], plugin);
const agent = new Agent({ name: "assistant", instructions: "Use the tools.", model, tools });
const result = await run(agent, "Where are retries documented, and the weather in NYC?");

for (const item of result.newItems) {
  if (item.type === "tool_call_output_item") console.log(`[tool ${item.rawItem.name}] ${item.output}`);
}
console.log(`search_docs ran ${searchRuns} times (a 503, then success); the model saw only the result`);
console.log(`final answer: ${result.finalOutput}`);
