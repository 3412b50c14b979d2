// The same adapter against AI SDK 7 (`ai-v7`, an alias of ai@7), which needs Node >= 22: CI runs
// the suite on Node 20 (these are skipped there) and again on Node 24 (they run). The package is
// imported inside the tests, so that Node 20 never loads it.
import { RetryReflectPlugin } from "@retry-reflect/core";
import { createFakeClock } from "@retry-reflect/core/testing";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { availableTools, RetryReflectToolError, withRetryReflect } from "../src/index.js";
import { callTools, drive, reply, toolOutputsSeen, toolsOffered } from "./helpers.js";

const NODE_MAJOR = Number(process.versions.node.split(".")[0]);
const ON_NODE_22 = NODE_MAJOR >= 22;

type V7 = typeof import("ai-v7");
type V7Test = typeof import("ai-v7/test");
type Turn = ReturnType<typeof callTools>;

async function loadV7(): Promise<{ ai: V7; test: V7Test }> {
  return { ai: await import("ai-v7"), test: await import("ai-v7/test") };
}

/** A mock model of AI SDK 7's test kit that plays `turns` in order. */
function scripted(test: V7Test, turns: Turn[]) {
  let index = 0;
  return new test.MockLanguageModelV3({
    doGenerate: async (options) => {
      options.abortSignal?.throwIfAborted();
      const turn = turns[index++];
      if (turn === undefined) throw new Error(`the scripted model has no turn ${index}`);
      return turn as never;
    },
  });
}

describe.skipIf(!ON_NODE_22)(`AI SDK 7 (ai@7 needs Node >= 22; this is Node ${process.versions.node})`, () => {
  it("reflects bad arguments as a tool error the model reads; the corrected call succeeds", async () => {
    const { ai, test } = await loadV7();
    const clock = createFakeClock();
    const plugin = RetryReflectPlugin.create({ clock });
    const getWeather = ai.tool({
      inputSchema: z.object({ city: z.string(), units: z.string() }),
      execute: async ({ units }) => {
        if (units !== "celsius") throw new Error("Invalid units. Supported: celsius, fahrenheit");
        return { temperature: 22 };
      },
    });
    const model = scripted(test, [
      callTools({ name: "get_weather", input: { city: "nyc", units: "kelvin" }, id: "call_1" }),
      callTools({ name: "get_weather", input: { city: "nyc", units: "celsius" }, id: "call_2" }),
      reply("22 °C"),
    ]);
    const result = await drive(
      clock,
      ai.generateText({
        model,
        tools: withRetryReflect({ get_weather: getWeather }, plugin),
        stopWhen: ai.stepCountIs(5),
        prompt: "?",
      }),
    );
    expect(result.text).toBe("22 °C");
    const [seen] = toolOutputsSeen(model.doGenerateCalls[1] as never);
    expect(seen?.output).toEqual({
      type: "error-text",
      value:
        "The tool 'get_weather' failed with: \"Invalid units. Supported: celsius, fahrenheit\". Analyze what went wrong and provide corrected arguments.\n\n" +
        '{"error_code":"INVALID_ARGUMENTS","message":"Invalid units. Supported: celsius, fahrenheit","recoverable":true,"suggested_action":"Correct the arguments named in the error and call the tool again.","attempt":1,"max_retries":3}',
    });
    const part = result.steps[0]?.content.find((each) => each.type === "tool-error");
    expect(part?.type === "tool-error" && RetryReflectToolError.isInstance(part.error)).toBe(true);
  });

  it("retries a transient failure in place with no extra model step", async () => {
    const { ai, test } = await loadV7();
    const clock = createFakeClock();
    const plugin = RetryReflectPlugin.create({ clock });
    let runs = 0;
    const search = ai.tool({
      inputSchema: z.object({ query: z.string() }),
      execute: async () => {
        runs += 1;
        if (runs === 1) throw Object.assign(new Error("HTTP 503"), { status: 503 });
        return "found";
      },
    });
    const model = scripted(test, [callTools({ name: "search", input: { query: "x" }, id: "c1" }), reply("done")]);
    await drive(clock, ai.generateText({ model, tools: withRetryReflect({ search }, plugin), stopWhen: ai.stepCountIs(5), prompt: "?" }));
    expect(runs).toBe(2);
    expect(model.doGenerateCalls).toHaveLength(2);
    expect(clock.sleeps).toEqual([500]);
  });

  it("hides a tool whose circuit is open from activeTools", async () => {
    const { ai, test } = await loadV7();
    const clock = createFakeClock();
    const plugin = RetryReflectPlugin.create({ clock, circuitBreakerThreshold: 1 });
    const tools = withRetryReflect(
      {
        broken: ai.tool({
          inputSchema: z.object({}),
          execute: async (): Promise<string> => {
            throw new Error("upstream exploded");
          },
        }),
        cache: ai.tool({ inputSchema: z.object({}), execute: async () => "cached" }),
      },
      plugin,
    );
    const model = scripted(test, [callTools({ name: "broken", input: {}, id: "c1" }), reply("cached")]);
    await drive(
      clock,
      ai.generateText({
        model,
        tools,
        stopWhen: ai.stepCountIs(5),
        prepareStep: () => ({ activeTools: availableTools(plugin, tools) }),
        prompt: "?",
      }),
    );
    expect(toolsOffered(model.doGenerateCalls[0] as never)).toEqual(["broken", "cache"]);
    expect(toolsOffered(model.doGenerateCalls[1] as never)).toEqual(["cache"]);
  });
  it("keeps the users of one tool set wrapped at start-up apart: each run places its own order, a re-issued one is replayed", async () => {
    const { ai, test } = await loadV7();
    const clock = createFakeClock();
    const plugin = RetryReflectPlugin.create({ clock, toolEffects: { place_order: "write" } });
    let orders = 0;
    const placeOrder = ai.tool({ inputSchema: z.object({ item: z.string() }), execute: async ({ item }) => ({ order: ++orders, item }) });
    const tools = withRetryReflect({ place_order: placeOrder }, plugin);
    const book = (id: string) => callTools({ name: "place_order", input: { item: "book" }, id });
    const seen = (model: ReturnType<typeof scripted>) =>
      model.doGenerateCalls.slice(1).flatMap((call) => toolOutputsSeen(call as never).map((output) => output.output));

    const alice = scripted(test, [book("c1"), book("c2"), reply("Ordered.")]);
    await drive(clock, ai.generateText({ model: alice, tools, stopWhen: ai.stepCountIs(5), prompt: "Buy me the book." }));
    const bob = scripted(test, [book("c1"), reply("Ordered.")]);
    await drive(
      clock,
      ai.generateText({ model: bob, tools, stopWhen: ai.stepCountIs(5), messages: [{ role: "user", content: "Buy me the book." }] }),
    );

    expect(orders).toBe(2);
    const first = { type: "json", value: { order: 1, item: "book" } };
    expect(seen(alice)).toEqual([first, first]);
    expect(seen(bob)).toEqual([{ type: "json", value: { order: 2, item: "book" } }]);
  });
});
