import { Agent } from "@mastra/core/agent";
import { withRetryReflect as withRetryReflectAiSdk } from "@retry-reflect/ai-sdk";
import { RetryReflectPlugin } from "@retry-reflect/core";
import { createFakeClock } from "@retry-reflect/core/testing";
import { tool } from "ai";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { callTools, drive, errorText, reply, scriptedModel, toolOutputsSeen } from "../../ai-sdk/test/helpers.js";

// The versions these tests pin (package.json devDependencies): @mastra/core 1.71.0, ai 6.0.325.
// AI SDK tools run in a Mastra agent as they are: `@retry-reflect/ai-sdk` wraps them (the other path, beside this package's).
describe("AI SDK tools wrapped by @retry-reflect/ai-sdk, in a Mastra agent", () => {
  it("reflect a bad call to the model and retry a 503 in place", async () => {
    const clock = createFakeClock();
    const plugin = RetryReflectPlugin.create({ clock });
    const calls: unknown[] = [];
    let searches = 0;
    const getWeather = tool({
      description: "Current weather of a city.",
      inputSchema: z.object({ city: z.string(), units: z.string() }),
      execute: async ({ city, units }) => {
        calls.push({ city, units });
        if (units !== "celsius") throw new Error("Invalid units. Supported: celsius");
        return { temperature: 22 };
      },
    });
    const searchDocs = tool({
      description: "Searches the docs.",
      inputSchema: z.object({ query: z.string() }),
      execute: async ({ query }) => {
        searches += 1;
        if (searches < 2) throw Object.assign(new Error("503 Service Unavailable"), { status: 503 });
        return [`result for ${query}`];
      },
    });
    const model = scriptedModel(
      callTools({ name: "get_weather", input: { city: "NYC", units: "kelvin" }, id: "call_1" }),
      callTools(
        { name: "get_weather", input: { city: "NYC", units: "celsius" }, id: "call_2" },
        { name: "search_docs", input: { query: "q" }, id: "call_3" },
      ),
      reply("22 °C."),
    );
    const agent = new Agent({
      id: "assistant",
      name: "assistant",
      instructions: "Use the tools.",
      model,
      // A type gap only: Mastra 1.71's `ToolsInput` does not accept the `Tool` type of `ai` 6.0.325, whose tools it runs.
      tools: withRetryReflectAiSdk({ get_weather: getWeather, search_docs: searchDocs }, plugin) as never,
    });

    const result = await drive(clock, agent.generate("weather?", { maxSteps: 5 }));

    expect(result.text).toBe("22 °C.");
    expect(calls).toHaveLength(2);
    expect(errorText(toolOutputsSeen(model.doGenerateCalls[1])[0])).toMatch(
      /^The tool 'get_weather' failed with: "Invalid units. Supported: celsius". Analyze what went wrong and provide corrected arguments\./,
    );
    expect(searches).toBe(2); // retried in place: no extra model step
    expect(model.doGenerateCalls).toHaveLength(3);
    expect(clock.sleeps).toEqual([500, 500]); // the reflection's backoff gate, then the in-place retry's backoff
  });
});
