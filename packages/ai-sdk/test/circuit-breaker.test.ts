import { RetryReflectPlugin } from "@retry-reflect/core";
import { createFakeClock } from "@retry-reflect/core/testing";
import { generateText, stepCountIs, tool } from "ai";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { availableTools, withRetryReflect } from "../src/index.js";
import { callTools, drive, errorText, reply, scriptedModel, toolOutputsSeen, toolsOffered } from "./helpers.js";

describe("the circuit breaker and availableTools", () => {
  it("a tool whose circuit opens leaves activeTools; after the reset time it is offered again and its probe closes the circuit", async () => {
    const clock = createFakeClock();
    const plugin = RetryReflectPlugin.create({ clock, circuitBreakerThreshold: 2, circuitBreakerResetMs: 60_000 });
    let broken = true;
    let runs = 0;
    const tools = {
      broken_api: tool({
        description: "A remote API.",
        inputSchema: z.object({ id: z.string() }),
        execute: async () => {
          runs += 1;
          if (broken) throw new Error("upstream exploded");
          return "ok";
        },
      }),
      local_cache: tool({ description: "A local cache.", inputSchema: z.object({ id: z.string() }), execute: async () => "cached" }),
    };
    const run = (model: ReturnType<typeof scriptedModel>) => {
      const wrapped = withRetryReflect(tools, plugin); // one scope per run
      return drive(
        clock,
        generateText({
          model,
          tools: wrapped,
          stopWhen: stepCountIs(6),
          prepareStep: () => ({ activeTools: availableTools(plugin, wrapped) }),
          prompt: "fetch r1",
        }),
      );
    };

    const first = scriptedModel(
      callTools({ name: "broken_api", input: { id: "r1" }, id: "c1" }),
      callTools({ name: "broken_api", input: { id: "r1" }, id: "c2" }),
      callTools({ name: "local_cache", input: { id: "r1" }, id: "c3" }),
      reply("From the cache: cached."),
    );
    await run(first);

    expect(runs).toBe(2);
    expect(plugin.circuitState("broken_api")).toBe("open");
    expect(toolsOffered(first.doGenerateCalls[0])).toEqual(["broken_api", "local_cache"]);
    expect(toolsOffered(first.doGenerateCalls[1])).toEqual(["broken_api", "local_cache"]);
    // The second failure opened the circuit for 60 s: the model is told the tool is temporarily
    // unavailable until then, and the tool is no longer offered.
    const [opened] = toolOutputsSeen(first.doGenerateCalls[2]);
    expect(errorText(opened)).toMatch(/The tool 'broken_api' is temporarily unavailable.*about 60 s/);
    expect(errorText(opened)).toContain('"recoverable":true');
    expect(errorText(opened)).toContain('"retry_after_ms":60000');
    expect(toolsOffered(first.doGenerateCalls[2])).toEqual(["local_cache"]);
    expect(toolsOffered(first.doGenerateCalls[3])).toEqual(["local_cache"]);

    // A new run while the circuit is open: the tool is not offered at all.
    const second = scriptedModel(callTools({ name: "local_cache", input: { id: "r1" }, id: "d1" }), reply("cached"));
    await run(second);
    expect(toolsOffered(second.doGenerateCalls[0])).toEqual(["local_cache"]);

    // After the reset time the circuit is half-open: available again; the next call is the probe.
    await clock.advance(60_000);
    expect(plugin.circuitState("broken_api")).toBe("half-open");
    expect(availableTools(plugin, tools)).toEqual(["broken_api", "local_cache"]);
    broken = false;
    const third = scriptedModel(callTools({ name: "broken_api", input: { id: "r1" }, id: "e1" }), reply("ok"));
    await run(third);
    expect(toolsOffered(third.doGenerateCalls[0])).toEqual(["broken_api", "local_cache"]);
    expect(toolOutputsSeen(third.doGenerateCalls[1])).toEqual([
      { toolName: "broken_api", toolCallId: "e1", output: { type: "text", value: "ok" } },
    ]);
    expect(runs).toBe(3);
    expect(plugin.circuitState("broken_api")).toBe("closed");
  });

  it("a call that still reaches an isolated circuit fails fast without running the tool", async () => {
    const clock = createFakeClock();
    const plugin = RetryReflectPlugin.create({ clock });
    let runs = 0;
    const api = tool({
      inputSchema: z.object({}),
      execute: async () => {
        runs += 1;
        return "ok";
      },
    });
    plugin.circuits.isolate("api");
    const model = scriptedModel(callTools({ name: "api", input: {}, id: "c1" }), reply("down"));
    await drive(clock, generateText({ model, tools: withRetryReflect({ api }, plugin), stopWhen: stepCountIs(3), prompt: "go" }));
    expect(runs).toBe(0);
    const [seen] = toolOutputsSeen(model.doGenerateCalls[1]);
    expect(seen?.output).toMatchObject({ type: "error-text" });
    const text = errorText(seen);
    expect(text).toContain("Do not call it again for this task");
    expect(text).toContain('"error_code":"CIRCUIT_OPEN"');
  });
});
