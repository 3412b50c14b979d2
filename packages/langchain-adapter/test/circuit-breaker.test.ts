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

describe("the circuit breaker across agent runs", () => {
  it("opens after 5 failures in 5 runs; the 6th run gets CIRCUIT_OPEN without calling the tool; a probe after resetMs closes it", async () => {
    const clock = createFakeClock();
    const recorder = recordEvents();
    const plugin = RetryReflectPlugin.create({ clock, observers: [recorder] }); // threshold 5, reset 60 s
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
    for (let run = 1; run <= 7; run++) {
      model.respond(callTools({ name: "broken_api", args: { id: `r${run}` }, id: `call_${run}` })).respond(new AIMessage(`answer ${run}`));
    }
    const agent = createAgent({ model, tools: [brokenApi], middleware: [retryReflectMiddleware(plugin)] });
    const runOnce = async () => {
      const result = await drive(clock, agent.invoke({ messages: [{ role: "user", content: "call the api" }] }));
      return result.messages[2] as ToolMessage;
    };

    for (let run = 1; run <= 5; run++) {
      const message = await runOnce();
      // The 5th failure opens the circuit: the model is told at once not to call the tool again.
      expect(message.artifact).toMatchObject(
        run < 5
          ? { error_code: "TOOL_FAILED" }
          : { error_code: "CIRCUIT_OPEN", details: { last_error_code: "TOOL_FAILED", last_error: "upstream exploded" } },
      );
      expect(plugin.circuitState("broken_api")).toBe(run < 5 ? "closed" : "open");
    }
    expect(toolCalls).toBe(5);
    expect(recorder.events.filter((event) => event.type === "circuit_opened").map((event) => event.fields)).toEqual([
      { tool_name: "broken_api", failures: 5, reset_ms: 60_000 },
    ]);

    const rejected = await runOnce();
    expect(toolCalls).toBe(5); // not called
    expect(rejected.status).toBe("error");
    expect(rejected.artifact).toMatchObject({ error_code: "CIRCUIT_OPEN", recoverable: false });
    expect(String(rejected.content)).toContain("circuit breaker is open");
    expect(rejected.response_metadata).toMatchObject({ retry_reflect: { status: "failed", reason: "circuit_open" } });
    expect(recorder.events.at(-1)?.type).toBe("call_rejected");

    await clock.advance(60_000);
    expect(plugin.circuitState("broken_api")).toBe("half-open");
    broken = false;
    const probe = await runOnce();
    expect(probe.content).toBe("ok");
    expect(toolCalls).toBe(6);
    expect(plugin.circuitState("broken_api")).toBe("closed");
  });
});
