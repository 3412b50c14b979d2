import { describe, expect, it } from "vitest";
import { DEFAULT_OPTIONS, RetryReflectPlugin, type ToolContext } from "../src/index.js";
import { createFakeClock, recordEvents } from "../src/testing.js";

// The default attempt limits (`[10_000, 30_000, 60_000]`, chosen with bench:agents): the first
// attempt of a tool's failing row in the scope is cut off at 10 s, the second at 30 s, every later
// one at 60 s, so a hung tool no longer hangs the agent and a slow one still gets its time on a retry. The default is a
// watchdog timer on the plugin's clock (one a test clock's `runAll` does not jump to), met exactly.
// `attemptTimeoutMs: 0` turns it off; a value set replaces it (a number: one limit for every attempt).

const hangs = () => new Promise<never>(() => {});

describe("the default attempt limit", () => {
  it("is documented as 10 s for the first attempt, 30 s for the second, then 60 s", () => {
    expect(DEFAULT_OPTIONS.attemptTimeoutMs).toEqual([10_000, 30_000, 60_000]);
    expect(RetryReflectPlugin.create().options.policy.attemptTimeoutsMs).toEqual([10_000, 30_000, 60_000]);
  });

  it("with the defaults, a hung read tool is cut off at 10 s, 30 s, 60 s and 60 s, retried in place each time, then stopped (more than maxRetries failures, past the give-up time)", async () => {
    const clock = createFakeClock();
    const events = recordEvents();
    const plugin = RetryReflectPlugin.create({ clock, observers: [events] });
    let runs = 0;
    const outcome = plugin.execute({ toolName: "search", args: { q: "x" } }, () => {
      runs++;
      return hangs();
    });
    let settled = false;
    void outcome.then(() => {
      settled = true;
    });
    await clock.advance(9_999);
    expect(events.types()).toEqual([]); // never before the limit
    await clock.advance(1);
    expect(events.types()).toEqual(["attempt_timed_out", "retry"]);
    expect(events.events[0]?.fields).toMatchObject({ tool_name: "search", attempt: 1, timeout_ms: 10_000 });
    expect(events.events[1]?.fields).toMatchObject({ mode: "in_place", backoff_ms: 500 });
    expect(runs).toBe(1);
    await clock.advance(500); // the in-place retry's backoff
    expect(runs).toBe(2);
    await clock.advance(29_999); // the second attempt's limit is 30 s
    expect(events.types()).toEqual(["attempt_timed_out", "retry"]);
    await clock.advance(1);
    expect(events.events[2]?.fields).toMatchObject({ attempt: 2, timeout_ms: 30_000 });
    // Past the patience, but the floor is maxRetries (3) in-place retries: the third and fourth get 60 s.
    await clock.advance(1_000 + 60_000 + 2_000 + 60_000);
    expect(runs).toBe(4);
    expect(events.events.filter((event) => event.type === "attempt_timed_out").map((event) => event.fields.timeout_ms)).toEqual([
      10_000, 30_000, 60_000, 60_000,
    ]);
    expect(settled).toBe(true);
    // Four failures (more than maxRetries) over 153.5 s (more than giveUpMs): the definitive stop.
    const final = await outcome;
    expect(final.status === "failed" && final.error.code).toBe("RETRIES_EXHAUSTED");
    expect(final.status === "failed" && (final.error.cause as { code?: string }).code).toBe("TIMEOUT");
  });

  it("the limits follow the tool's failing row in the scope: the model's next call after a cut-off gets 30 s", async () => {
    const clock = createFakeClock();
    const events = recordEvents();
    // No in-place retry: each attempt is a call of the model.
    const plugin = RetryReflectPlugin.create({ clock, observers: [events], maxRetries: 0, patienceMs: 0 });
    const first = plugin.execute({ toolName: "search", args: {}, scope: "run" }, hangs);
    await clock.advance(10_000);
    expect((await first).status).toBe("reflect");
    const second = plugin.execute({ toolName: "search", args: {}, scope: "run" }, () => clock.sleep(25_000).then(() => "slow but fine"));
    await clock.advance(500 + 25_000); // the gate, then the slow answer, within 30 s
    expect(await second).toMatchObject({ status: "success", value: "slow but fine", attempt: 2 });
    // Another scope's first attempt: 10 s again.
    void plugin.execute({ toolName: "search", args: {}, scope: "other" }, hangs);
    await clock.advance(10_000);
    expect(events.events.filter((event) => event.type === "attempt_timed_out").map((event) => event.fields.timeout_ms)).toEqual([
      10_000, 10_000,
    ]);
  });

  it("the tool's context.signal, when it reads it, aborts at the limit with the TIMEOUT", async () => {
    const clock = createFakeClock();
    const plugin = RetryReflectPlugin.create({ clock, maxRetries: 0, patienceMs: 0 });
    let signal: AbortSignal | undefined;
    const outcome = plugin.execute({ toolName: "search", args: {} }, (_args, context: ToolContext) => {
      signal = context.signal;
      return hangs();
    });
    await clock.advance(9_999);
    expect(signal?.aborted).toBe(false);
    await clock.advance(1);
    expect(signal?.aborted).toBe(true);
    expect(((signal as AbortSignal).reason as { code?: string }).code).toBe("TIMEOUT");
    // Past the call's patience, with no in-place retry left: told as temporary.
    expect(await outcome).toMatchObject({ status: "reflect", error: { code: "TIMEOUT", recoverable: true } });
  });

  it("the caller's abort still reaches a tool's signal", async () => {
    const clock = createFakeClock();
    const plugin = RetryReflectPlugin.create({ clock });
    const caller = new AbortController();
    let seen: AbortSignal | undefined;
    const outcome = plugin.execute({ toolName: "search", args: {}, signal: caller.signal }, (_args, context) => {
      seen = context.signal;
      return new Promise<never>((_resolve, reject) => context.signal?.addEventListener("abort", () => reject(context.signal?.reason)));
    });
    await clock.advance(0);
    caller.abort(new Error("user left"));
    await expect(outcome).rejects.toThrow("user left");
    expect(seen?.aborted).toBe(true);
  });

  it("attemptTimeoutMs: 0 turns the limit off; a tool may take ten minutes", async () => {
    const clock = createFakeClock();
    const plugin = RetryReflectPlugin.create({ clock, attemptTimeoutMs: 0 });
    let finish!: (value: string) => void;
    const outcome = plugin.execute({ toolName: "report", args: {} }, () => new Promise<string>((resolve) => (finish = resolve)));
    await clock.advance(600_000);
    finish("done");
    expect(await outcome).toMatchObject({ status: "success", value: "done" });
  });

  it("a tool's own attemptTimeoutMs (a number: every attempt) replaces the default for that tool only", async () => {
    const clock = createFakeClock();
    const events = recordEvents();
    const plugin = RetryReflectPlugin.create({
      clock,
      observers: [events],
      maxRetries: 1,
      patienceMs: 0,
      tools: { quick: { attemptTimeoutMs: 2_000 } },
    });
    void plugin.execute({ toolName: "quick", args: {} }, hangs);
    void plugin.execute({ toolName: "other", args: {} }, hangs);
    await clock.advance(2_000 + 500 + 2_000); // cut off, the in-place retry's backoff, cut off again
    const timedOut = () =>
      events.events.filter((event) => event.type === "attempt_timed_out").map((event) => [event.toolName, event.fields.timeout_ms]);
    expect(timedOut()).toEqual([
      ["quick", 2_000],
      ["quick", 2_000],
    ]);
    await clock.advance(10_000 - 4_501);
    expect(timedOut()).toHaveLength(2);
    await clock.advance(1);
    expect(timedOut()).toEqual([
      ["quick", 2_000],
      ["quick", 2_000],
      ["other", 10_000],
    ]);
  });

  it("a write cut off at the default limit is not run twice: the same call later", async () => {
    const clock = createFakeClock();
    const plugin = RetryReflectPlugin.create({ clock, toolEffects: { pay: "write" } });
    let runs = 0;
    const first = plugin.execute({ toolName: "pay", args: { amount: 1, idempotency_key: "p-1" } }, () => {
      runs++;
      return hangs();
    });
    await clock.advance(10_000);
    const outcome = await first;
    expect(outcome.status === "reflect" && outcome.error.code).toBe("TIMEOUT");
    expect(outcome.status === "reflect" && outcome.prompt).toContain("call it again then with the same arguments");
    expect(runs).toBe(1);
  });

  it("many attempts in flight at once, started over several ticks: each hung one times out once, never early; the others succeed", async () => {
    const clock = createFakeClock();
    const events = recordEvents();
    const plugin = RetryReflectPlugin.create({ clock, observers: [events], maxRetries: 0, patienceMs: 0 });
    const ended: Array<Promise<{ index: number; startedAt: number; endedAt: number; status: string }>> = [];
    const finishers: Array<() => void> = [];
    for (let index = 0; index < 600; index++) {
      if (index % 100 === 0) await clock.advance(700); // six starts, 700 ms apart: several groups
      const startedAt = clock.now();
      const hung = index % 3 === 0;
      const outcome = plugin.execute({ toolName: "search", args: { index }, scope: `s${index}` }, () =>
        hung ? hangs() : new Promise<string>((resolve) => finishers.push(() => resolve(`ok ${index}`))),
      );
      ended.push(outcome.then((settled) => ({ index, startedAt, endedAt: clock.now(), status: settled.status })));
    }
    await new Promise((resolve) => setImmediate(resolve)); // the last group's tools started (a microtask after `execute`)
    for (const finish of finishers.reverse()) finish(); // out of order
    for (let step = 0; step < 700; step++) await clock.advance(100);
    const results = await Promise.all(ended);
    expect(events.events.filter((event) => event.type === "attempt_timed_out")).toHaveLength(200);
    for (const { index, startedAt, endedAt, status } of results) {
      if (index % 3 !== 0) {
        expect(status, String(index)).toBe("success");
        expect(endedAt, String(index)).toBe(4_200); // when its tool answered, all at once at the end of the starts
        continue;
      }
      expect(status, String(index)).toBe("reflect"); // past the patience, no in-place retry: temporary
      // Never early; late by at most this test's 100 ms steps.
      expect(endedAt - startedAt, String(index)).toBeGreaterThanOrEqual(10_000);
      expect(endedAt - startedAt, String(index)).toBeLessThanOrEqual(10_100);
    }
  });
});
