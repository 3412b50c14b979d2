import { Agent } from "@mastra/core/agent";
import { RequestContext } from "@mastra/core/request-context";
import { createTool } from "@mastra/core/tools";
import { RetryReflectPlugin } from "@retry-reflect/core";
import { createFakeClock } from "@retry-reflect/core/testing";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { callTools, drive, reply, scriptedModel, toolOutputsSeen } from "../../ai-sdk/test/helpers.js";
import { withRetryReflect } from "../src/index.js";

// One tool set wrapped at start-up and shared by every request: the default scope and namespace
// are the run's (the run id Mastra gives the tool), so one user's write is never replayed to
// another; a call with no run id (a tool called by hand) is its own namespace.

function shop() {
  const clock = createFakeClock();
  const plugin = RetryReflectPlugin.create({ clock, toolEffects: { place_order: "write" } });
  const orders: string[] = [];
  const placeOrder = createTool({
    id: "place_order",
    description: "Orders an item, shipped to the user.",
    inputSchema: z.object({ item: z.string() }),
    execute: async ({ item }, context) => {
      orders.push(`${String(context?.requestContext?.get("user") ?? "nobody")}: ${item}`);
      return { order: orders.length };
    },
  });
  return { clock, tools: withRetryReflect({ place_order: placeOrder }, plugin), orders };
}

describe("Mastra: one tool set wrapped at start-up, shared by every user", () => {
  it("runs each user's write in their own run; a write re-issued within a run is replayed", async () => {
    const { clock, tools, orders } = shop();
    const book = (id: string) => callTools({ name: "place_order", input: { item: "book" }, id });
    const runFor = async (user: string, turns: ReturnType<typeof book>[]) => {
      const model = scriptedModel(...turns, reply("Ordered."));
      const agent = new Agent({ id: "shop", name: "shop", instructions: "Use the tools.", model, tools: tools as never });
      await drive(clock, agent.generate("buy", { maxSteps: 5, requestContext: new RequestContext([["user", user]]) }));
      return model.doGenerateCalls.slice(1).flatMap((call) => toolOutputsSeen(call).map((seen) => seen.output));
    };

    const first = { type: "json", value: { order: 1 } };
    expect(await runFor("alice", [book("call_1"), book("call_2")])).toEqual([first, first]);
    expect(await runFor("bob", [book("call_1")])).toEqual([{ type: "json", value: { order: 2 } }]);
    expect(orders).toEqual(["alice: book", "bob: book"]);
  });

  it("runs each call made by hand, without a run id, on its own: nothing is replayed across them", async () => {
    const { clock, tools, orders } = shop();
    const execute = tools.place_order.execute as (input: unknown, context?: unknown) => Promise<unknown>;
    expect(await drive(clock, execute({ item: "book" }))).toEqual({ order: 1 });
    expect(await drive(clock, execute({ item: "book" }))).toEqual({ order: 2 });
    expect(orders).toEqual(["nobody: book", "nobody: book"]);
  });
});
