import { AIMessage, ToolMessage } from "@langchain/core/messages";
import { fakeModel } from "@langchain/core/testing";
import { tool } from "@langchain/core/tools";
import { MemorySaver } from "@langchain/langgraph";
import { RetryReflectPlugin } from "@retry-reflect/core";
import { createFakeClock } from "@retry-reflect/core/testing";
import { createAgent } from "langchain";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { type RetryReflectMiddlewareOptions, retryReflectMiddleware } from "../src/index.js";
import { callTools, drive, fieldOf, recordEvents } from "./helpers.js";

// One middleware made at start-up and shared by every request (each request builds its agent, or
// one agent serves them all): its defaults never replay one user's write to another, and a `scope`
// or `namespace` given as a string is taken as it is. Real `createAgent` runs, a fake model.

/** A server: one plugin and one middleware for every request; `transfer` writes, each run of it a new receipt. */
function server(adapter: RetryReflectMiddlewareOptions = {}) {
  const clock = createFakeClock();
  const recorder = recordEvents();
  const plugin = RetryReflectPlugin.create({ clock, observers: [recorder] });
  const middleware = retryReflectMiddleware(plugin, adapter);
  let receipts = 0;
  const transfer = tool(async ({ to, amount }) => `receipt #${++receipts}: ${amount} to ${to}`, {
    name: "transfer",
    description: "Send money.",
    schema: z.object({ to: z.string(), amount: z.number(), idempotency_key: z.string() }),
    metadata: { effect: "write" },
  });
  /** One request: the model asks for the same transfer with the same key as every other user's model. */
  const request = async (input: { messages: unknown[] }, config: { thread?: string } = {}) => {
    const model = fakeModel()
      .respond(callTools({ name: "transfer", args: { to: "IBAN-1", amount: 100, idempotency_key: "transfer-1" }, id: "call_1" }))
      .respond(new AIMessage("Done."));
    const agent = createAgent({
      model,
      tools: [transfer],
      middleware: [middleware],
      ...(config.thread === undefined ? {} : { checkpointer: new MemorySaver() }),
    });
    const result = await drive(
      clock,
      agent.invoke(input as never, config.thread === undefined ? undefined : { configurable: { thread_id: config.thread } }),
    );
    return String((result.messages as unknown[]).find((message) => ToolMessage.isInstance(message))?.content);
  };
  return { request, receipts: () => receipts, recorder };
}

describe("LangChain: one middleware made at start-up, shared by every user", () => {
  it("never replays across runs without a thread whose messages carry the caller's own ids (a database's '1' for every user)", async () => {
    const { request, receipts } = server();
    const turn = (text: string) => ({ messages: [{ role: "user", content: text, id: "1" }] });

    expect(await request(turn("Pay 100 to IBAN-1 (Alice)"))).toBe("receipt #1: 100 to IBAN-1");
    expect(await request(turn("Pay 100 to IBAN-1 (Bob)"))).toBe("receipt #2: 100 to IBAN-1");
    expect(receipts()).toBe(2);
  });

  it("takes scope and namespace as strings: every run shares them (a tenant's one namespace replays its writes)", async () => {
    const { request, receipts, recorder } = server({ scope: "tenant-7", namespace: "tenant-7" });

    expect(await request({ messages: [{ role: "user", content: "pay" }] }, { thread: "a" })).toBe("receipt #1: 100 to IBAN-1");
    expect(await request({ messages: [{ role: "user", content: "pay again" }] }, { thread: "b" })).toBe("receipt #1: 100 to IBAN-1");
    expect(receipts()).toBe(1); // the second run, another thread of the same tenant, was answered from the store
    expect(recorder.types()).toEqual(["idempotent_replay"]);
  });

  it("counts attempts in a string scope across runs and threads", async () => {
    const clock = createFakeClock();
    const recorder = recordEvents();
    const middleware = retryReflectMiddleware(RetryReflectPlugin.create({ clock, observers: [recorder] }), { scope: "tenant-7" });
    const report = tool(
      async (): Promise<string> => {
        throw new Error("report generation failed");
      },
      { name: "report", description: "Build a report.", schema: z.object({}) },
    );
    for (const thread of ["a", "b"]) {
      const model = fakeModel()
        .respond(callTools({ name: "report", args: {}, id: `call_${thread}` }))
        .respond(new AIMessage("failed"));
      const agent = createAgent({ model, tools: [report], middleware: [middleware], checkpointer: new MemorySaver() });
      await drive(clock, agent.invoke({ messages: [{ role: "user", content: "report" }] }, { configurable: { thread_id: thread } }));
    }
    expect(recorder.events.filter((event) => event.type === "retry").map((event) => fieldOf(event, "attempt"))).toEqual([1, 2]);
  });
});
