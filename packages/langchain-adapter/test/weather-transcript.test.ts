import { AIMessage, ToolMessage } from "@langchain/core/messages";
import { fakeModel } from "@langchain/core/testing";
import { tool } from "@langchain/core/tools";
import { DEFAULT_REFLECTION_PROMPT, RetryReflectPlugin } from "@retry-reflect/core";
import { createFakeClock } from "@retry-reflect/core/testing";
import { createAgent } from "langchain";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { retryReflectMiddleware } from "../src/index.js";
import { callTools, drive, recordEvents, transcript } from "./helpers.js";

const REFLECTION = `The tool 'get_weather' failed with: "Invalid units. Supported: celsius, fahrenheit". Analyze what went wrong and provide corrected arguments.`;

function weatherTool(calls: Array<Record<string, unknown>>) {
  return tool(
    async ({ city, units }) => {
      calls.push({ city, units });
      if (units !== "celsius" && units !== "fahrenheit") throw new Error("Invalid units. Supported: celsius, fahrenheit");
      return JSON.stringify({ temperature: 22, condition: "sunny" });
    },
    {
      name: "get_weather",
      description: "Current weather of a city.",
      schema: z.object({ city: z.string(), units: z.string() }),
    },
  );
}

describe("the seed's weather transcript through createAgent", () => {
  it("gives the model the reflection prompt, and the corrected call succeeds with 'retry succeeded' attempt=2", async () => {
    const clock = createFakeClock();
    const recorder = recordEvents();
    const plugin = RetryReflectPlugin.builder()
      .maxRetries(3)
      .initialBackoffMs(500)
      .backoffMultiplier(2)
      .clock(clock)
      .observer(recorder)
      .build();
    const calls: Array<Record<string, unknown>> = [];
    const model = fakeModel()
      .respond(callTools({ name: "get_weather", args: { city: "nyc", units: "kelvin" }, id: "call_1" }))
      .respond(callTools({ name: "get_weather", args: { city: "NYC", units: "celsius" }, id: "call_2" }))
      .respond(new AIMessage("It is 22 °C and sunny in NYC."));
    const agent = createAgent({ model, tools: [weatherTool(calls)], middleware: [retryReflectMiddleware(plugin)] });

    const result = await drive(clock, agent.invoke({ messages: [{ role: "user", content: "What's the weather in NYC?" }] }));

    const reflection = result.messages[2];
    expect(ToolMessage.isInstance(reflection)).toBe(true);
    const toolMessage = reflection as ToolMessage;
    expect(toolMessage.status).toBe("error");
    expect(toolMessage.tool_call_id).toBe("call_1");
    expect(toolMessage.name).toBe("get_weather");
    expect(String(toolMessage.content).split("\n\n")[0]).toBe(REFLECTION);
    expect(
      DEFAULT_REFLECTION_PROMPT.replace("{tool_name}", "get_weather").replace(
        "{error}",
        JSON.stringify("Invalid units. Supported: celsius, fahrenheit"),
      ),
    ).toBe(REFLECTION);
    expect(JSON.parse(String(toolMessage.content).split("\n\n")[1] ?? "")).toMatchObject({
      error_code: "INVALID_ARGUMENTS",
      message: "Invalid units. Supported: celsius, fahrenheit",
      recoverable: true,
      attempt: 1,
      max_retries: 3,
    });
    expect(toolMessage.artifact).toMatchObject({
      error_code: "INVALID_ARGUMENTS",
      message: "Invalid units. Supported: celsius, fahrenheit",
      recoverable: true,
    });

    // The model saw the reflection as the result of its call before correcting it.
    expect(model.calls).toHaveLength(3);
    expect(model.calls[1]?.messages.at(-1)).toBe(toolMessage);

    expect(transcript(result.messages)).toEqual([
      "[human]: What's the weather in NYC?",
      `[model]: get_weather({"city":"nyc","units":"kelvin"})`,
      `[tool get_weather error]: ${String(toolMessage.content)}`,
      `[model]: get_weather({"city":"NYC","units":"celsius"})`,
      `[tool get_weather success]: {"temperature":22,"condition":"sunny"}`,
      "[ai]: It is 22 °C and sunny in NYC.",
    ]);
    expect(calls).toEqual([
      { city: "nyc", units: "kelvin" },
      { city: "NYC", units: "celsius" },
    ]);
    expect(recorder.lines()).toEqual([
      `WARN tool call failed, retrying tool_name="get_weather" attempt=1 max=3 backoff_ms=500 error="Invalid units. Supported: celsius, fahrenheit" error_code="INVALID_ARGUMENTS" mode="reflect"`,
      `INFO waiting before retry tool_name="get_weather" wait_ms=500`,
      `INFO retry succeeded tool_name="get_weather" attempt=2`,
    ]);
  });

  it("builds its plugin from options: retryReflectMiddleware({ ... })", async () => {
    const clock = createFakeClock();
    const calls: Array<Record<string, unknown>> = [];
    const model = fakeModel()
      .respond(callTools({ name: "get_weather", args: { city: "nyc", units: "kelvin" }, id: "call_1" }))
      .respond(callTools({ name: "get_weather", args: { city: "NYC", units: "celsius" }, id: "call_2" }))
      .respond(new AIMessage("22 °C"));
    const middleware = retryReflectMiddleware({ maxRetries: 3, clock, name: "retry" });
    const agent = createAgent({ model, tools: [weatherTool(calls)], middleware: [middleware] });
    const result = await drive(clock, agent.invoke({ messages: [{ role: "user", content: "weather?" }] }));
    expect(String((result.messages[2] as ToolMessage).content).startsWith(REFLECTION)).toBe(true);
    expect(middleware.name).toBe("retry");
    expect(middleware.plugin.options.maxRetries).toBe(3);
  });
});
