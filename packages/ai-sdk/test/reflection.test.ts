import { consoleLogger, RetryReflectPlugin } from "@retry-reflect/core";
import { createFakeClock } from "@retry-reflect/core/testing";
import { generateText, stepCountIs, tool } from "ai";
import { describe, expect, it, vi } from "vitest";
import { z } from "zod";
import { RetryReflectToolError, withRetryReflect } from "../src/index.js";
import { callTools, drive, recordEvents, reply, scriptedModel, toolOutputsSeen } from "./helpers.js";

const REFLECTION =
  "The tool 'get_weather' failed with: \"Invalid units. Supported: celsius, fahrenheit\". Analyze what went wrong and provide corrected arguments.";

describe("bad arguments: the weather transcript through generateText", () => {
  it("reflects the failure to the model as a tool error; its corrected call succeeds (attempt 2)", async () => {
    const clock = createFakeClock();
    const recorder = recordEvents();
    const plugin = RetryReflectPlugin.create({ clock, observers: [recorder] });
    const calls: unknown[] = [];
    const getWeather = tool({
      description: "Current weather of a city.",
      inputSchema: z.object({ city: z.string(), units: z.string() }),
      execute: async ({ city, units }) => {
        calls.push({ city, units });
        if (units !== "celsius" && units !== "fahrenheit") throw new Error("Invalid units. Supported: celsius, fahrenheit");
        return { temperature: 22, condition: "sunny" };
      },
    });
    const model = scriptedModel(
      callTools({ name: "get_weather", input: { city: "nyc", units: "kelvin" }, id: "call_1" }),
      callTools({ name: "get_weather", input: { city: "NYC", units: "celsius" }, id: "call_2" }),
      reply("It is 22 °C and sunny in NYC."),
    );

    const result = await drive(
      clock,
      generateText({
        model,
        tools: withRetryReflect({ get_weather: getWeather }, plugin),
        stopWhen: stepCountIs(5),
        prompt: "What's the weather in NYC?",
      }),
    );

    expect(result.text).toBe("It is 22 °C and sunny in NYC.");
    expect(calls).toEqual([
      { city: "nyc", units: "kelvin" },
      { city: "NYC", units: "celsius" },
    ]);
    // What the model read after its first call: the AI SDK's error-text output, our message.
    const seen = toolOutputsSeen(model.doGenerateCalls[1]);
    expect(seen).toEqual([
      {
        toolName: "get_weather",
        toolCallId: "call_1",
        output: {
          type: "error-text",
          value: `${REFLECTION}\n\n{"error_code":"INVALID_ARGUMENTS","message":"Invalid units. Supported: celsius, fahrenheit","recoverable":true,"suggested_action":"Correct the arguments named in the error and call the tool again.","attempt":1,"max_retries":3}`,
        },
      },
    ]);
    expect(toolOutputsSeen(model.doGenerateCalls[2])).toEqual([
      { toolName: "get_weather", toolCallId: "call_2", output: { type: "json", value: { temperature: 22, condition: "sunny" } } },
    ]);

    // The step holds a tool-error part whose error carries the structured error as data.
    const part = result.steps[0]?.content.find((each) => each.type === "tool-error");
    expect(part?.type).toBe("tool-error");
    const error = part?.type === "tool-error" ? part.error : undefined;
    expect(RetryReflectToolError.isInstance(error)).toBe(true);
    if (!RetryReflectToolError.isInstance(error)) return;
    expect(error.status).toBe("reflect");
    expect(error.toolCallId).toBe("call_1");
    expect(error.structuredError).toEqual({
      error_code: "INVALID_ARGUMENTS",
      message: "Invalid units. Supported: celsius, fahrenheit",
      recoverable: true,
      suggested_action: "Correct the arguments named in the error and call the tool again.",
    });
    expect(error.outcome.status === "reflect" ? error.outcome.prompt : undefined).toBe(REFLECTION);

    // The mock model answers in no time, so the corrected call waits out the whole backoff gate (500 ms).
    expect(recorder.types()).toEqual(["retry", "waiting_before_retry", "retry_succeeded"]);
    expect(recorder.events[0]?.fields).toMatchObject({
      tool_name: "get_weather",
      attempt: 1,
      mode: "reflect",
      error_code: "INVALID_ARGUMENTS",
    });
    expect(recorder.events[2]?.fields).toEqual({ tool_name: "get_weather", attempt: 2 });
    expect(clock.sleeps).toEqual([500]);
  });

  it("prints the seed's log lines with consoleLogger()", async () => {
    const clock = createFakeClock();
    const lines: string[] = [];
    const log = vi.spyOn(console, "warn").mockImplementation((line: string) => void lines.push(line));
    const info = vi.spyOn(console, "info").mockImplementation((line: string) => void lines.push(line));
    try {
      const plugin = RetryReflectPlugin.create({ clock, observers: [consoleLogger()] });
      const getWeather = tool({
        inputSchema: z.object({ city: z.string(), units: z.string() }),
        execute: async ({ units }) => {
          if (units !== "celsius") throw new Error("Invalid units. Supported: celsius, fahrenheit");
          return "22 °C";
        },
      });
      const model = scriptedModel(
        callTools({ name: "get_weather", input: { city: "nyc", units: "kelvin" }, id: "c1" }),
        callTools({ name: "get_weather", input: { city: "nyc", units: "celsius" }, id: "c2" }),
        reply("22 °C"),
      );
      await drive(
        clock,
        generateText({ model, tools: withRetryReflect({ get_weather: getWeather }, plugin), stopWhen: stepCountIs(5), prompt: "?" }),
      );
    } finally {
      log.mockRestore();
      info.mockRestore();
    }
    expect(lines).toEqual([
      'WARN retry_reflect: tool call failed, retrying tool_name=get_weather attempt=1 max=3 backoff_ms=500 error="Invalid units. Supported: celsius, fahrenheit" error_code=INVALID_ARGUMENTS mode=reflect',
      "INFO retry_reflect: waiting before retry tool_name=get_weather wait_ms=500",
      "INFO retry_reflect: retry succeeded tool_name=get_weather attempt=2",
    ]);
  });
});
