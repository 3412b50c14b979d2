import { describe, expect, it } from "vitest";
import { RetryReflectPlugin, type ToolContext } from "../src/index.js";
import { createFakeClock, recordEvents } from "../src/testing.js";
import { collectUnhandledRejections, settleEventLoop } from "./helpers/unhandled.js";

// A healthy tool's call settles from the tool's own promise, under the default limit and without
// one (`attemptTimeoutMs: 0`).
// Whatever shape the tool's answer takes, the call ends once, and nothing escapes as an unhandled
// rejection, also when the tool settles after the limit cut it off.

for (const [name, options] of [
  ["under the default limit", {}],
  ["without a limit", { attemptTimeoutMs: 0 }],
] as const) {
  describe(`a healthy tool's call, ${name}`, () => {
    const unhandled = collectUnhandledRejections();

    it("a tool that throws synchronously fails like one that rejects: reflected, and the call's promise never rejects", async () => {
      const plugin = RetryReflectPlugin.create({ clock: createFakeClock(), ...options });
      const outcome = await plugin.execute({ toolName: "search", args: {} }, () => {
        throw new Error("Invalid input: q is required");
      });
      expect(outcome.status).toBe("reflect");
      await settleEventLoop();
      expect(unhandled).toEqual([]);
    });

    it("a tool that returns a plain value (no promise) succeeds with it", async () => {
      const plugin = RetryReflectPlugin.create({ clock: createFakeClock(), ...options });
      expect(await plugin.execute({ toolName: "add", args: { a: 1 } }, () => 42)).toEqual({
        status: "success",
        value: 42,
        attempt: 1,
        replayed: false,
      });
    });

    it("the tool gets its attempt, name and call id in its context", async () => {
      const plugin = RetryReflectPlugin.create({ clock: createFakeClock(), ...options });
      let seen: ToolContext | undefined;
      await plugin.execute({ toolName: "search", args: {}, callId: "call-7" }, (_args, context) => {
        seen = context;
        return "ok";
      });
      expect(seen).toMatchObject({ attempt: 1, toolName: "search", callId: "call-7" });
      expect(JSON.stringify(seen)).toBeTypeOf("string"); // a tool may log its context
    });

    it("500 calls in flight, settled out of order with values and failures mixed: each ends once with its own result", async () => {
      const plugin = RetryReflectPlugin.create({ clock: createFakeClock(), ...options });
      const settle: Array<() => void> = [];
      const outcomes = Array.from({ length: 500 }, (_, index) =>
        plugin.execute(
          { toolName: `t${index % 5}`, args: { index }, scope: `s${index}` },
          () =>
            new Promise<number>((resolve, reject) =>
              settle.push(() => (index % 4 === 0 ? reject(new Error("Invalid input")) : resolve(index))),
            ),
        ),
      );
      await new Promise((resolve) => setImmediate(resolve)); // every tool started (a microtask after its `execute`)
      expect(settle).toHaveLength(500);
      for (let index = settle.length - 1; index >= 0; index--) settle[index]?.();
      const ended = await Promise.all(outcomes);
      ended.forEach((outcome, index) => {
        if (index % 4 === 0) expect(outcome.status, String(index)).toBe("reflect");
        else expect(outcome, String(index)).toMatchObject({ status: "success", value: index });
      });
    });
  });
}

describe("a healthy tool's attempt cut off at the default limit", () => {
  const unhandled = collectUnhandledRejections();

  it("a tool that settles after its cut-off changes nothing: a late value is dropped, a late rejection is nobody's unhandled rejection", async () => {
    const clock = createFakeClock();
    const events = recordEvents();
    const plugin = RetryReflectPlugin.create({ clock, observers: [events], maxRetries: 0 });
    const late: Array<{ resolve: (value: string) => void; reject: (error: Error) => void }> = [];
    const tool = () => new Promise<string>((resolve, reject) => late.push({ resolve, reject }));
    const first = plugin.execute({ toolName: "slow", args: { n: 1 }, scope: "a" }, tool);
    const second = plugin.execute({ toolName: "slow", args: { n: 2 }, scope: "b" }, tool);
    // The default limit of a first attempt: 10 s. Within the call's patience, each call retries in place.
    await clock.advance(10_000);
    expect(events.types().filter((type) => type === "attempt_timed_out")).toHaveLength(2);
    // The cut-off first attempts settle late, while their calls wait for the in-place retry.
    late[0]?.resolve("too late");
    late[1]?.reject(new Error("too late"));
    await settleEventLoop();
    await clock.advance(500); // the backoff before the in-place retry
    expect(late).toHaveLength(4);
    late[2]?.resolve("in time");
    late[3]?.resolve("in time");
    const outcomes = await Promise.all([first, second]);
    // The late value is dropped and the late rejection fails nothing: each call ends with its retry's value.
    expect(outcomes).toMatchObject([
      { status: "success", value: "in time", attempt: 2 },
      { status: "success", value: "in time", attempt: 2 },
    ]);
    await settleEventLoop();
    expect(unhandled).toEqual([]);
    expect(events.types().filter((type) => type === "attempt_timed_out")).toHaveLength(2);
  });
});
