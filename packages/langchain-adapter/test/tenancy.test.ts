import { AIMessage } from "@langchain/core/messages";
import { fakeModel } from "@langchain/core/testing";
import { tool } from "@langchain/core/tools";
import { MemorySaver } from "@langchain/langgraph";
import { InMemoryIdempotencyStore, RetryReflectPlugin } from "@retry-reflect/core";
import { createFakeClock } from "@retry-reflect/core/testing";
import { createAgent } from "langchain";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { type RetryReflectMiddlewareOptions, retryReflectMiddleware, withRetryReflect } from "../src/index.js";
import { callTools, drive } from "./helpers.js";

const transferArgs = { to: "IBAN-1", amount: 100, idempotency_key: "transfer-1" };

/**
 * One agent server per tenant, the idempotency store shared (as replicas share Redis). Each run
 * asks for the same transfer with the same key; `ran` counts the transfers that really happened.
 */
function servers(adapter: RetryReflectMiddlewareOptions = {}) {
  const clock = createFakeClock();
  const store = new InMemoryIdempotencyStore({ clock });
  const ran: string[] = [];
  const agentFor = (tenant: string) => {
    const plugin = RetryReflectPlugin.create({ clock, idempotency: { store } });
    const transfer = tool(
      async ({ to, amount }) => {
        ran.push(tenant);
        return `receipt of ${tenant}: ${amount} to ${to}`;
      },
      {
        name: "transfer",
        description: "Send money.",
        schema: z.object({ to: z.string(), amount: z.number(), idempotency_key: z.string() }),
        metadata: { effect: "write" },
      },
    );
    return {
      run: async (config: { thread?: string; context?: unknown }) => {
        const model = fakeModel()
          .respond(callTools({ name: "transfer", args: transferArgs, id: "call_1" }))
          .respond(new AIMessage("Done."));
        const agent = createAgent({
          model,
          tools: [transfer],
          middleware: [retryReflectMiddleware(plugin, adapter)],
          checkpointer: new MemorySaver(),
        });
        const result = await drive(
          clock,
          agent.invoke({ messages: [{ role: "user", content: "pay" }] }, {
            configurable: { thread_id: config.thread ?? `fresh-${Math.random()}` },
            context: config.context,
          } as never),
        );
        return String(result.messages[2]?.content);
      },
      runWithoutThread: async () => {
        const model = fakeModel()
          .respond(callTools({ name: "transfer", args: transferArgs, id: "call_1" }))
          .respond(new AIMessage("Done."));
        const agent = createAgent({ model, tools: [transfer], middleware: [retryReflectMiddleware(plugin, adapter)] });
        const result = await drive(clock, agent.invoke({ messages: [{ role: "user", content: "pay" }] }));
        return String(result.messages[2]?.content);
      },
    };
  };
  return { ran, agentFor };
}

describe("LangChain: whose writes replay", () => {
  it("a request retried in a new run of the same thread replays (the namespace is the thread)", async () => {
    const { ran, agentFor } = servers();
    const alice = agentFor("alice");
    expect(await alice.run({ thread: "conversation-7" })).toBe("receipt of alice: 100 to IBAN-1");
    expect(await alice.run({ thread: "conversation-7" })).toBe("receipt of alice: 100 to IBAN-1");
    expect(ran).toEqual(["alice"]);
  });

  it("runs without a thread never share a result, though the model picked the same key", async () => {
    const { ran, agentFor } = servers();
    const alice = agentFor("alice");
    const carol = agentFor("carol");
    expect(await alice.runWithoutThread()).toBe("receipt of alice: 100 to IBAN-1");
    expect(await carol.runWithoutThread()).toBe("receipt of carol: 100 to IBAN-1");
    expect(ran).toEqual(["alice", "carol"]);
  });

  it("a namespace from the run's context keeps tenants apart even when they reuse thread ids such as '1'", async () => {
    const { ran, agentFor } = servers({
      namespace: ({ threadId, context }) => `${(context as { tenant: string }).tenant}/${threadId}`,
    });
    expect(await agentFor("alice").run({ thread: "1", context: { tenant: "alice" } })).toBe("receipt of alice: 100 to IBAN-1");
    expect(await agentFor("carol").run({ thread: "1", context: { tenant: "carol" } })).toBe("receipt of carol: 100 to IBAN-1");
    expect(ran).toEqual(["alice", "carol"]);
  });

  it("withRetryReflect: a tool invoked with plain arguments and no config runs each write afresh", async () => {
    const plugin = RetryReflectPlugin.create({ idempotency: { derive: "always" } });
    let runs = 0;
    const wrapped = withRetryReflect(
      tool(
        async () => {
          runs++;
          return "ok";
        },
        { name: "transfer", description: "Send money.", schema: z.object({ to: z.string() }), metadata: { effect: "write" } },
      ),
      plugin,
    );
    await wrapped.invoke({ to: "IBAN-1" });
    await wrapped.invoke({ to: "IBAN-1" });
    expect(runs).toBe(2); // before: one fixed scope "no-thread/no-run", so the second was "replayed"
  });

  it("withRetryReflect takes a namespace as a string: a keyed write replays across invocations of that namespace", async () => {
    const plugin = RetryReflectPlugin.create();
    let runs = 0;
    const wrapped = withRetryReflect(
      tool(async () => `receipt #${++runs}`, {
        name: "transfer",
        description: "Send money.",
        schema: z.object({ to: z.string(), idempotency_key: z.string() }),
        metadata: { effect: "write" },
      }),
      plugin,
      { namespace: "tenant-7" },
    );
    expect(await wrapped.invoke({ to: "IBAN-1", idempotency_key: "transfer-1" })).toBe("receipt #1");
    expect(await wrapped.invoke({ to: "IBAN-1", idempotency_key: "transfer-1" })).toBe("receipt #1");
    expect(runs).toBe(1);
  });

  it("rejects a namespace option that is neither a non-empty string nor a function, naming it", () => {
    expect(() => retryReflectMiddleware(RetryReflectPlugin.create(), { namespace: "" })).toThrow(/`namespace`/);
    expect(() => retryReflectMiddleware(RetryReflectPlugin.create(), { namespace: ["t"] as never })).toThrow(/`namespace`/);
  });
});
