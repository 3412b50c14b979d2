// LangChain.js v1: a createAgent agent whose tool calls run under retryReflectMiddleware.
// The model is LangChain's own fake chat model, scripted with tool calls: no API key, no network.
import { AIMessage, ToolMessage } from "@langchain/core/messages";
import { fakeModel } from "@langchain/core/testing";
import { tool } from "@langchain/core/tools";
import { RetryReflectPlugin } from "@retry-reflect/core";
import { retryReflectMiddleware } from "@retry-reflect/langchain";
import { createAgent } from "langchain";
import { z } from "zod";

// A flaky tool: its backend answers 503 once, then works. Retried in place, the model never sees the 503.
let searchRuns = 0;
const searchDocs = tool(
  async ({ query }) => {
    searchRuns += 1;
    if (searchRuns === 1) throw Object.assign(new Error("503 Service Unavailable"), { status: 503 });
    return `Doc: "${query}" is covered in chapter 3.`;
  },
  { name: "search_docs", description: "Search the docs.", schema: z.object({ query: z.string() }) },
);

// A tool the model calls with bad arguments first: the failure goes back to it as a reflection.
const getWeather = tool(
  async ({ city, units }) => {
    if (units !== "celsius" && units !== "fahrenheit") throw new Error("Invalid units. Supported: celsius, fahrenheit");
    return JSON.stringify({ city, temperature: 22, condition: "sunny" });
  },
  { name: "get_weather", description: "Current weather of a city.", schema: z.object({ city: z.string(), units: z.string() }) },
);

// The scripted model: what a real model would answer, turn by turn.
const toolCall = (id, name, args) => new AIMessage({ content: "", tool_calls: [{ id, name, args, type: "tool_call" }] });
const model = fakeModel()
  .respond(toolCall("call_1", "search_docs", { query: "retries" }))
  .respond(toolCall("call_2", "get_weather", { city: "NYC", units: "kelvin" }))
  .respond(toolCall("call_3", "get_weather", { city: "NYC", units: "celsius" }))
  .respond(new AIMessage("Retries are in chapter 3, and it is 22 °C and sunny in NYC."));

// Run with DEBUG=retry-reflect to see each decision (WARN to stderr, INFO to stdout); in code, add
// `observers: [consoleLogger()]` from @retry-reflect/core.
const plugin = RetryReflectPlugin.create({ maxRetries: 3 });
const agent = createAgent({ model, tools: [searchDocs, getWeather], middleware: [retryReflectMiddleware(plugin)] });

const result = await agent.invoke({ messages: [{ role: "user", content: "Where are retries documented, and the weather in NYC?" }] });

for (const message of result.messages) {
  if (ToolMessage.isInstance(message)) {
    console.log(`[tool ${message.name} ${message.status ?? "success"}] ${String(message.content)}`);
  }
}
console.log(`search_docs ran ${searchRuns} times (a 503, then success); the model saw only the result`);
console.log(`final answer: ${String(result.messages.at(-1)?.content)}`);
