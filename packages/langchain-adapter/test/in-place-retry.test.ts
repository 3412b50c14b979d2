import { AIMessage, type ToolMessage } from "@langchain/core/messages";
import { fakeModel } from "@langchain/core/testing";
import { tool } from "@langchain/core/tools";
import { RetryReflectPlugin } from "@retry-reflect/core";
import { createFakeClock } from "@retry-reflect/core/testing";
import { createAgent, createMiddleware } from "langchain";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { retryReflectMiddleware } from "../src/index.js";
import { callTools, drive, recordEvents } from "./helpers.js";

/** Fails with HTTP 503 `failures` times, then answers. */
function flakyTool(failures: number, counter: { calls: number }) {
  return tool(
    async ({ query }) => {
      counter.calls += 1;
      if (counter.calls <= failures) throw Object.assign(new Error("upstream unavailable"), { status: 503 });
      return `results for ${query}`;
    },
    { name: "search", description: "Search the index.", schema: z.object({ query: z.string() }) },
  );
}

describe("a transient failure is retried in place", () => {
  it("calls the model once for the call, the tool three times, and waits the documented 500 then 1000 ms", async () => {
    const clock = createFakeClock();
    const recorder = recordEvents();
    const plugin = RetryReflectPlugin.create({ clock, observers: [recorder] }); // defaults: 3 retries, 500 ms, x2
    const counter = { calls: 0 };
    const seenByLogger: unknown[] = [];
    const logger = createMiddleware({
      name: "logger",
      wrapToolCall: async (request, handler) => {
        const result = await handler(request);
        seenByLogger.push(result);
        return result;
      },
    });
    const model = fakeModel()
      .respond(callTools({ name: "search", args: { query: "retry" }, id: "call_1" }))
      .respond(new AIMessage("Found it."));
    const agent = createAgent({ model, tools: [flakyTool(2, counter)], middleware: [logger, retryReflectMiddleware(plugin)] });

    const result = await drive(clock, agent.invoke({ messages: [{ role: "user", content: "search retry" }] }));

    expect(counter.calls).toBe(3);
    expect(model.callCount).toBe(2); // the tool call, then the answer: no round trip per retry
    expect(clock.sleeps.filter((ms) => ms > 0)).toEqual([500, 1000]);
    expect(clock.now()).toBe(1500);
    const toolMessage = result.messages[2] as ToolMessage;
    expect(toolMessage.content).toBe("results for retry");
    expect(toolMessage.status).toBe("success");
    expect(toolMessage.tool_call_id).toBe("call_1");
    // A logging middleware before ours sees one final result for the call.
    expect(seenByLogger).toEqual([toolMessage]);
    expect(recorder.lines()).toEqual([
      `WARN tool call failed, retrying tool_name="search" attempt=1 max=3 backoff_ms=500 error="upstream unavailable" error_code="TRANSIENT" mode="in_place"`,
      `WARN tool call failed, retrying tool_name="search" attempt=2 max=3 backoff_ms=1000 error="upstream unavailable" error_code="TRANSIENT" mode="in_place"`,
      `INFO retry succeeded tool_name="search" attempt=3`,
    ]);
  });

  it("retries in place within the patience, then tells the model the tool is temporarily unavailable; once it has failed for giveUpMs, tells it to stop", async () => {
    const clock = createFakeClock();
    const recorder = recordEvents();
    const plugin = RetryReflectPlugin.create({ clock, observers: [recorder] }); // patience 15 s, give-up 20 s, backoff up to 4 s
    const counter = { calls: 0 };
    const model = fakeModel()
      .respond(callTools({ name: "search", args: { query: "retry" }, id: "call_1" }))
      .respond(callTools({ name: "search", args: { query: "retry" }, id: "call_2" }))
      .respond(new AIMessage("The search service is down."));
    const agent = createAgent({ model, tools: [flakyTool(99, counter)], middleware: [retryReflectMiddleware(plugin)] });

    const result = await drive(clock, agent.invoke({ messages: [{ role: "user", content: "search retry" }] }));
    const [temporary, stop] = [result.messages[2] as ToolMessage, result.messages[4] as ToolMessage];

    // The first call: attempts at 0, 0.5, 1.5, 3.5, 7.5 and 11.5 s; the next would start past 15 s.
    expect(temporary.status).toBe("error");
    expect(String(temporary.content)).toContain("The tool 'search' is temporarily unavailable");
    expect(String(temporary.content)).toContain("about 4 s");
    expect(String(temporary.content)).not.toContain("Do not call");
    expect(temporary.artifact).toMatchObject({ error_code: "TRANSIENT", recoverable: true, retry_after_ms: 4_000 });
    expect(temporary.response_metadata).toMatchObject({ retry_reflect: { status: "reflect", attempt: 6 } });
    // The model's second call runs at the wait it was told; the tool has failed for 20 s by 23.5 s: the definitive stop.
    expect(counter.calls).toBe(9);
    expect(clock.sleeps.filter((ms) => ms > 0)).toEqual([500, 1000, 2000, 4000, 4000, 4000, 4000, 4000]);
    expect(clock.now()).toBe(23_500);
    expect(stop.status).toBe("error");
    expect(String(stop.content)).toContain("Do not call 'search' again for this task");
    expect(stop.artifact).toMatchObject({ error_code: "RETRIES_EXHAUSTED", recoverable: false });
    expect(stop.response_metadata).toMatchObject({ retry_reflect: { status: "failed", reason: "exhausted", attempt: 9 } });
    expect(recorder.types()).toEqual([...Array(6).fill("retry"), "waiting_before_retry", "retry", "retry", "retries_exhausted"]);
  });

  it("an abort of the run during a backoff wait rejects the run with the abort reason, without another attempt", async () => {
    const clock = createFakeClock();
    const recorder = recordEvents();
    const plugin = RetryReflectPlugin.create({ clock, observers: [recorder] });
    const counter = { calls: 0 };
    const model = fakeModel().respond(callTools({ name: "search", args: { query: "retry" }, id: "call_1" }));
    const agent = createAgent({ model, tools: [flakyTool(2, counter)], middleware: [retryReflectMiddleware(plugin)] });
    const controller = new AbortController();
    const reason = new Error("user cancelled");

    const run = agent.invoke({ messages: [{ role: "user", content: "search retry" }] }, { signal: controller.signal });
    const outcome = run.then(
      () => "resolved",
      (error: unknown) => error,
    );
    for (let round = 0; round < 1000 && clock.pendingSleeps() === 0; round++) await new Promise<void>((resolve) => setImmediate(resolve));
    expect(clock.pendingSleeps()).toBe(1); // waiting 500 ms before attempt 2
    controller.abort(reason);

    expect(await outcome).toBe(reason);
    expect(counter.calls).toBe(1);
    expect(clock.pendingSleeps()).toBe(0);
    expect(recorder.events.map((event) => event.type)).toEqual(["retry"]);
  });
});
