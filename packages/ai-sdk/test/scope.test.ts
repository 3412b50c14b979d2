import { RetryReflectPlugin } from "@retry-reflect/core";
import { createFakeClock } from "@retry-reflect/core/testing";
import { generateText, stepCountIs, tool } from "ai";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { type ScopeInput, type WithRetryReflectOptions, withRetryReflect } from "../src/index.js";
import { callTools, drive, recordEvents, reply, scriptedModel } from "./helpers.js";

/** Two runs of one failing tool, each wrapped as `wrap` says, on one plugin with `maxRetries: 1`. */
async function twoRuns(options: () => WithRetryReflectOptions) {
  const clock = createFakeClock();
  const recorder = recordEvents();
  const plugin = RetryReflectPlugin.create({ clock, maxRetries: 1, observers: [recorder] });
  const report = tool({
    inputSchema: z.object({ month: z.string() }),
    execute: async (): Promise<string> => {
      throw new Error("report generation failed");
    },
  });
  for (let run = 1; run <= 2; run++) {
    const model = scriptedModel(callTools({ name: "report", input: { month: "may" }, id: `r${run}` }), reply("failed"));
    await drive(
      clock,
      generateText({
        model,
        tools: withRetryReflect({ report }, plugin, options()),
        stopWhen: stepCountIs(3),
        prompt: "report",
        experimental_context: { runId: `run-${run}` },
      }),
    );
  }
  return recorder.events
    .filter((event) => event.type !== "waiting_before_retry")
    .map((event) => `${event.type}:${String((event.fields as Record<string, unknown>).attempt ?? "")}`);
}

describe("the attempt-tracking scope", () => {
  it("is one per withRetryReflect call by default: each wrapped run has its own budget", async () => {
    expect(await twoRuns(() => ({}))).toEqual(["retry:1", "retry:1"]);
  });

  it("is shared by every call when it is a string", async () => {
    expect(await twoRuns(() => ({ scope: "user-7" }))).toEqual(["retry:1", "retries_exhausted:"]);
  });

  it("is what a scope function returns for the call", async () => {
    const seen: Array<Omit<ScopeInput, "options"> & { context: unknown }> = [];
    const events = await twoRuns(() => ({
      scope: (call) => {
        seen.push({ toolName: call.toolName, toolCallId: call.toolCallId, input: call.input, context: call.options.experimental_context });
        return String((call.options.experimental_context as { runId: string }).runId);
      },
    }));
    expect(events).toEqual(["retry:1", "retry:1"]);
    expect(seen[0]).toEqual({ toolName: "report", toolCallId: "r1", input: { month: "may" }, context: { runId: "run-1" } });
    expect(seen.at(-1)).toMatchObject({ toolCallId: "r2", context: { runId: "run-2" } });
  });
});
