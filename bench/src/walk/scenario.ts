// The measured call: a real `createAgent` (LangChain v1) with a fake model that calls one tool
// once, then answers. Two middlewares: an outer window (`walkStart` before the handler, `walkEnd`
// after it) and `retryReflectMiddleware()` inside it, so that the window holds exactly one
// `wrapToolCall` of ours, from its entry to the ToolMessage it returns.
//   failing: the model sends arguments the tool's zod schema rejects (INVALID_ARGUMENTS):
//            the middleware returns a reflection ToolMessage (status "error").
//   healthy: the same call with good arguments: the tool's own ToolMessage.
//   transient: the same good call; the tool's first execution fails with a 503, the in-place retry
//              (after a 1 ms backoff) succeeds: the tool's own ToolMessage.
import { AIMessage, HumanMessage, ToolMessage } from "@langchain/core/messages";
import { fakeModel } from "@langchain/core/testing";
import { tool } from "@langchain/core/tools";
import { retryReflectMiddleware } from "@retry-reflect/langchain";
import { createAgent, createMiddleware } from "langchain";
import { z } from "zod";
import { walkEnd, walkStart } from "./markers.js";

export type ScenarioName = "failing" | "healthy" | "transient";

export const SCENARIOS: Readonly<Record<ScenarioName, { readonly args: Record<string, unknown>; readonly what: string }>> = {
  failing: {
    args: { units: "kelvin" },
    what: 'get_weather({ units: "kelvin" }): city missing, units not in the enum → reflection ToolMessage',
  },
  healthy: {
    args: { city: "NYC", units: "celsius" },
    what: 'get_weather({ city: "NYC", units: "celsius" }) → the tool\'s own ToolMessage',
  },
  transient: {
    args: { city: "NYC", units: "celsius" },
    what: 'get_weather({ city: "NYC", units: "celsius" }): a 503, retried in place, then the tool\'s own ToolMessage',
  },
};

/** Runs one agent turn of the scenario; with `open`, the middleware's call is inside the window. */
export async function runScenario(name: ScenarioName, open: boolean): Promise<ToolMessage> {
  let executions = 0;
  const getWeather = tool(
    async ({ city, units }) => {
      executions++;
      if (name === "transient" && executions === 1) throw Object.assign(new Error("503 Service Unavailable"), { status: 503 });
      return `22 ${units} in ${city}`;
    },
    {
      name: "get_weather",
      description: "Current weather of a city.",
      schema: z.object({ city: z.string(), units: z.enum(["celsius", "fahrenheit"]) }),
    },
  );
  const model = fakeModel()
    .respond(
      new AIMessage({ content: "", tool_calls: [{ name: "get_weather", args: SCENARIOS[name].args, id: "call_1", type: "tool_call" }] }),
    )
    .respond(new AIMessage("done"));
  const window = createMiddleware({
    name: "WalkWindow",
    wrapToolCall: async (request, handler) => {
      if (open) walkStart();
      const result = await handler(request);
      if (open) walkEnd();
      return result;
    },
  });
  // The window first: LangChain composes the first middleware outermost.
  const agent = createAgent({
    model,
    tools: [getWeather],
    middleware: [window, retryReflectMiddleware(name === "transient" ? { initialBackoffMs: 1 } : {})],
  });
  const { messages } = await agent.invoke({ messages: [new HumanMessage("weather in NYC?")] });
  const message = messages.find((entry) => ToolMessage.isInstance(entry));
  if (message === undefined) throw new Error(`scenario ${name}: no ToolMessage in the run`);
  return message;
}
