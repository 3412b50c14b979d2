import { AIMessage, type ToolMessage } from "@langchain/core/messages";
import { fakeModel } from "@langchain/core/testing";
import { tool } from "@langchain/core/tools";
import { RetryReflectPlugin } from "@retry-reflect/core";
import { createFakeClock } from "@retry-reflect/core/testing";
import { createAgent } from "langchain";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { retryReflectMiddleware } from "../src/index.js";
import { callTools, drive, recordEvents } from "./helpers.js";

const STOP = /\b(?:do not|don't)\b[^.\n]*\bagain\b/i;

describe("the circuit breaker across agent runs", () => {
  it("opens after 10 failures in 10 runs; the next run is told at once the tool is temporarily unavailable, without calling it; a run due within its patience waits for the probe", async () => {
    const clock = createFakeClock();
    const recorder = recordEvents();
    // Threshold 10 and patience 15 s (the defaults); the circuit's 60 s set here (the default is 1 s,
    // with which every call would wait for the probe), so that a call can be turned away at once.
    const plugin = RetryReflectPlugin.create({ clock, observers: [recorder], circuitBreakerResetMs: 60_000 });
    let broken = true;
    let toolCalls = 0;
    const brokenApi = tool(
      async () => {
        toolCalls += 1;
        if (broken) throw new Error("upstream exploded");
        return "ok";
      },
      { name: "broken_api", description: "A remote API.", schema: z.object({ id: z.string() }) },
    );
    const model = fakeModel();
    for (let run = 1; run <= 12; run++) {
      model.respond(callTools({ name: "broken_api", args: { id: `r${run}` }, id: `call_${run}` })).respond(new AIMessage(`answer ${run}`));
    }
    const agent = createAgent({ model, tools: [brokenApi], middleware: [retryReflectMiddleware(plugin)] });
    const runOnce = async () => {
      const result = await drive(clock, agent.invoke({ messages: [{ role: "user", content: "call the api" }] }));
      return result.messages[2] as ToolMessage;
    };

    for (let run = 1; run <= 10; run++) {
      const message = await runOnce();
      expect(message.artifact).toMatchObject({ error_code: "TOOL_FAILED", recoverable: true });
      expect(plugin.circuitState("broken_api")).toBe(run < 10 ? "closed" : "open");
      if (run === 10) {
        // The 10th failure opens the circuit for 60 s, more than the call's patience: the model is
        // told at once that the tool is temporarily unavailable, and when it may work again.
        expect(String(message.content)).toMatch(/temporarily unavailable.*about 60 s/);
        expect(String(message.content)).not.toMatch(STOP);
        expect(message.artifact).toMatchObject({ retry_after_ms: 60_000 });
      }
    }
    expect(toolCalls).toBe(10);
    expect(recorder.events.filter((event) => event.type === "circuit_opened").map((event) => event.fields)).toEqual([
      { tool_name: "broken_api", failures: 10, reset_ms: 60_000 },
    ]);

    // A new run meets the open circuit, 60 s from its probe: turned away at once, told it is temporary.
    const rejected = await runOnce();
    expect(toolCalls).toBe(10); // not called
    expect(clock.now()).toBe(0);
    expect(rejected.status).toBe("error");
    expect(rejected.artifact).toMatchObject({ error_code: "CIRCUIT_OPEN", recoverable: true, retry_after_ms: 60_000 });
    expect(String(rejected.content)).toContain("The circuit breaker of 'broken_api' is open");
    expect(String(rejected.content)).toMatch(/temporarily unavailable.*about 60 s/);
    expect(String(rejected.content)).not.toMatch(STOP);
    expect(rejected.response_metadata).toMatchObject({ retry_reflect: { status: "reflect" } });
    expect(recorder.events.at(-1)?.type).toBe("call_rejected");

    // 50 s later the probe is 10 s away, within the patience: the next run's call waits for it, is
    // the probe, and the API is back.
    await clock.advance(50_000);
    expect(plugin.circuitState("broken_api")).toBe("open");
    broken = false;
    const probe = await runOnce();
    expect(probe.content).toBe("ok");
    expect(clock.now()).toBe(60_000);
    expect(toolCalls).toBe(11);
    expect(plugin.circuitState("broken_api")).toBe("closed");
    expect(recorder.events.filter((event) => event.type === "waiting_for_recovery").map((event) => event.fields)).toEqual([
      { tool_name: "broken_api", wait_ms: 10_000 },
    ]);
  });
});
