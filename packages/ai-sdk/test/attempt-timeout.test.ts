import { RetryReflectPlugin } from "@retry-reflect/core";
import { createFakeClock } from "@retry-reflect/core/testing";
import { generateText, stepCountIs, tool } from "ai";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { getToolContext, withRetryReflect } from "../src/index.js";
import { callTools, drive, recordEvents, reply, scriptedModel, toolOutputsSeen } from "./helpers.js";

describe("attemptTimeoutMs", () => {
  it("aborts the signal a hung tool was given; the TIMEOUT is retried in place", async () => {
    const clock = createFakeClock();
    const recorder = recordEvents();
    const plugin = RetryReflectPlugin.create({ clock, observers: [recorder], tools: { lookup: { attemptTimeoutMs: 1000 } } });
    const signals: Array<AbortSignal | undefined> = [];
    const lookup = tool({
      inputSchema: z.object({ id: z.string() }),
      execute: async (_input, options) => {
        signals.push(options.abortSignal);
        expect(getToolContext(options)?.signal).toBe(options.abortSignal);
        if (signals.length > 1) return "found";
        return new Promise<string>((_resolve, reject) => {
          options.abortSignal?.addEventListener("abort", () => reject(options.abortSignal?.reason));
        });
      },
    });
    const model = scriptedModel(callTools({ name: "lookup", input: { id: "a" }, id: "c1" }), reply("found"));
    await drive(clock, generateText({ model, tools: withRetryReflect({ lookup }, plugin), stopWhen: stepCountIs(3), prompt: "?" }));

    expect(signals).toHaveLength(2);
    expect(signals[0]?.aborted).toBe(true);
    expect(signals[1]?.aborted).toBe(false);
    expect(recorder.types()).toContain("attempt_timed_out");
    expect(toolOutputsSeen(model.doGenerateCalls[1])).toEqual([
      { toolName: "lookup", toolCallId: "c1", output: { type: "text", value: "found" } },
    ]);
  });
});
