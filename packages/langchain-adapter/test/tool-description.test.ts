import { AIMessage } from "@langchain/core/messages";
import { fakeModel } from "@langchain/core/testing";
import { tool } from "@langchain/core/tools";
import { RetryReflectPlugin } from "@retry-reflect/core";
import type { CallInfo } from "@retry-reflect/core/events";
import { createFakeClock } from "@retry-reflect/core/testing";
import { createAgent } from "langchain";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { retryReflectMiddleware, withRetryReflect } from "../src/index.js";
import { callTools, drive } from "./helpers.js";

describe("the tool's description and type reach observers (gen_ai.tool.description, gen_ai.tool.type)", () => {
  const weather = () =>
    tool(async ({ city }) => `sunny in ${city}`, {
      name: "get_weather",
      description: "Current weather for a city.",
      schema: z.object({ city: z.string() }),
    });

  it("through the middleware", async () => {
    const clock = createFakeClock();
    const calls: CallInfo[] = [];
    const plugin = RetryReflectPlugin.create({ clock, observers: [{ onCallStart: (call) => void calls.push(call) }] });
    const model = fakeModel()
      .respond(callTools({ name: "get_weather", args: { city: "Paris" }, id: "call_1" }))
      .respond(new AIMessage("Sunny."));
    const agent = createAgent({ model, tools: [weather()], middleware: [retryReflectMiddleware(plugin)] });
    await drive(clock, agent.invoke({ messages: [{ role: "user", content: "weather?" }] }));
    expect(calls.map((call) => [call.toolName, call.description, call.toolType])).toEqual([
      ["get_weather", "Current weather for a city.", "function"],
    ]);
  });

  it("through withRetryReflect", async () => {
    const calls: CallInfo[] = [];
    const plugin = RetryReflectPlugin.create({ observers: [{ onCallStart: (call) => void calls.push(call) }] });
    const wrapped = withRetryReflect(weather(), plugin);
    expect(await wrapped.invoke({ city: "Rome" })).toBe("sunny in Rome");
    expect(calls.map((call) => [call.description, call.toolType])).toEqual([["Current weather for a city.", "function"]]);
  });
});
