import { Agent, type FunctionTool, RunContext, run, setTracingDisabled } from "@openai/agents";
import { assistantMessage, functionCall, ScriptedModel } from "@openai/agents/testing";
import { RetryReflectPlugin } from "@retry-reflect/core";
import { createFakeClock, drive } from "@retry-reflect/core/testing";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { withRetryReflect } from "../src/index.js";

setTracingDisabled(true);

// One tool set wrapped at start-up and shared by every request: the default scope and namespace
// are the run's (one per `RunContext`), so one user's write is never replayed to another; a call
// with no run (a tool invoked by hand) is its own namespace.

function shop() {
  const clock = createFakeClock();
  const plugin = RetryReflectPlugin.create({ clock, toolEffects: { place_order: "write" } });
  const orders: string[] = [];
  const [placeOrder] = withRetryReflect(
    [
      {
        name: "place_order",
        description: "Orders an item, shipped to the user.",
        parameters: z.object({ item: z.string() }),
        execute: async ({ item }: { item: string }, runContext?: RunContext<{ user: string }>) => {
          orders.push(`${runContext?.context.user ?? "nobody"}: ${item}`);
          return `order #${orders.length}`;
        },
      },
    ],
    plugin,
  );
  return { clock, placeOrder: placeOrder as FunctionTool<{ user: string }>, orders };
}

/** What the model was shown for each tool call, in order. */
function outputsSeen(model: ScriptedModel): string[] {
  return model.calls.slice(1).flatMap((call) => {
    const items = Array.isArray(call.request.input) ? call.request.input : [];
    const last = items.filter((item) => (item as { type?: string }).type === "function_call_result").at(-1) as
      | { output?: { text?: string } | string }
      | undefined;
    return last === undefined ? [] : [typeof last.output === "string" ? last.output : (last.output?.text ?? "")];
  });
}

describe("OpenAI Agents SDK: one tool set wrapped at start-up, shared by every user", () => {
  it("runs each user's write in their own run; a write re-issued within a run is replayed", async () => {
    const { clock, placeOrder, orders } = shop();
    const book = (callId: string) => [functionCall("place_order", { item: "book" }, { callId })];
    const runFor = async (user: string, turns: ReturnType<typeof book>[]) => {
      const model = new ScriptedModel([...turns, [assistantMessage("Ordered.")]]);
      await drive(
        clock,
        run(new Agent<{ user: string }>({ name: "shop", instructions: "help", model, tools: [placeOrder] }), "buy", { context: { user } }),
      );
      return outputsSeen(model);
    };

    expect(await runFor("alice", [book("c1"), book("c2")])).toEqual(["order #1", "order #1"]);
    expect(await runFor("bob", [book("c1")])).toEqual(["order #2"]);
    expect(orders).toEqual(["alice: book", "bob: book"]);
  });

  it("runs each call invoked by hand with no RunContext on its own: nothing is replayed across them", async () => {
    const { clock, placeOrder, orders } = shop();
    const input = JSON.stringify({ item: "book" });
    expect(await drive(clock, placeOrder.invoke(undefined as never, input, { toolCall: { callId: "c1" } } as never))).toBe("order #1");
    expect(await drive(clock, placeOrder.invoke(undefined as never, input, { toolCall: { callId: "c1" } } as never))).toBe("order #2");
    expect(orders).toEqual(["nobody: book", "nobody: book"]);
    // A RunContext of its own is a run: the same call in it again is the same write.
    const context = new RunContext({ user: "carol" });
    expect(await drive(clock, placeOrder.invoke(context, input))).toBe("order #3");
    expect(await drive(clock, placeOrder.invoke(context, input))).toBe("order #3");
  });
});
