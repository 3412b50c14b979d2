import { AIMessage, ToolMessage } from "@langchain/core/messages";
import { fakeModel } from "@langchain/core/testing";
import { tool } from "@langchain/core/tools";
import { InMemoryIdempotencyStore, RetryReflectPlugin, type ToolContext } from "@retry-reflect/core";
import type { IdempotencyStore } from "@retry-reflect/core/stores";
import { createFakeClock } from "@retry-reflect/core/testing";
import { createAgent } from "langchain";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { getToolContext, retryReflectMiddleware } from "../src/index.js";
import { callTools, drive, recordEvents } from "./helpers.js";

/** A mail service that, like a real one, deduplicates on the Idempotency-Key header. */
function mailService() {
  const sent: Array<{ to: string; subject: string }> = [];
  const byKey = new Map<string, string>();
  return {
    sent,
    send(mail: { to: string; subject: string }, idempotencyKey: string | undefined): string {
      const known = idempotencyKey === undefined ? undefined : byKey.get(idempotencyKey);
      if (known !== undefined) return known;
      sent.push(mail);
      const id = `m-${sent.length}`;
      if (idempotencyKey !== undefined) byKey.set(idempotencyKey, id);
      return id;
    },
  };
}

const emailSchema = z.object({ to: z.string(), subject: z.string(), idempotency_key: z.string().optional() });
const args = { to: "ada@example.com", subject: "Invoice", idempotency_key: "email-7f3a" };

describe("send_email, a write tool behind the idempotency guard", () => {
  it("sends exactly one email when the model re-issues the call with the same idempotency_key (effect from metadata)", async () => {
    const clock = createFakeClock();
    const recorder = recordEvents();
    const plugin = RetryReflectPlugin.create({ clock, observers: [recorder] });
    const service = mailService();
    const contexts: Array<ToolContext | undefined> = [];
    const sendEmail = tool(
      async ({ to, subject }) => {
        contexts.push(getToolContext());
        return `sent ${service.send({ to, subject }, getToolContext()?.idempotencyKey)}`;
      },
      { name: "send_email", description: "Send an email.", schema: emailSchema, metadata: { effect: "write" } },
    );
    const model = fakeModel()
      .respond(callTools({ name: "send_email", args, id: "call_1" }))
      .respond(callTools({ name: "send_email", args, id: "call_2" }))
      .respond(new AIMessage("Sent."));
    const agent = createAgent({ model, tools: [sendEmail], middleware: [retryReflectMiddleware(plugin)] });

    const result = await drive(clock, agent.invoke({ messages: [{ role: "user", content: "email the invoice to ada" }] }));

    expect(service.sent).toHaveLength(1);
    expect(contexts).toHaveLength(1);
    expect(contexts[0]).toMatchObject({ attempt: 1, idempotencyKey: "email-7f3a", toolName: "send_email", callId: "call_1" });
    const first = result.messages[2] as ToolMessage;
    const replay = result.messages[4] as ToolMessage;
    expect(first.content).toBe("sent m-1");
    expect(replay.content).toBe("sent m-1");
    expect(replay.tool_call_id).toBe("call_2"); // re-addressed to the call it answers
    expect(replay.status).toBe("success");
    expect(recorder.events.map((event) => event.type)).toEqual(["idempotent_replay"]);
  });

  it("replays from a store that keeps results as JSON (a shared store such as Redis): the replay is a ToolMessage again, re-addressed", async () => {
    const clock = createFakeClock();
    const inner = new InMemoryIdempotencyStore({ clock });
    // Every value goes through JSON on its way in, as a Redis store keeps it.
    const jsonStore: IdempotencyStore = {
      begin: (key, fingerprint, leaseMs) => inner.begin(key, fingerprint, leaseMs),
      complete: (key, token, value, ttlMs) => inner.complete(key, token, JSON.parse(JSON.stringify(value)), ttlMs),
      release: (key, token) => inner.release(key, token),
    };
    const plugin = RetryReflectPlugin.create({ clock, idempotency: { store: jsonStore } });
    const service = mailService();
    const sendEmail = tool(async ({ to, subject }) => `sent ${service.send({ to, subject }, getToolContext()?.idempotencyKey)}`, {
      name: "send_email",
      description: "Send an email.",
      schema: emailSchema,
      metadata: { effect: "write" },
    });
    const model = fakeModel()
      .respond(callTools({ name: "send_email", args, id: "call_1" }))
      .respond(callTools({ name: "send_email", args, id: "call_2" }))
      .respond(new AIMessage("Sent."));
    const agent = createAgent({ model, tools: [sendEmail], middleware: [retryReflectMiddleware(plugin)] });

    const result = await drive(clock, agent.invoke({ messages: [{ role: "user", content: "email the invoice to ada" }] }));

    expect(service.sent).toHaveLength(1);
    const replay = result.messages[4] as ToolMessage;
    expect(ToolMessage.isInstance(replay)).toBe(true);
    expect(replay.content).toBe("sent m-1");
    expect(replay.tool_call_id).toBe("call_2");
  });

  it("a retry in place after a timeout carries the same key to the service, which sends one email (effect from options)", async () => {
    const clock = createFakeClock();
    const recorder = recordEvents();
    const plugin = RetryReflectPlugin.create({ clock, observers: [recorder], toolEffects: { send_email: "write" } });
    const service = mailService();
    const keys: Array<string | undefined> = [];
    let attempts = 0;
    const sendEmail = tool(
      async ({ to, subject }) => {
        attempts += 1;
        const key = getToolContext()?.idempotencyKey;
        keys.push(key);
        const id = service.send({ to, subject }, key);
        // The first response is lost on the way back: the mail went out, the caller sees a timeout.
        if (attempts === 1) throw Object.assign(new Error("response timed out"), { name: "TimeoutError" });
        return `sent ${id}`;
      },
      { name: "send_email", description: "Send an email.", schema: emailSchema },
    );
    const model = fakeModel()
      .respond(callTools({ name: "send_email", args, id: "call_1" }))
      .respond(new AIMessage("Sent."));
    const agent = createAgent({ model, tools: [sendEmail], middleware: [retryReflectMiddleware(plugin)] });

    const result = await drive(clock, agent.invoke({ messages: [{ role: "user", content: "email the invoice to ada" }] }));

    expect(attempts).toBe(2);
    expect(keys).toEqual(["email-7f3a", "email-7f3a"]);
    expect(service.sent).toHaveLength(1);
    expect((result.messages[2] as ToolMessage).content).toBe("sent m-1");
    expect(recorder.events.map((event) => [event.type, event.fields.tool_name])).toEqual([
      ["retry", "send_email"],
      ["retry_succeeded", "send_email"],
    ]);
  });

  it("without an idempotency_key the call is refused with IDEMPOTENCY_KEY_REQUIRED and the tool does not run", async () => {
    const clock = createFakeClock();
    const plugin = RetryReflectPlugin.create({ clock });
    let calls = 0;
    const sendEmail = tool(
      async () => {
        calls += 1;
        return "sent";
      },
      { name: "send_email", description: "Send an email.", schema: emailSchema, metadata: { effect: "write" } },
    );
    const model = fakeModel()
      .respond(callTools({ name: "send_email", args: { to: "ada@example.com", subject: "Invoice" }, id: "call_1" }))
      .respond(new AIMessage("I need a key."));
    const agent = createAgent({ model, tools: [sendEmail], middleware: [retryReflectMiddleware(plugin)] });
    const result = await drive(clock, agent.invoke({ messages: [{ role: "user", content: "email ada" }] }));
    const message = result.messages[2] as ToolMessage;
    expect(calls).toBe(0);
    expect(message.status).toBe("error");
    expect(message.artifact).toMatchObject({ error_code: "IDEMPOTENCY_KEY_REQUIRED", recoverable: true });
    expect(String(message.content)).toContain("idempotency_key");
  });

  it("getToolContext() is undefined outside a guarded call", () => {
    expect(getToolContext()).toBeUndefined();
  });
});
