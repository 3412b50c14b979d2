import { AIMessage, type ToolMessage } from "@langchain/core/messages";
import { fakeModel } from "@langchain/core/testing";
import { tool } from "@langchain/core/tools";
import { RetryReflectPlugin } from "@retry-reflect/core";
import { createFakeClock } from "@retry-reflect/core/testing";
import { createAgent } from "langchain";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { getToolContext, retryReflectMiddleware } from "../src/index.js";
import { callTools, drive } from "./helpers.js";

// Keys only from tools that declare them: a LangChain write tool whose schema has no key argument
// runs under a derived key (it was refused with IDEMPOTENCY_KEY_REQUIRED, asking the model for an
// argument the tool does not take); a made-up key argument never reaches it.

describe("a write tool whose schema has no idempotency key", () => {
  it("runs once under a derived key, and the key argument the model adds is not passed to it", async () => {
    const clock = createFakeClock();
    const plugin = RetryReflectPlugin.create({ clock });
    const received: unknown[] = [];
    const keys: Array<string | undefined> = [];
    const editFile = tool(
      async (args) => {
        received.push(args);
        keys.push(getToolContext()?.idempotencyKey);
        return "edited";
      },
      {
        name: "edit_file",
        description: "Edit a file.",
        schema: z.object({ path: z.string(), text: z.string() }),
        metadata: { effect: "write" },
      },
    );
    const model = fakeModel()
      .respond(callTools({ name: "edit_file", args: { path: "a.txt", text: "x", idempotency_key: "made-up" }, id: "call_1" }))
      .respond(new AIMessage("Done."));
    const agent = createAgent({ model, tools: [editFile], middleware: [retryReflectMiddleware(plugin)] });
    const result = await drive(clock, agent.invoke({ messages: [{ role: "user", content: "edit a.txt" }] }));
    expect((result.messages[2] as ToolMessage).content).toBe("edited");
    expect(received).toHaveLength(1);
    expect(received[0]).not.toHaveProperty("idempotency_key");
    expect(keys[0]).toMatch(/^derived-/);
  });
});
