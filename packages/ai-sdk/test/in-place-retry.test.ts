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

  it("reaches the model as a stop once retries are exhausted", async () => {
    const clock = createFakeClock();
    const plugin = RetryReflectPlugin.create({ clock, maxRetries: 1 });
    let runs = 0;
    const flaky = tool({
      inputSchema: z.object({}),
      execute: async (): Promise<string> => {
        runs += 1;
        throw Object.assign(new Error("connect ECONNREFUSED 10.0.0.1:443"), { code: "ECONNREFUSED" });
      },
    });
    const model = scriptedModel(callTools({ name: "flaky", input: {}, id: "c1" }), reply("It is down."));
    await drive(clock, generateText({ model, tools: withRetryReflect({ flaky }, plugin), stopWhen: stepCountIs(5), prompt: "go" }));

    expect(runs).toBe(2);
    const [seen] = toolOutputsSeen(model.doGenerateCalls[1]);
    expect(seen?.output).toMatchObject({ type: "error-text" });
    const text = errorText(seen);
    expect(text).toContain("Do not call 'flaky' again for this task.");
    expect(text).toContain('"error_code":"RETRIES_EXHAUSTED"');
  });
});
