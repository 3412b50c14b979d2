import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { HumanMessage, type ToolMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import { RetryReflectPlugin } from "@retry-reflect/core";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { retryReflectMiddleware } from "../src/index.js";

// A long-lived process: one middleware, with every default (the in-memory idempotency store, its
// byte cap included), serves 100,000 runs, each on its own thread: a write whose result is 1 KB
// and two reads. What it keeps once they are done must stay bounded: at most 64 MiB of heap over
// where it started, after a full GC.
//
// How it is driven: the middleware's `wrapToolCall` hook, called as LangChain's tool node calls it
// (the request it builds: the tool call, the tool, the agent's state with the run's human message,
// the runtime with the thread id and the run's signal; the handler invokes the tool with the call,
// which returns its `ToolMessage`). A real `createAgent` run per run measured 13.7 ms here (100,000 runs: 23 minutes),
// and its graph keeps nothing of ours: the hook is all the middleware sees of a run.

const RUNS = 100_000;
const MAX_RETAINED_BYTES = 64 * 1024 * 1024;

/** A full, synchronous GC: vitest's workers do not start with `--expose-gc`, so the flag is set now and `gc` read from a new context. */
function collectGarbage(): () => void {
  setFlagsFromString("--expose-gc");
  return runInNewContext("gc") as () => void;
}

describe("one middleware in a long-lived process", () => {
  it("retains at most 64 MiB of heap after 100,000 runs of a 1 KB write and two reads, with the defaults", async () => {
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
    const before = process.memoryUsage().heapUsed;
    for (let run = 0; run < RUNS; run++) await oneRun(run);
    gc();
    const retained = process.memoryUsage().heapUsed - before;

    console.log(`retained after ${RUNS} runs: ${(retained / 1024 / 1024).toFixed(1)} MiB (${Math.round(retained / RUNS)} B per run)`);
    expect(retained).toBeLessThanOrEqual(MAX_RETAINED_BYTES);
    // The writes went through the guard and the recent ones are still stored: the last run's write, re-issued, is replayed.
    expect(orders).toBe(RUNS + 1);
    await oneRun(RUNS - 1, "the write");
    expect(orders).toBe(RUNS + 1);
  }, 300_000);
});
