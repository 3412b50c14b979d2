import { AIMessage, type ToolMessage } from "@langchain/core/messages";
import { fakeModel } from "@langchain/core/testing";
import { tool } from "@langchain/core/tools";
import { RetryReflectPlugin, ToolError } from "@retry-reflect/core";
import { createFakeClock } from "@retry-reflect/core/testing";
import { createAgent } from "langchain";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { retryReflectMiddleware } from "../src/index.js";
import { callTools, drive, recordEvents } from "./helpers.js";

const ACTION = "Tell the user that the monthly translation quota is used up, and stop.";

async function runWith(translate: (text: string) => unknown) {
  const clock = createFakeClock();
  const recorder = recordEvents();
  const plugin = RetryReflectPlugin.create({ clock, observers: [recorder] });
  let calls = 0;
  const translator = tool(
    async ({ text }) => {
      calls += 1;
      return translate(text);
    },
    { name: "translate", description: "Translate a text.", schema: z.object({ text: z.string() }) },
  );
  const model = fakeModel()
    .respond(callTools({ name: "translate", args: { text: "bonjour" }, id: "call_1" }))
    .respond(new AIMessage("Sorry, the translation quota is used up this month."));
  const agent = createAgent({ model, tools: [translator], middleware: [retryReflectMiddleware(plugin)] });
  const result = await drive(clock, agent.invoke({ messages: [{ role: "user", content: "translate bonjour" }] }));
  return { result, recorder, calls: () => calls, model, clock };
}

describe("a non-recoverable QUOTA_EXCEEDED error", () => {
  it("reaches the model with its suggested action and is not retried (thrown ToolError)", async () => {
    const { result, recorder, calls, model, clock } = await runWith(() => {
      throw new ToolError({
        code: "QUOTA_EXCEEDED",
        message: "Monthly quota of 10000 characters exceeded",
        recoverable: false,
        suggestedAction: ACTION,
      });
    });
    const message = result.messages[2] as ToolMessage;
    expect(message.status).toBe("error");
    expect(String(message.content)).toContain(ACTION);
    expect(String(message.content)).toContain("not recoverable");
    expect(message.artifact).toEqual({
      error_code: "QUOTA_EXCEEDED",
      message: "Monthly quota of 10000 characters exceeded",
      recoverable: false,
      // The library's own instruction for the stop; the tool's suggestion kept apart, as data.
      suggested_action: "Do not call 'translate' again for this task; tell the user what failed.",
      tool_suggested_action: ACTION,
    });
    expect(message.response_metadata).toMatchObject({ retry_reflect: { status: "failed", reason: "not_recoverable" } });
    expect(calls()).toBe(1);
    expect(model.callCount).toBe(2);
    expect(clock.sleeps).toEqual([]);
    expect(recorder.events).toEqual([]);
    expect(result.messages.at(-1)?.content).toBe("Sorry, the translation quota is used up this month.");
  });

  it("is recognised when the tool returns the seed's error shape instead of throwing", async () => {
    const { result, calls } = await runWith(() => ({
      error_code: "QUOTA_EXCEEDED",
      message: "Monthly quota of 10000 characters exceeded",
      recoverable: false,
      suggested_action: ACTION,
    }));
    const message = result.messages[2] as ToolMessage;
    expect(message.status).toBe("error");
    expect(message.artifact).toMatchObject({ error_code: "QUOTA_EXCEEDED", recoverable: false, tool_suggested_action: ACTION });
    expect(calls()).toBe(1);
  });
});
