// Vercel AI SDK: generateText with tools wrapped by withRetryReflect.
// The model is the AI SDK's MockLanguageModelV3 (from "ai/test"), scripted turn by turn: no API key, no network.
import { withRetryReflect } from "@retry-reflect/ai-sdk";
import { consoleLogger, RetryReflectPlugin } from "@retry-reflect/core";
import { generateText, stepCountIs, tool } from "ai";
import { MockLanguageModelV3 } from "ai/test";
import { z } from "zod";

// A flaky tool: its backend answers 503 once, then works. Retried in place, the model never sees the 503.
let searchRuns = 0;
const searchDocs = tool({
  description: "Search the docs.",
  inputSchema: z.object({ query: z.string() }),
  execute: async ({ query }) => {
    searchRuns += 1;
    if (searchRuns === 1) throw Object.assign(new Error("503 Service Unavailable"), { status: 503 });
    return `Doc: "${query}" is covered in chapter 3.`;
  },
});

// A tool the model calls with bad arguments first: the failure goes back to it as a reflection.
const getWeather = tool({
  description: "Current weather of a city.",
  inputSchema: z.object({ city: z.string(), units: z.string() }),
  execute: async ({ city, units }) => {
    if (units !== "celsius" && units !== "fahrenheit") throw new Error("Invalid units. Supported: celsius, fahrenheit");
    return { city, temperature: 22, condition: "sunny" };
  },
});

// The scripted model: one provider answer per step, in the AI SDK's provider format.
const usage = { inputTokens: { total: 10 }, outputTokens: { total: 5 } };
const finish = (unified) => ({ finishReason: { unified, raw: unified }, usage, warnings: [] });
const callTool = (toolCallId, toolName, input) => ({
  content: [{ type: "tool-call", toolCallId, toolName, input: JSON.stringify(input) }],
  ...finish("tool-calls"),
});
const answer = (text) => ({ content: [{ type: "text", text }], ...finish("stop") });
const turns = [
  callTool("call_1", "search_docs", { query: "retries" }),
  callTool("call_2", "get_weather", { city: "NYC", units: "kelvin" }),
  callTool("call_3", "get_weather", { city: "NYC", units: "celsius" }),
  answer("Retries are in chapter 3, and it is 22 °C and sunny in NYC."),
];
const model = new MockLanguageModelV3({ doGenerate: async () => turns.shift() });

const plugin = RetryReflectPlugin.create({ maxRetries: 3, observers: [consoleLogger()] });
const result = await generateText({
  model,
  tools: withRetryReflect({ search_docs: searchDocs, get_weather: getWeather }, plugin),
  stopWhen: stepCountIs(5),
  prompt: "Where are retries documented, and the weather in NYC?",
});

for (const part of result.steps.flatMap((step) => step.content)) {
  const output = typeof part.output === "string" ? part.output : JSON.stringify(part.output);
  if (part.type === "tool-result") console.log(`[tool ${part.toolName} success] ${output}`);
  if (part.type === "tool-error") console.log(`[tool ${part.toolName} error] ${part.error.message}`);
}
console.log(`search_docs ran ${searchRuns} times (a 503, then success); the model saw only the result`);
console.log(`final answer: ${result.text}`);
