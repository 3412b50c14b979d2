import { describe, expect, it, vi } from "vitest";
import type { RetryReflectEvent } from "../src/events.js";
import { type Clock, RetryReflectPlugin, type ToolContext } from "../src/index.js";
import { createFakeClock, type FakeClock } from "../src/testing.js";

// `attemptTimeoutMs`: one attempt's limit. Past it the tool's signal aborts and the attempt fails
// with TIMEOUT (transient): retried in place after the backoff. A hung tool never hangs the agent.

/** A tool that never answers (and records the signal it was given). */
function hungTool(signals: AbortSignal[]) {
  return (_args: unknown, context: ToolContext) => {
    if (context.signal) signals.push(context.signal);
    return new Promise<never>(() => {});
  };
}

/** Settles `promise` while the clock runs; fails the test if it is still pending after `ms` of fake time. */
async function within<T>(clock: FakeClock, ms: number, promise: Promise<T>): Promise<T> {
  let settled = false;
  promise.then(
    () => (settled = true),
    () => (settled = true),
  );
  for (let step = 0; step < 100 && !settled && clock.now() <= ms; step++) await clock.advance(ms / 100);
  await clock.advance(0);
  expect(settled, "still pending").toBe(true);
  return promise;
}

describe("a hung tool with attemptTimeoutMs", () => {
  it("is cut off at the limit, its signal aborted with the TIMEOUT error, and retried in place: the retry's answer is the outcome", async () => {
    const clock = createFakeClock();
    const events: RetryReflectEvent[] = [];
    const plugin = RetryReflectPlugin.create({
      clock,
      attemptTimeoutMs: 1_000,
      initialBackoffMs: 200,
      observers: [{ onEvent: (event) => events.push(event) }],
    });
    const signals: AbortSignal[] = [];
    const hung = hungTool(signals);
    let runs = 0;
    const pending = plugin.execute({ toolName: "generate_report", args: { month: "2026-11" } }, (args, context) => {
      runs++;
      if (runs === 1) return hung(args, context);
      return "report ready";
    });

    await clock.advance(999);
    expect(runs).toBe(1);
    expect(signals[0]?.aborted).toBe(false);
    await clock.advance(1);
    // Cut off: its signal aborted, the reason the TIMEOUT error.
    expect(signals[0]?.aborted).toBe(true);
    expect((signals[0]?.reason as { code?: string } | undefined)?.code).toBe("TIMEOUT");
    expect(runs).toBe(1); // waiting out the backoff
    await clock.advance(200);
    const outcome = await pending;
    expect(outcome).toMatchObject({ status: "success", value: "report ready", attempt: 2 });
    expect(runs).toBe(2);
    expect(events.map((event) => event.type)).toEqual(["attempt_timed_out", "retry", "retry_succeeded"]);
    expect(events[0]).toMatchObject({
      level: "WARN",
      message: "attempt timed out",
      fields: { tool_name: "generate_report", attempt: 1, timeout_ms: 1_000 },
    });
    expect(events[1]?.fields).toMatchObject({ error_code: "TIMEOUT", backoff_ms: 200, mode: "in_place" });
    // No timer left behind: the second attempt's timer was cleared when it answered.
    expect(clock.pendingSleeps()).toBe(0);
  });

  it("ends even when the tool ignores its signal: every attempt times out, then the give-up time passes and the model is told to stop", async () => {
    const clock = createFakeClock();
    // The tool has failed for giveUpMs (since its first failure, at 500 ms) and more than maxRetries times by the fourth timeout.
    const plugin = RetryReflectPlugin.create({ clock, attemptTimeoutMs: 500, maxRetries: 2, initialBackoffMs: 100, giveUpMs: 1_000 });
    let runs = 0;
    const outcome = await within(
      clock,
      10_000,
      plugin.execute({ toolName: "search", args: { q: "x" } }, () => {
        runs++;
        return new Promise(() => {}); // never answers, never looks at its signal
      }),
    );
    expect(runs).toBe(3);
    expect(outcome).toMatchObject({ status: "failed", reason: "exhausted", attempt: 3 });
    if (outcome.status !== "failed") throw new Error("unreachable");
    expect(outcome.error.details).toMatchObject({ last_error_code: "TIMEOUT" });
    expect(outcome.message).toContain("did not answer within 500 ms");
    // 500 + 100 + 500 + 200 + 500 of fake time, no more.
    expect(clock.now()).toBeLessThanOrEqual(1_800 + 100);
    expect(clock.pendingSleeps()).toBe(0);
  });

  it("adds no timer when the limit is off, a watchdog for the default limit, and stops the one it adds on success, failure and abort", async () => {
    const fake = createFakeClock();
    const timers: Array<[ms: number, watchdog: boolean]> = [];
    const clock: Clock = {
      ...fake,
      timer(ms, fire, watchdog) {
        timers.push([ms, watchdog]);
        return fake.timer(ms, fire, watchdog);
      },
    };
    const untimed = RetryReflectPlugin.create({ clock, attemptTimeoutMs: 0 });
    await untimed.execute({ toolName: "t", args: {} }, () => "ok");
    expect(timers).toEqual([]);
    // The default limit: a watchdog, which a test clock does not jump to.
    const byDefault = RetryReflectPlugin.create({ clock });
    await byDefault.execute({ toolName: "t", args: {} }, () => "ok");
    expect(timers.splice(0)).toEqual([[10_000, true]]);
    expect(fake.pendingSleeps()).toBe(0);

    const timed = RetryReflectPlugin.create({ clock, attemptTimeoutMs: 1_000, maxRetries: 0 });
    await timed.execute({ toolName: "t", args: {} }, () => "ok");
    expect(timers).toEqual([[1_000, false]]);
    expect(fake.pendingSleeps()).toBe(0);
    await timed.execute({ toolName: "u", args: {} }, () => {
      throw new Error("Invalid units. Supported: celsius");
    });
    expect(fake.pendingSleeps()).toBe(0);

    const controller = new AbortController();
    const aborted = timed.execute({ toolName: "v", args: {}, signal: controller.signal }, () => new Promise(() => {}));
    await fake.advance(10);
    expect(fake.pendingSleeps()).toBe(1);
    controller.abort(new Error("user cancelled"));
    await expect(aborted).rejects.toThrow("user cancelled");
    expect(fake.pendingSleeps()).toBe(0);
  });

  it("runs an attempt with one signal and, with a limit, one timer (DESIGN.md Part 4)", async () => {
    const made: AbortController[] = [];
    class CountedController extends AbortController {
      constructor() {
        super();
        made.push(this);
      }
    }
    const fake = createFakeClock();
    let timers = 0;
    const clock: Clock = {
      ...fake,
      timer(ms, fire, watchdog) {
        timers++;
        return fake.timer(ms, fire, watchdog);
      },
    };
    const plugin = RetryReflectPlugin.create({ clock, attemptTimeoutMs: 1_000 });
    const signals: AbortSignal[] = [];
    vi.stubGlobal("AbortController", CountedController);
    try {
      const outcome = await plugin.execute({ toolName: "t", args: {} }, (_args, context) => {
        signals.push(context.signal as AbortSignal);
        return "ok";
      });
      expect(outcome.status).toBe("success");
    } finally {
      vi.unstubAllGlobals();
    }
    expect(made.length).toBe(1);
    expect(made[0]?.signal).toBe(signals[0] as AbortSignal);
    expect(timers).toBe(1);
    expect(signals[0]?.aborted).toBe(false); // the tool's signal is not aborted after it answered
    expect(fake.pendingSleeps()).toBe(0);
  });

  it("rejects with the caller's abort at once, the tool's own signal aborted too", async () => {
    const clock = createFakeClock();
    const plugin = RetryReflectPlugin.create({ clock, attemptTimeoutMs: 60_000 });
    const signals: AbortSignal[] = [];
    const controller = new AbortController();
    const pending = plugin.execute({ toolName: "t", args: {}, signal: controller.signal }, hungTool(signals));
    await clock.advance(5);
    const reason = new Error("stop");
    controller.abort(reason);
    await expect(pending).rejects.toBe(reason);
    expect(signals[0]?.aborted).toBe(true);
    expect(signals[0]?.reason).toBe(reason);
    // The tool got a signal of its own, not the caller's.
    expect(signals[0]).not.toBe(controller.signal);
  });

  it("does not time out a tool that answers in time, and a late rejection of a timed-out attempt is nobody's unhandled rejection", async () => {
    const clock = createFakeClock();
    const plugin = RetryReflectPlugin.create({ clock, attemptTimeoutMs: 100, initialBackoffMs: 10 });
    let rejectLate!: (error: Error) => void;
    let runs = 0;
    const pending = plugin.execute({ toolName: "t", args: {} }, () => {
      runs++;
      if (runs === 1) return new Promise((_resolve, reject) => (rejectLate = reject));
      return clock.sleep(99).then(() => "just in time");
    });
    await clock.advance(100);
    rejectLate(new Error("late failure")); // after its timeout: must not surface anywhere
    await clock.advance(10);
    await clock.advance(99);
    await expect(pending).resolves.toMatchObject({ status: "success", value: "just in time", attempt: 2 });
  });

  it("applies per tool: only the tool with the limit is cut off", async () => {
    const clock = createFakeClock();
    // No retry in place (no patience, no floor): the cut-off report is handed to the model at once, as temporary.
    const plugin = RetryReflectPlugin.create({
      clock,
      maxRetries: 0,
      patienceMs: 0,
      tools: { generate_report: { attemptTimeoutMs: 1_000 } },
    });
    const report = plugin.execute({ toolName: "generate_report", args: {} }, () => new Promise(() => {}));
    let searchDone = false;
    const search = plugin.execute({ toolName: "search", args: {} }, () => clock.sleep(5_000).then(() => "slow but fine"));
    search.then(() => (searchDone = true));
    await clock.advance(1_000);
    await expect(report).resolves.toMatchObject({ status: "reflect", error: { code: "TIMEOUT", recoverable: true } });
    expect(searchDone).toBe(false);
    await clock.advance(4_000);
    await expect(search).resolves.toMatchObject({ status: "success", value: "slow but fine" });
  });

  it("a timed-out write is reflected, not retried in place; its key stays held until it ends, and the model's next call replays its late result", async () => {
    const clock = createFakeClock();
    const plugin = RetryReflectPlugin.create({
      clock,
      attemptTimeoutMs: 1_000,
      initialBackoffMs: 100,
      toolEffects: { send_email: "write" },
    });
    let sends = 0;
    let finishLate!: (value: string) => void;
    const first = plugin.execute({ toolName: "send_email", args: { to: "a@b.c", idempotency_key: "k1" } }, () => {
      sends++;
      return new Promise<string>((resolve) => (finishLate = resolve)); // ignores its signal
    });
    await clock.advance(1_000);
    const outcome = await first;
    expect(sends).toBe(1);
    expect(outcome.status).toBe("reflect");
    if (outcome.status !== "reflect") throw new Error("unreachable");
    expect(outcome.error.code).toBe("TIMEOUT");
    expect(outcome.error.message).toContain("may still complete");
    expect(outcome.error.suggestedAction).toContain("never runs twice");

    // While it still runs, the same call is refused, not run a second time.
    const meanwhile = plugin.execute({ toolName: "send_email", args: { to: "a@b.c", idempotency_key: "k1" } }, () => {
      sends++;
      return "sent #2";
    });
    await clock.advance(100);
    await expect(meanwhile).resolves.toMatchObject({ status: "reflect", error: { code: "IN_PROGRESS" } });
    expect(sends).toBe(1);

    // The cut-off send finishes after all: its result is stored, and the model's next call replays it.
    finishLate("sent #1");
    await clock.advance(0);
    const again = plugin.execute({ toolName: "send_email", args: { to: "a@b.c", idempotency_key: "k1" } }, () => {
      sends++;
      return "sent #3";
    });
    await clock.runAll(); // it waits out the refusal's backoff first
    await expect(again).resolves.toMatchObject({ status: "success", value: "sent #1", replayed: true });
    expect(sends).toBe(1);
  });

  it("a timed-out read is still retried in place (only a guarded write that may still be running is not)", async () => {
    const clock = createFakeClock();
    const plugin = RetryReflectPlugin.create({ clock, attemptTimeoutMs: 50, initialBackoffMs: 10, toolEffects: { lookup: "idempotent" } });
    let runs = 0;
    const pending = plugin.execute({ toolName: "lookup", args: {} }, () => (++runs === 1 ? new Promise(() => {}) : "found"));
    await clock.advance(50);
    await clock.advance(10);
    await expect(pending).resolves.toMatchObject({ status: "success", value: "found", attempt: 2 });
  });

  it("rejects invalid values naming the option", () => {
    for (const value of [-1, Number.NaN, Number.POSITIVE_INFINITY, "1000"]) {
      expect(() => RetryReflectPlugin.create({ attemptTimeoutMs: value as number })).toThrow(/attemptTimeoutMs/);
    }
    expect(() => RetryReflectPlugin.create({ tools: { report: { attemptTimeoutMs: -1 } } })).toThrow(/tools\.report\.attemptTimeoutMs.*-1/);
  });
});
