import { describe, expect, it } from "vitest";
import type { RetryReflectEvent } from "../src/events.js";
import { type ExecuteOutcome, RetryReflectPlugin } from "../src/index.js";
import { createFakeClock } from "../src/testing.js";

/** A promise and the function that resolves it: lets a test hold tools in flight. */
function gate(): { promise: Promise<void>; open: () => void } {
  let open!: () => void;
  const promise = new Promise<void>((resolve) => (open = resolve));
  return { promise, open };
}

const invalid = () => new Error("Invalid units. Supported: celsius, fahrenheit");
const unavailable = () => Object.assign(new Error("HTTP 503 Service Unavailable"), { status: 503 });

function summary(outcomes: readonly ExecuteOutcome<unknown>[]) {
  return outcomes.map((outcome) =>
    outcome.status === "failed" ? `${outcome.attempt}:${outcome.reason}` : `${outcome.attempt}:${outcome.status}`,
  );
}

describe("parallel calls of one tool in one scope share one attempt budget", () => {
  it("8 parallel failures with maxRetries 3: distinct attempt numbers, the budget spent, the 9th call exhausted without running", async () => {
    const clock = createFakeClock();
    const events: RetryReflectEvent[] = [];
    const plugin = RetryReflectPlugin.create({
      clock,
      maxRetries: 3,
      circuitBreakerThreshold: 100,
      observers: [{ onEvent: (event) => events.push(event) }],
    });
    const held = gate();
    let runs = 0;
    const calls = Array.from({ length: 8 }, () =>
      plugin.execute({ toolName: "get_weather", args: { city: "nyc", units: "kelvin" }, scope: "run-1" }, async () => {
        runs++;
        await held.promise;
        throw invalid();
      }),
    );
    await clock.advance(0);
    expect(runs).toBe(8);
    held.open();
    const outcomes = await Promise.all(calls);
    expect(summary(outcomes)).toEqual([
      "1:reflect",
      "2:reflect",
      "3:reflect",
      "4:exhausted",
      "5:exhausted",
      "6:exhausted",
      "7:exhausted",
      "8:exhausted",
    ]);
    // The model sees the true count in the structured error.
    expect(
      outcomes.map((outcome) => (outcome.status === "success" ? 0 : JSON.parse(outcome.message.split("\n\n").at(-1) ?? "{}").attempt)),
    ).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    expect(events.filter((event) => event.type === "retry").map((event) => event.fields.attempt)).toEqual([1, 2, 3]);

    const ninth = await plugin.execute({ toolName: "get_weather", args: { city: "NYC", units: "celsius" }, scope: "run-1" }, () => {
      runs++;
      return "22 °C";
    });
    expect(ninth.status === "failed" && ninth.reason).toBe("exhausted");
    expect(runs).toBe(8);
  });

  // Transient failures do not spend the model's corrections: the scope's stop comes with the give-up
  // time (here 3 s), and then it holds for every call of the scope. No retry budget: it would turn
  // most of these in-place retries away (retry-budget.test.ts looks at that).
  it("no in-place retry starts after a parallel call gave up (the give-up time) and spent the scope's budget", async () => {
    const clock = createFakeClock();
    const plugin = RetryReflectPlugin.create({ clock, maxRetries: 3, circuitBreakerThreshold: 100, giveUpMs: 3_000, retryBudget: false });
    const held = gate();
    const attemptsSeen: number[] = [];
    const runsAt: number[] = [];
    const calls = Array.from({ length: 8 }, () =>
      plugin.execute({ toolName: "list_orders", args: {}, scope: "run-1" }, async (_args, context) => {
        attemptsSeen.push(context.attempt);
        runsAt.push(clock.now());
        await held.promise;
        throw unavailable();
      }),
    );
    await clock.advance(0);
    held.open();
    await clock.runAll();
    const outcomes = await Promise.all(calls);
    // The 8 first attempts at 0, then in-place retries (one at a time: the row is full) until the
    // failure at 4 s, past the give-up time: it spent the budget; the retries due after it did not run.
    expect(runsAt).toEqual([0, 0, 0, 0, 0, 0, 0, 0, 500, 1_000, 2_000, 4_000]);
    expect(attemptsSeen).toEqual([1, 1, 1, 1, 1, 1, 1, 1, 9, 10, 11, 12]);
    expect(outcomes.every((outcome) => outcome.status === "failed" && outcome.reason === "exhausted")).toBe(true);
    // Every call reports the scope's count.
    expect(outcomes.map((outcome) => outcome.attempt)).toEqual([12, 12, 12, 12, 12, 12, 12, 12]);
    expect(clock.now()).toBe(6_000); // the last in-place wait ended, and found the budget spent
  });

  it("1,000 parallel failing calls in one scope: the budget holds exactly", async () => {
    for (const kind of ["invalid", "transient"] as const) {
      const clock = createFakeClock();
      // A transient row stops at the give-up time (3 s here); no retry budget (see above).
      const plugin = RetryReflectPlugin.create({
        clock,
        maxRetries: 3,
        circuitBreakerThreshold: 10_000,
        giveUpMs: 3_000,
        retryBudget: false,
      });
      const held = gate();
      let runs = 0;
      const calls = Array.from({ length: 1000 }, (_, index) =>
        plugin.execute({ toolName: "search", args: { q: index }, scope: "run-1" }, async () => {
          runs++;
          await held.promise;
          throw kind === "invalid" ? invalid() : unavailable();
        }),
      );
      await clock.advance(0);
      held.open();
      await clock.runAll();
      const outcomes = await Promise.all(calls);
      // Transient: the 1,000 first attempts, then in-place retries one at a time (the row is full)
      // until the failure past the give-up time (at 4 s): 500 ms, 1 s, 2 s and 4 s.
      const expectedRuns = kind === "invalid" ? 1000 : 1004;
      expect(runs).toBe(expectedRuns);
      if (kind === "invalid") {
        // Each failure took the next number; the first three were reflected, the rest exhausted.
        expect(outcomes.map((outcome) => outcome.attempt).sort((a, b) => a - b)).toEqual(
          Array.from({ length: 1000 }, (_, index) => index + 1),
        );
        expect(
          outcomes
            .filter((outcome) => outcome.status === "reflect")
            .map((outcome) => outcome.attempt)
            .sort(),
        ).toEqual([1, 2, 3]);
        expect(outcomes.filter((outcome) => outcome.status === "failed" && outcome.reason === "exhausted")).toHaveLength(997);
      } else {
        // Every call was stopped by the give-up (its own failure, or the budget it spent): the in-place retries due after it did not run.
        expect(outcomes.every((outcome) => outcome.status === "failed" && outcome.reason === "exhausted")).toBe(true);
        expect(Math.max(...outcomes.map((outcome) => outcome.attempt))).toBe(1004);
      }
      const after = await plugin.execute({ toolName: "search", args: { q: "x" }, scope: "run-1" }, () => {
        runs++;
        return [];
      });
      expect(after.status === "failed" && after.reason).toBe("exhausted");
      expect(after.attempt).toBe(expectedRuns);
      expect(runs).toBe(expectedRuns);
    }
  });

  it("a call waiting at the backoff gate does not run a tool exhausted while it waited", async () => {
    const clock = createFakeClock();
    const plugin = RetryReflectPlugin.create({ clock, maxRetries: 1, circuitBreakerThreshold: 100 });
    const slow = gate();
    let runs = 0;
    // Started before any failure: still running when the first failure sets the gate.
    const running = plugin.execute({ toolName: "t", args: { n: 0 }, scope: "s" }, async () => {
      runs++;
      await slow.promise;
      throw invalid();
    });
    await clock.advance(0);
    const first = await plugin.execute({ toolName: "t", args: { n: 1 }, scope: "s" }, () => {
      runs++;
      throw invalid();
    });
    expect(first.status).toBe("reflect");
    const waiting = plugin.execute({ toolName: "t", args: { n: 2 }, scope: "s" }, () => {
      runs++;
      return "ok";
    });
    await clock.advance(100);
    slow.open(); // the running call fails: attempt 2 > maxRetries 1, the budget is spent
    const second = await running;
    expect(second.status === "failed" && second.reason).toBe("exhausted");
    await clock.runAll();
    const third = await waiting;
    expect(third.status === "failed" && third.reason).toBe("exhausted");
    expect(runs).toBe(2);
  });

  it("a call waiting at the backoff gate is turned away when the circuit opened while it waited (its open time past the patience)", async () => {
    const clock = createFakeClock();
    // A 60 s open time, past the patience (the default, 1 s, would have the call wait for the probe).
    const plugin = RetryReflectPlugin.create({ clock, maxRetries: 3, circuitBreakerThreshold: 2, circuitBreakerResetMs: 60_000 });
    let runs = 0;
    await plugin.execute({ toolName: "t", args: {}, scope: "s" }, () => {
      runs++;
      throw new Error("upstream exploded");
    });
    const waiting = plugin.execute({ toolName: "t", args: {}, scope: "s" }, () => {
      runs++;
      return "ok";
    });
    await clock.advance(10);
    // Another run's failure opens the circuit.
    const other = await plugin.execute({ toolName: "t", args: {}, scope: "other" }, () => {
      runs++;
      throw new Error("upstream exploded");
    });
    expect(other).toMatchObject({ status: "reflect", error: { code: "TOOL_FAILED", retryAfterMs: 60_000 } });
    await clock.runAll();
    const outcome = await waiting;
    expect(outcome).toMatchObject({ status: "reflect", error: { code: "CIRCUIT_OPEN", recoverable: true, retryAfterMs: 59_510 } });
    expect(runs).toBe(2);
  });

  it("a success among parallel calls returns its value; a spent budget stays spent for the scope", async () => {
    const clock = createFakeClock();
    const plugin = RetryReflectPlugin.create({ clock, maxRetries: 1 });
    const held = gate();
    const calls = [0, 1, 2].map((index) =>
      plugin.execute({ toolName: "t", args: { index }, scope: "s" }, async () => {
        await held.promise;
        if (index === 2) return "ok";
        throw invalid();
      }),
    );
    await clock.advance(0);
    held.open();
    const outcomes = await Promise.all(calls);
    expect(summary(outcomes)).toEqual(["1:reflect", "2:exhausted", "1:success"]);
    const later = await plugin.execute({ toolName: "t", args: {}, scope: "s" }, () => "ok");
    expect(later.status === "failed" && later.reason).toBe("exhausted");
  });
});
