import { RetryReflectPlugin } from "@retry-reflect/core";
import { createFakeClock, type FakeClock } from "@retry-reflect/core/testing";
import { generateText, type ModelMessage, stepCountIs, streamText, tool } from "ai";
import { convertArrayToReadableStream, MockLanguageModelV3 } from "ai/test";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { withRetryReflect } from "../src/index.js";
import { callTools, drive, type ModelTurn, reply, scriptedModel, streamOf, toolOutputsSeen } from "./helpers.js";

// One tool set wrapped at start-up (the README's shape) and shared by every request: the default
// scope and namespace are the run's, told by the step's messages, so that a derived key (a write
// whose schema has no `idempotency_key`) never reaches another user's run.

/** A shop server: `place_order` (a write with no key argument) wrapped once, with the default store and no adapter option. */
function shop() {
  const clock = createFakeClock();
  const plugin = RetryReflectPlugin.create({ clock, toolEffects: { place_order: "write" } });
  const orders: string[] = [];
  const placeOrder = tool({
    description: "Orders an item for the user, shipped to their address.",
    inputSchema: z.object({ item: z.string() }),
    execute: async ({ item }, options) => {
      const user = (options.experimental_context as { user: string }).user;
      orders.push(`${user}: ${item}`);
      return { order: orders.length, item, shipTo: `${user}'s address` };
    },
  });
  const tools = withRetryReflect({ place_order: placeOrder }, plugin);
  return { clock, tools, orders };
}

const book = (id: string) => callTools({ name: "place_order", input: { item: "book" }, id });

/** What the model was shown for each `place_order` call of a run, in order. */
function outputsSeen(model: MockLanguageModelV3): unknown[] {
  return model.doGenerateCalls.slice(1).flatMap((call) => toolOutputsSeen(call).map((seen) => seen.output));
}

function run(
  clock: FakeClock,
  tools: ReturnType<typeof shop>["tools"],
  user: string,
  turns: ModelTurn[],
  input: { prompt: string } | { messages: ModelMessage[] },
) {
  const model = scriptedModel(...turns);
  return drive(clock, generateText({ model, tools, stopWhen: stepCountIs(5), experimental_context: { user }, ...input })).then(() => model);
}

describe("AI SDK: one tool set wrapped at start-up, shared by every user", () => {
  it("runs each user's write in their own run (prompt strings); a write re-issued within a run is replayed", async () => {
    const { clock, tools, orders } = shop();

    const alice = await run(clock, tools, "alice", [book("call_1"), book("call_2"), reply("Ordered.")], { prompt: "Buy me the book." });
    const bob = await run(clock, tools, "bob", [book("call_1"), reply("Ordered.")], { prompt: "Buy me the book." });

    expect(orders).toEqual(["alice: book", "bob: book"]);
    const aliceOrder = { type: "json", value: { order: 1, item: "book", shipTo: "alice's address" } };
    expect(outputsSeen(alice)).toEqual([aliceOrder, aliceOrder]); // her model re-issued it: one order, replayed
    expect(outputsSeen(bob)).toEqual([{ type: "json", value: { order: 2, item: "book", shipTo: "bob's address" } }]);
  });

  it("keeps users apart with messages built per request, each with the conversation's history", async () => {
    const { clock, tools, orders } = shop();
    const history = (user: string): ModelMessage[] => [
      { role: "user", content: "Hello." },
      { role: "assistant", content: `Hello ${user}, what can I do for you?` },
      { role: "user", content: "Buy me the book." },
    ];

    const alice = await run(clock, tools, "alice", [book("call_1"), book("call_2"), reply("Ordered.")], { messages: history("alice") });
    const bob = await run(clock, tools, "bob", [book("call_1"), reply("Ordered.")], { messages: history("bob") });

    expect(orders).toEqual(["alice: book", "bob: book"]);
    expect(outputsSeen(alice)).toHaveLength(2);
    expect(outputsSeen(bob)).toEqual([{ type: "json", value: { order: 2, item: "book", shipTo: "bob's address" } }]);
  });

  it("runs a user's second turn of one conversation (its messages kept in memory) as a new run: a second order is placed", async () => {
    const { clock, tools, orders } = shop();
    const conversation: ModelMessage[] = [{ role: "user", content: "Buy me the book." }];
    const first = scriptedModel(book("call_1"), reply("Ordered."));
    const result = await drive(
      clock,
      generateText({ model: first, tools, stopWhen: stepCountIs(5), experimental_context: { user: "alice" }, messages: conversation }),
    );
    conversation.push(...result.response.messages, { role: "user", content: "Another one, please." });

    await run(clock, tools, "alice", [book("call_2"), reply("Ordered again.")], { messages: conversation });

    expect(orders).toEqual(["alice: book", "alice: book"]);
  });

  it("never replays across two runs started from the very same message objects (a constant prompt array): each runs its own", async () => {
    const { clock, tools, orders } = shop();
    const sameForEveryone: ModelMessage[] = [{ role: "user", content: "Buy me the book." }];

    const alice = await run(clock, tools, "alice", [book("call_1"), reply("Ordered.")], { messages: sameForEveryone });
    const bob = await run(clock, tools, "bob", [book("call_1"), reply("Ordered.")], { messages: sameForEveryone });

    expect(orders).toEqual(["alice: book", "bob: book"]);
    expect(outputsSeen(alice)).toEqual([{ type: "json", value: { order: 1, item: "book", shipTo: "alice's address" } }]);
    expect(outputsSeen(bob)).toEqual([{ type: "json", value: { order: 2, item: "book", shipTo: "bob's address" } }]);
  });

  it("keeps users apart under streamText too, two runs interleaved", async () => {
    const { clock, tools, orders } = shop();
    const streamingModel = (...turns: ModelTurn[]) => {
      let index = 0;
      return new MockLanguageModelV3({
        doStream: async () => ({ stream: convertArrayToReadableStream(streamOf(turns[index++] as ModelTurn)) }),
      });
    };
    const stream = (user: string, model: MockLanguageModelV3) =>
      streamText({ model, tools, stopWhen: stepCountIs(5), experimental_context: { user }, prompt: "Buy me the book." });

    const alice = stream("alice", streamingModel(book("call_1"), book("call_2"), reply("Ordered.")));
    const bob = stream("bob", streamingModel(book("call_1"), reply("Ordered.")));
    await drive(clock, Promise.all([alice.consumeStream(), bob.consumeStream()]));

    expect([...orders].sort()).toEqual(["alice: book", "bob: book"]);
    const placed = await alice.steps;
    expect(placed.flatMap((step) => step.toolResults.map((result) => result.output))).toEqual([
      expect.objectContaining({ shipTo: "alice's address" }),
      expect.objectContaining({ shipTo: "alice's address" }),
    ]);
  });

  it("runs every call on its own when no run can be told (called by hand, no messages): nothing is replayed across calls", async () => {
    const { clock, tools, orders } = shop();
    const execute = tools.place_order.execute as (input: unknown, options: unknown) => Promise<unknown>;

    await drive(clock, execute({ item: "book" }, { toolCallId: "call_1", messages: [], experimental_context: { user: "alice" } }));
    const second = await drive(
      clock,
      execute({ item: "book" }, { toolCallId: "call_1", messages: [], experimental_context: { user: "bob" } }),
    );

    expect(orders).toEqual(["alice: book", "bob: book"]);
    expect(second).toMatchObject({ shipTo: "bob's address" });
  });
});
