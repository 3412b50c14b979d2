import { AIMessage, ToolMessage } from "@langchain/core/messages";
import { fakeModel } from "@langchain/core/testing";
import { tool } from "@langchain/core/tools";
import { MemorySaver } from "@langchain/langgraph";
import { RetryReflectPlugin } from "@retry-reflect/core";
import { createFakeClock } from "@retry-reflect/core/testing";
import { createAgent } from "langchain";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { retryReflectMiddleware } from "../src/index.js";
import { callTools, drive } from "./helpers.js";

describe("the attempt scope is one agent run", () => {
  it("a new user turn on the same thread starts its counters afresh", async () => {
    const clock = createFakeClock();
    const plugin = RetryReflectPlugin.create({ clock });
    const lookup = tool(
      async () => {
        throw new Error("Invalid order id");
      },
      { name: "lookup", description: "Look an order up.", schema: z.object({ id: z.string() }) },
    );
    const model = fakeModel()
      .respond(callTools({ name: "lookup", args: { id: "x" }, id: "call_1" }))
      .respond(new AIMessage("I could not find it."))
      .respond(callTools({ name: "lookup", args: { id: "y" }, id: "call_2" }))
      .respond(new AIMessage("Still nothing."));
    const agent = createAgent({ model, tools: [lookup], middleware: [retryReflectMiddleware(plugin)], checkpointer: new MemorySaver() });
    const config = { configurable: { thread_id: "thread-1" } };
    const attemptOf = (messages: unknown[]) => {
      const last = messages.filter((message) => ToolMessage.isInstance(message)).at(-1) as ToolMessage;
      return (JSON.parse(String(last.content).split("\n\n")[1] ?? "{}") as { attempt?: number }).attempt;
    };

    const first = await drive(clock, agent.invoke({ messages: [{ role: "user", content: "find order x" }] }, config));
    const second = await drive(clock, agent.invoke({ messages: [{ role: "user", content: "find order y" }] }, config));
    expect(attemptOf(first.messages)).toBe(1);
    expect(attemptOf(second.messages)).toBe(1); // not 2: a new run on the thread is a new scope
  });
});
