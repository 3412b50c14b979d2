import { RetryReflectPlugin } from "@retry-reflect/core";
import { createFakeClock } from "@retry-reflect/core/testing";
import { generateText, stepCountIs, tool } from "ai";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { withRetryReflect } from "../src/index.js";
import { callTools, recordEvents, reply, scriptedModel } from "./helpers.js";

/** Lets the run proceed until the plugin sleeps on the fake clock (no real time passes). */
async function untilSleeping(clock: ReturnType<typeof createFakeClock>): Promise<void> {
  for (let round = 0; round < 1000 && clock.pendingSleeps() === 0; round++) await new Promise<void>((resolve) => setImmediate(resolve));
  expect(clock.pendingSleeps()).toBe(1);
}

describe("aborting generateText", () => {
  it("cuts an in-place backoff short: the run rejects with the abort reason and the tool is not called again", async () => {
    const clock = createFakeClock();
    const recorder = recordEvents();
    const plugin = RetryReflectPlugin.create({ clock, observers: [recorder], initialBackoffMs: 30_000, maxBackoffMs: 30_000 });
    let runs = 0;
    const slowApi = tool({
      inputSchema: z.object({}),
      execute: async (): Promise<string> => {
        runs += 1;
        throw Object.assign(new Error("HTTP 503"), { status: 503 });
      },
    });
    const controller = new AbortController();
    const model = scriptedModel(callTools({ name: "slow_api", input: {}, id: "c1" }), reply("never"));
    const run = generateText({
      model,
      tools: withRetryReflect({ slow_api: slowApi }, plugin),
      stopWhen: stepCountIs(3),
      abortSignal: controller.signal,
      prompt: "go",
    });
    run.catch(() => undefined);

    await untilSleeping(clock);
    expect(clock.sleeps).toEqual([30_000]);
    const reason = new Error("the user cancelled");
    controller.abort(reason);

    await expect(run).rejects.toBe(reason);
    expect(runs).toBe(1);
    expect(clock.pendingSleeps()).toBe(0);
    expect(clock.now()).toBe(0); // the 30 s backoff was never waited out
    expect(model.doGenerateCalls).toHaveLength(1); // the AI SDK ends the run on the abort: no further model call
    expect(recorder.types()).toEqual(["retry"]);
  });
});
