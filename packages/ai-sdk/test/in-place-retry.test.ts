import { RetryReflectPlugin } from "@retry-reflect/core";
import { createFakeClock } from "@retry-reflect/core/testing";
import { generateText, stepCountIs, tool } from "ai";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { withRetryReflect } from "../src/index.js";
import { callTools, drive, errorText, recordEvents, reply, scriptedModel, toolOutputsSeen } from "./helpers.js";

describe("a transient failure", () => {
  it("is retried in place after the backoff, with no extra model step", async () => {
    const clock = createFakeClock();
    const recorder = recordEvents();
    const plugin = RetryReflectPlugin.create({ clock, observers: [recorder] });
    let runs = 0;
    const searchDocs = tool({
      description: "Searches the docs.",
      inputSchema: z.object({ query: z.string() }),
      execute: async ({ query }) => {
        runs += 1;
        if (runs < 3) throw Object.assign(new Error("503 Service Unavailable"), { status: 503 });
        return [`result for ${query}`];
      },
    });
    const model = scriptedModel(callTools({ name: "search_docs", input: { query: "retry" }, id: "call_1" }), reply("Found it."));

    const result = await drive(
      clock,
      generateText({ model, tools: withRetryReflect({ search_docs: searchDocs }, plugin), stopWhen: stepCountIs(5), prompt: "search" }),
    );

    expect(result.text).toBe("Found it.");
    expect(runs).toBe(3);
    expect(model.doGenerateCalls).toHaveLength(2); // one tool step, one answer: the retries cost no model call
    expect(result.steps).toHaveLength(2);
    expect(toolOutputsSeen(model.doGenerateCalls[1])).toEqual([
      { toolName: "search_docs", toolCallId: "call_1", output: { type: "json", value: ["result for retry"] } },
    ]);
    expect(clock.sleeps).toEqual([500, 1000]);
    expect(recorder.events.filter((event) => event.type === "retry").map((event) => event.fields)).toMatchObject([
      { attempt: 1, backoff_ms: 500, mode: "in_place", error_code: "TRANSIENT" },
      { attempt: 2, backoff_ms: 1000, mode: "in_place", error_code: "TRANSIENT" },
    ]);
    expect(recorder.events.at(-1)).toMatchObject({ type: "retry_succeeded", fields: { attempt: 3 } });
  });

  it("reaches the model as temporary once the call's patience is spent, and as a stop once the tool has failed for giveUpMs", async () => {
    const clock = createFakeClock();
    const recorder = recordEvents();
    const plugin = RetryReflectPlugin.create({ clock, observers: [recorder] }); // patience 15 s, give-up 20 s
    let runs = 0;
    const flaky = tool({
      inputSchema: z.object({}),
      execute: async (): Promise<string> => {
        runs += 1;
        throw Object.assign(new Error("connect ECONNREFUSED 10.0.0.1:443"), { code: "ECONNREFUSED" });
      },
    });
    const model = scriptedModel(
      callTools({ name: "flaky", input: {}, id: "c1" }),
      callTools({ name: "flaky", input: {}, id: "c2" }),
      reply("It is down."),
    );
    await drive(clock, generateText({ model, tools: withRetryReflect({ flaky }, plugin), stopWhen: stepCountIs(5), prompt: "go" }));

    // c1: retried in place at 0.5, 1.5, 3.5, 7.5 and 11.5 s; the next attempt would start past the patience.
    const [first] = toolOutputsSeen(model.doGenerateCalls[1]);
    expect(first?.output).toMatchObject({ type: "error-text" });
    const temporary = errorText(first);
    expect(temporary).toContain("The tool 'flaky' is temporarily unavailable");
    expect(temporary).toContain("It may work again in about 4 s");
    expect(temporary).not.toContain("Do not call");
    expect(temporary).toContain('"error_code":"TRANSIENT","message":"connect ECONNREFUSED 10.0.0.1:443","recoverable":true');
    expect(temporary).toContain('"retry_after_ms":4000');
    // c2 runs when the wait told has passed, and is the stop once the tool has failed for 20 s.
    const [second] = toolOutputsSeen(model.doGenerateCalls[2]).filter((part) => part.toolCallId === "c2");
    const stop = errorText(second);
    expect(stop).toContain("Do not call 'flaky' again for this task.");
    expect(stop).toContain('"error_code":"RETRIES_EXHAUSTED"');
    expect(runs).toBe(9);
    expect(clock.now()).toBe(23_500);
    expect(recorder.events.find((event) => event.type === "waiting_before_retry")?.fields).toEqual({ tool_name: "flaky", wait_ms: 4_000 });
  });
});
