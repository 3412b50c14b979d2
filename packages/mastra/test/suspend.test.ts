import { Agent } from "@mastra/core/agent";
import { Mastra } from "@mastra/core/mastra";
import { InMemoryStore } from "@mastra/core/storage";
import { createTool } from "@mastra/core/tools";
import { RetryReflectPlugin } from "@retry-reflect/core";
import { createFakeClock } from "@retry-reflect/core/testing";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { callTools, drive, recordEvents, reply, scriptedModel, toolOutputsSeen } from "../../ai-sdk/test/helpers.js";
import { withRetryReflect } from "../src/index.js";

// A write tool that asks the user to confirm inside `execute` (`context.agent.suspend()`): the call
// that suspended is neither a success nor a failure, so nothing is stored for it and it runs on
// resume. Real Mastra `Agent.generate` then `resumeGenerate`, the AI SDK's mock model, Mastra's
// in-memory storage (a resume needs the run's snapshot).

describe("a Mastra write tool that suspends inside execute to ask for a confirmation", () => {
  it("runs once, after resumeGenerate: the suspended call was not stored as done", async () => {
    const clock = createFakeClock();
    const recorder = recordEvents();
    const plugin = RetryReflectPlugin.create({ clock, observers: [recorder] });
    const transfers: unknown[] = [];
    const transfer = createTool({
      id: "transfer",
      description: "Sends money, once the user confirmed it.",
      inputSchema: z.object({ to: z.string(), amount: z.number() }),
      suspendSchema: z.object({ question: z.string() }),
      resumeSchema: z.object({ confirmed: z.boolean() }),
      execute: async ({ to, amount }, context) => {
        const answer = context.agent?.resumeData as { confirmed: boolean } | undefined;
        if (answer === undefined) {
          await context.agent?.suspend({ question: `Send ${amount} to ${to}?` });
          return undefined;
        }
        if (!answer.confirmed) return { transferred: false };
        transfers.push({ to, amount });
        return { transferred: true, to, amount };
      },
    });
    const model = scriptedModel(callTools({ name: "transfer", input: { to: "IBAN-1", amount: 100 }, id: "call_1" }), reply("Transferred."));
    const mastra = new Mastra({
      agents: {
        assistant: new Agent({
          id: "assistant",
          name: "assistant",
          instructions: "Use the tools.",
          model,
          tools: withRetryReflect({ transfer }, plugin, { toolEffects: { transfer: "write" } }),
        }),
      },
      storage: new InMemoryStore(),
      logger: false,
    });
    const agent = mastra.getAgent("assistant");

    const suspended = await drive(clock, agent.generate("Send 100 to IBAN-1.", { maxSteps: 5 }));
    expect(suspended.finishReason).toBe("suspended");
    expect(suspended.suspendPayload).toMatchObject({ toolName: "transfer", suspendPayload: { question: "Send 100 to IBAN-1?" } });
    expect(transfers).toEqual([]);

    const result = await drive(
      clock,
      agent.resumeGenerate({ confirmed: true }, { runId: suspended.runId as string, toolCallId: "call_1", maxSteps: 5 }),
    );

    expect(transfers).toEqual([{ to: "IBAN-1", amount: 100 }]); // the confirmed transfer happened, once
    expect(result.text).toBe("Transferred.");
    expect(toolOutputsSeen(model.doGenerateCalls.at(-1))).toMatchObject([
      { toolCallId: "call_1", output: { type: "json", value: { transferred: true, to: "IBAN-1", amount: 100 } } },
    ]);
    expect(recorder.types()).not.toContain("idempotent_replay");
  });
});
