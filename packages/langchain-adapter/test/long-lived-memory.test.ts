import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { HumanMessage, type ToolMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import { RetryReflectPlugin } from "@retry-reflect/core";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { retryReflectMiddleware } from "../src/index.js";

// A long-lived process: one middleware, with every default (the in-memory idempotency store, its
// byte cap included), serves many runs, each on its own thread: a write whose result is 1 KB and
// two reads. What it keeps once they are done must stay bounded, after a full GC:
//
// - the store full: after FILL_RUNS runs (well past its 32 MiB byte cap, which holds ~22,000 of
//   these results: the first run's write is evicted, checked at the end), at most 64 MiB of heap
//   over where it started;
// - then flat: MORE_RUNS further runs grow the heap by at most MAX_GROWTH_BYTES, about 105 bytes a
//   run, measured over a baseline taken once the store is full, has evicted for a while (its map's
//   table grows once more ~10,000 evictions in, by ~1 MiB) and the code is warm. The store then
//   only replaces what it evicts, so anything kept per run or per thread shows up here: a leak of
//   200 bytes a run (~2 MiB over those runs) fails it; so does a store that stops evicting (1.5 KB
//   a run). The earlier form of this test, 100,000 runs under the 64 MiB bound alone, let a leak of
//   up to ~280 bytes a run pass and took twice as long.
//
// How it is driven: the middleware's `wrapToolCall` hook, called as LangChain's tool node calls it
// (the request it builds: the tool call, the tool, the agent's state with the run's human message,
// the runtime with the thread id and the run's signal; the handler invokes the tool with the call,
// which returns its `ToolMessage`). A real `createAgent` run per run measured 13.7 ms here (100,000 runs: 23 minutes),
// and its graph keeps nothing of ours: the hook is all the middleware sees of a run.

const FILL_RUNS = 36_000;
const MORE_RUNS = 10_000;
const MAX_RETAINED_BYTES = 64 * 1024 * 1024;
const MAX_GROWTH_BYTES = 1024 * 1024;

/** A full, synchronous GC: vitest's workers do not start with `--expose-gc`, so the flag is set now and `gc` read from a new context. */
function collectGarbage(): () => void {
  setFlagsFromString("--expose-gc");
  return runInNewContext("gc") as () => void;
}

describe("one middleware in a long-lived process", () => {
  it("retains at most 64 MiB of heap with its store full of 1 KB results (a write and two reads a run, the defaults), and no more as runs go on", async () => {
    const gc = collectGarbage();
    const middleware = retryReflectMiddleware(RetryReflectPlugin.create());
    const wrapToolCall = middleware.wrapToolCall as (
      request: unknown,
      handler: (request: unknown) => Promise<ToolMessage>,
    ) => Promise<unknown>;
    // Each order's receipt is its own 1 KB of JSON, as a real tool's result is (not one string shared by all).
    let orders = 0;
    const tools = {
      place_order: tool(
        async ({ item }) => {
          orders += 1;
          return JSON.stringify({ item, status: "placed", note: "n".repeat(980) });
        },
        { name: "place_order", description: "Places an order.", schema: z.object({ item: z.string() }), metadata: { effect: "write" } },
      ),
      get_order: tool(async ({ id }) => JSON.stringify({ id, status: "shipped" }), {
        name: "get_order",
        description: "Reads an order.",
        schema: z.object({ id: z.string() }),
      }),
    };
    // The tool node's handler: the tool invoked with the call, which returns its `ToolMessage`.
    const handler = (request: unknown): Promise<ToolMessage> => {
      const { toolCall, tool: called } = request as { toolCall: object; tool: { invoke(call: object): Promise<ToolMessage> } };
      return called.invoke(toolCall);
    };
    const oneRun = async (run: number, calls: "all" | "the write" = "all"): Promise<void> => {
      const state = { messages: [new HumanMessage({ content: `order #${run}`, id: `human-${run}` })] };
      const runtime = { context: undefined, configurable: { thread_id: `thread-${run}` }, signal: new AbortController().signal };
      const call = (name: keyof typeof tools, args: Record<string, unknown>, id: string) =>
        wrapToolCall({ toolCall: { id, name, args, type: "tool_call" }, tool: tools[name], state, runtime }, handler);
      await call("place_order", { item: `book-${run}` }, "call_1");
      if (calls === "all")
        await Promise.all([call("get_order", { id: String(run) }, "call_2"), call("get_order", { id: String(run) }, "call_3")]);
    };

    await oneRun(-1); // modules and first-use caches loaded before the baseline
    gc();
    const start = process.memoryUsage().heapUsed;
    for (let run = 0; run < FILL_RUNS; run++) await oneRun(run);
    gc();
    const full = process.memoryUsage().heapUsed;
    for (let run = FILL_RUNS; run < FILL_RUNS + MORE_RUNS; run++) await oneRun(run);
    gc();
    const end = process.memoryUsage().heapUsed;
    const runs = FILL_RUNS + MORE_RUNS;

    const mib = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
    console.log(
      `retained: ${mib(full - start)} after ${FILL_RUNS} runs, ${mib(end - start)} after ${runs}; ` +
        `growth over the last ${MORE_RUNS}: ${mib(end - full)} (${Math.round((end - full) / MORE_RUNS)} B per run)`,
    );
    expect(full - start).toBeLessThanOrEqual(MAX_RETAINED_BYTES);
    expect(end - start).toBeLessThanOrEqual(MAX_RETAINED_BYTES);
    expect(end - full).toBeLessThanOrEqual(MAX_GROWTH_BYTES);
    // The writes went through the guard and the recent ones are still stored: the last run's write, re-issued, is replayed.
    expect(orders).toBe(runs + 1);
    await oneRun(runs - 1, "the write");
    expect(orders).toBe(runs + 1);
    // The store was full: the first run's write was evicted to make room, so re-issued it runs again.
    await oneRun(0, "the write");
    expect(orders).toBe(runs + 2);
  }, 240_000);
});
