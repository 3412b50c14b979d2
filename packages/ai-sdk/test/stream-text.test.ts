import { RetryReflectPlugin } from "@retry-reflect/core";
import { createFakeClock } from "@retry-reflect/core/testing";
import { stepCountIs, streamText, tool } from "ai";
import { convertArrayToReadableStream, MockLanguageModelV3 } from "ai/test";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { RetryReflectToolError, withRetryReflect } from "../src/index.js";
import { callTools, drive, errorText, type ModelTurn, reply, streamOf, toolOutputsSeen } from "./helpers.js";

function streamingModel(...turns: ModelTurn[]): MockLanguageModelV3 {
  let index = 0;
  return new MockLanguageModelV3({
    doStream: async () => {
      const turn = turns[index++];
      if (turn === undefined) throw new Error(`the scripted model has no turn ${index}`);
      return { stream: convertArrayToReadableStream(streamOf(turn)) };
    },
  });
}

function weather() {
  let runs = 0;
  const getWeather = tool({
    inputSchema: z.object({ city: z.string(), units: z.string() }),
    execute: async ({ units }) => {
      runs += 1;
      if (units !== "celsius") throw new Error("Invalid units. Supported: celsius, fahrenheit");
      return { temperature: 22 };
    },
  });
  const model = streamingModel(
    callTools({ name: "get_weather", input: { city: "nyc", units: "kelvin" }, id: "call_1" }),
    callTools({ name: "get_weather", input: { city: "nyc", units: "celsius" }, id: "call_2" }),
    reply("22 °C in NYC."),
  );
  return { getWeather, model, runs: () => runs };
}

describe("streamText", () => {
  it("streams the reflection as a tool-error part; the model reads it and its corrected call succeeds", async () => {
    const clock = createFakeClock();
    const plugin = RetryReflectPlugin.create({ clock });
    const { getWeather, model, runs } = weather();
    const result = streamText({
      model,
      tools: withRetryReflect({ get_weather: getWeather }, plugin),
      stopWhen: stepCountIs(5),
      prompt: "?",
    });

    const parts: Array<{ type: string; error?: unknown; output?: unknown }> = [];
    await drive(
      clock,
      (async () => {
        for await (const part of result.fullStream) parts.push(part);
      })(),
    );

    expect(await result.text).toBe("22 °C in NYC.");
    expect(runs()).toBe(2);
    const toolParts = parts.filter((part) => part.type === "tool-error" || part.type === "tool-result");
    expect(toolParts.map((part) => part.type)).toEqual(["tool-error", "tool-result"]);
    const error = toolParts[0]?.error;
    expect(RetryReflectToolError.isInstance(error) && error.structuredError.error_code).toBe("INVALID_ARGUMENTS");
    const [seen] = toolOutputsSeen(model.doStreamCalls[1]);
    expect(seen?.output).toMatchObject({ type: "error-text" });
    expect(errorText(seen)).toMatch(
      /^The tool 'get_weather' failed with: "Invalid units\. Supported: celsius, fahrenheit"\. Analyze what went wrong/,
    );
  });

  it("shows the message in the UI stream when onError lets it through (the default masks every error)", async () => {
    const clock = createFakeClock();
    const plugin = RetryReflectPlugin.create({ clock });
    const { getWeather, model } = weather();
    const result = streamText({
      model,
      tools: withRetryReflect({ get_weather: getWeather }, plugin),
      stopWhen: stepCountIs(5),
      prompt: "?",
    });
    const stream = result.toUIMessageStream({
      onError: (error) => (RetryReflectToolError.isInstance(error) ? error.message : "An error occurred."),
    });
    const chunks: Array<{ type: string; errorText?: string }> = [];
    await drive(
      clock,
      (async () => {
        for await (const chunk of stream) chunks.push(chunk);
      })(),
    );
    const failed = chunks.find((chunk) => chunk.type === "tool-output-error");
    expect(failed?.errorText).toMatch(/^The tool 'get_weather' failed with: "Invalid units/);
    expect(failed?.errorText).toContain('"error_code":"INVALID_ARGUMENTS"');
  });
});
