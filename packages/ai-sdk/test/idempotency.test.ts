import { RetryReflectPlugin, type ToolContext } from "@retry-reflect/core";
import { createFakeClock } from "@retry-reflect/core/testing";
import { generateText, stepCountIs, tool } from "ai";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { getToolContext, withRetryReflect } from "../src/index.js";
import { callTools, drive, errorText, recordEvents, reply, scriptedModel, toolOutputsSeen } from "./helpers.js";

describe("a write tool with an idempotency key", () => {
  it("runs once when the model re-issues it with the same key; a transient failure is retried in place with the key", async () => {
    const clock = createFakeClock();
    const recorder = recordEvents();
    const plugin = RetryReflectPlugin.create({ clock, observers: [recorder] });
    const sent: string[] = [];
    const contexts: Array<ToolContext | undefined> = [];
    let runs = 0;
    const sendEmail = tool({
      description: "Sends an email.",
      inputSchema: z.object({ to: z.string(), subject: z.string(), idempotency_key: z.string().optional() }),
      execute: async ({ to, subject }, options) => {
        runs += 1;
        contexts.push(getToolContext(options));
        if (runs === 1) throw Object.assign(new Error("502 Bad Gateway"), { status: 502 });
        sent.push(`${to}: ${subject}`);
        return { messageId: "m-1" };
      },
    });
    const email = { to: "ana@example.com", subject: "Your invoice", idempotency_key: "invoice-42" };
    const model = scriptedModel(
      callTools({ name: "send_email", input: email, id: "c1" }),
      callTools({ name: "send_email", input: email, id: "c2" }), // the model sends it again
      reply("Sent."),
    );

    await drive(
      clock,
      generateText({
        model,
        tools: withRetryReflect({ send_email: sendEmail }, plugin, { toolEffects: { send_email: "write" } }),
        stopWhen: stepCountIs(5),
        prompt: "send the invoice",
      }),
    );

    expect(sent).toEqual(["ana@example.com: Your invoice"]); // exactly one email
    expect(runs).toBe(2); // the failed attempt and its in-place retry; the re-issued call ran nothing
    expect(contexts.map((context) => context && { attempt: context.attempt, key: context.idempotencyKey, callId: context.callId })).toEqual(
      [
        { attempt: 1, key: "invoice-42", callId: "c1" },
        { attempt: 2, key: "invoice-42", callId: "c1" },
      ],
    );
    expect(toolOutputsSeen(model.doGenerateCalls[1])).toEqual([
      { toolName: "send_email", toolCallId: "c1", output: { type: "json", value: { messageId: "m-1" } } },
    ]);
    expect(toolOutputsSeen(model.doGenerateCalls[2])).toEqual([
      { toolName: "send_email", toolCallId: "c2", output: { type: "json", value: { messageId: "m-1" } } },
    ]);
    expect(recorder.types()).toEqual(["retry", "retry_succeeded", "idempotent_replay"]);
  });

  it("asks the model for a key when a write comes without one, and does not run it", async () => {
    const plugin = RetryReflectPlugin.create({ toolEffects: { send_email: "write" } });
    let runs = 0;
    const sendEmail = tool({
      inputSchema: z.object({ to: z.string(), idempotency_key: z.string().optional() }),
      execute: async () => {
        runs += 1;
        return "sent";
      },
    });
    const model = scriptedModel(callTools({ name: "send_email", input: { to: "ana@example.com" }, id: "c1" }), reply("need a key"));
    await generateText({ model, tools: withRetryReflect({ send_email: sendEmail }, plugin), stopWhen: stepCountIs(3), prompt: "send" });
    expect(runs).toBe(0);
    const [seen] = toolOutputsSeen(model.doGenerateCalls[1]);
    expect(seen?.output).toMatchObject({ type: "error-text" });
    expect(errorText(seen)).toContain('"error_code":"IDEMPOTENCY_KEY_REQUIRED"');
  });
});
