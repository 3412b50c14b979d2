import { AIMessage, ToolMessage } from "@langchain/core/messages";
import { fakeModel } from "@langchain/core/testing";
import { tool } from "@langchain/core/tools";
import { Command, interrupt, isGraphInterrupt, MemorySaver } from "@langchain/langgraph";
import { RetryReflectPlugin } from "@retry-reflect/core";
import { createFakeClock } from "@retry-reflect/core/testing";
import { createAgent, createMiddleware, humanInTheLoopMiddleware } from "langchain";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { retryReflectMiddleware } from "../src/index.js";
import { callTools, drive, fieldOf, recordEvents } from "./helpers.js";

/** A middleware placed before ours: records what our middleware throws at it. */
function thrownRecorder() {
  const thrown: unknown[] = [];
  const middleware = createMiddleware({
    name: "outer",
    wrapToolCall: async (request, handler) => {
      try {
        return await handler(request);
      } catch (error) {
        thrown.push(error);
        throw error;
      }
    },
  });
  return { thrown, middleware };
}

describe("control flow passes through untouched", () => {
  it("an interrupt from a tool pauses the run, is not a failure, and a resumed run keeps its attempt counters", async () => {
    const clock = createFakeClock();
    const recorder = recordEvents();
    const plugin = RetryReflectPlugin.create({ clock, observers: [recorder] });
    const outer = thrownRecorder();
    let runs = 0;
    const deploy = tool(
      async ({ env }) => {
        runs += 1;
        if (runs === 1) throw new Error("deploy failed: lock held by another job");
        const approved = interrupt({ question: `Deploy to ${env}?` });
        if (approved !== "yes") return "cancelled";
        throw new Error("deploy failed: lock held by another job");
      },
      { name: "deploy", description: "Deploy the app.", schema: z.object({ env: z.string() }) },
    );
    const model = fakeModel()
      .respond(callTools({ name: "deploy", args: { env: "prod" }, id: "call_1" }))
      .respond(callTools({ name: "deploy", args: { env: "prod" }, id: "call_2" }))
      .respond(new AIMessage("The deploy is blocked by a lock."));
    const agent = createAgent({
      model,
      tools: [deploy],
      middleware: [outer.middleware, retryReflectMiddleware(plugin)],
      checkpointer: new MemorySaver(),
    });
    const config = { configurable: { thread_id: "thread-1" } };

    const paused = await drive(clock, agent.invoke({ messages: [{ role: "user", content: "deploy to prod" }] }, config));
    expect(paused.__interrupt__).toEqual([expect.objectContaining({ value: { question: "Deploy to prod?" } })]);
    expect(outer.thrown).toHaveLength(1);
    expect(isGraphInterrupt(outer.thrown[0])).toBe(true);
    // The first failure, and the corrected call waiting out its backoff before it is interrupted.
    expect(recorder.events.map((event) => [event.type, fieldOf(event, "attempt")])).toEqual([
      ["retry", 1],
      ["waiting_before_retry", undefined],
    ]);

    const resumed = await drive(clock, agent.invoke(new Command({ resume: "yes" }), config));
    // Same scope after the resume: the second failure is attempt 2 of this run, not attempt 1 of a new one.
    expect(recorder.events.map((event) => [event.type, fieldOf(event, "attempt")])).toEqual([
      ["retry", 1],
      ["waiting_before_retry", undefined], // the corrected call waits out the first failure's backoff
      ["retry", 2],
    ]);
    const last = resumed.messages.filter((message) => ToolMessage.isInstance(message)).at(-1) as ToolMessage;
    expect(last.tool_call_id).toBe("call_2");
    expect(last.artifact).toMatchObject({ error_code: "TOOL_FAILED" });
    expect(resumed.messages.at(-1)?.content).toBe("The deploy is blocked by a lock.");
    expect(plugin.circuitState("deploy")).toBe("closed");
  });

  it("humanInTheLoopMiddleware's approval interrupt passes through, and the approved call then runs under the plugin", async () => {
    const clock = createFakeClock();
    const recorder = recordEvents();
    const plugin = RetryReflectPlugin.create({ clock, observers: [recorder] });
    let calls = 0;
    const charge = tool(
      async ({ amount }) => {
        calls += 1;
        if (calls === 1) throw Object.assign(new Error("gateway busy"), { status: 503 });
        return `charged ${amount}`;
      },
      { name: "charge", description: "Charge the card.", schema: z.object({ amount: z.number() }), metadata: { effect: "idempotent" } },
    );
    const model = fakeModel()
      .respond(callTools({ name: "charge", args: { amount: 42 }, id: "call_1" }))
      .respond(new AIMessage("Charged."));
    const agent = createAgent({
      model,
      tools: [charge],
      middleware: [humanInTheLoopMiddleware({ interruptOn: { charge: true } }), retryReflectMiddleware(plugin)],
      checkpointer: new MemorySaver(),
    });
    const config = { configurable: { thread_id: "thread-2" } };

    const paused = await drive(clock, agent.invoke({ messages: [{ role: "user", content: "charge 42" }] }, config));
    expect(paused.__interrupt__).toHaveLength(1);
    expect(calls).toBe(0);

    const resumed = await drive(clock, agent.invoke(new Command({ resume: { decisions: [{ type: "approve" }] } }), config));
    expect(calls).toBe(2);
    expect(clock.sleeps.filter((ms) => ms > 0)).toEqual([500]);
    const message = resumed.messages.find((candidate) => ToolMessage.isInstance(candidate)) as ToolMessage;
    expect(message.content).toBe("charged 42");
    expect(recorder.events.map((event) => event.type)).toEqual(["retry", "retry_succeeded"]);
  });

  it("an abort of the run while the tool runs rejects the run; the failure is not counted", async () => {
    const clock = createFakeClock();
    const recorder = recordEvents();
    const plugin = RetryReflectPlugin.create({ clock, observers: [recorder], circuitBreakerThreshold: 1 });
    let started!: () => void;
    const running = new Promise<void>((resolve) => (started = resolve));
    let calls = 0;
    const slow = tool(
      async (_input, config) => {
        calls += 1;
        started();
        const signal = config.signal as AbortSignal;
        return new Promise<string>((_resolve, reject) => {
          signal.addEventListener("abort", () => reject(Object.assign(new Error("The operation was aborted"), { name: "AbortError" })), {
            once: true,
          });
        });
      },
      { name: "slow", description: "Takes a while.", schema: z.object({ q: z.string() }) },
    );
    const model = fakeModel().respond(callTools({ name: "slow", args: { q: "x" }, id: "call_1" }));
    const agent = createAgent({ model, tools: [slow], middleware: [retryReflectMiddleware(plugin)] });
    const controller = new AbortController();
    const reason = new Error("user pressed stop");

    const outcome = agent.invoke({ messages: [{ role: "user", content: "go" }] }, { signal: controller.signal }).then(
      () => "resolved",
      (error: unknown) => error,
    );
    await running;
    controller.abort(reason);

    const thrown = await outcome;
    expect(thrown).toBe(reason);
    expect(calls).toBe(1);
    expect(recorder.events).toEqual([]); // no retry, no reflection
    expect(plugin.circuitState("slow")).toBe("closed"); // threshold 1: one counted failure would have opened it
  });

  it("an excluded tool (exit_loop) is a plain call: its error passes through untouched", async () => {
    const clock = createFakeClock();
    const recorder = recordEvents();
    const plugin = RetryReflectPlugin.create({ clock, observers: [recorder], excludeTools: ["exit_loop"] });
    const outer = thrownRecorder();
    const loopDone = new Error("exit_loop: loop finished");
    let calls = 0;
    const exitLoop = tool(
      async () => {
        calls += 1;
        throw loopDone;
      },
      { name: "exit_loop", description: "Leave the loop.", schema: z.object({}) },
    );
    const model = fakeModel().respond(callTools({ name: "exit_loop", args: {}, id: "call_1" }));
    const agent = createAgent({ model, tools: [exitLoop], middleware: [outer.middleware, retryReflectMiddleware(plugin)] });

    await expect(drive(clock, agent.invoke({ messages: [{ role: "user", content: "stop" }] }))).rejects.toBe(loopDone);
    expect(outer.thrown).toEqual([loopDone]);
    expect(outer.thrown[0]).toBe(loopDone);
    expect(calls).toBe(1);
    expect(clock.sleeps).toEqual([]);
    expect(recorder.events).toEqual([]);
  });
});
