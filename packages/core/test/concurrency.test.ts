import { describe, expect, it } from "vitest";
import { type ExecuteOutcome, type RetryReflectEvent, RetryReflectPlugin } from "../src/index.js";
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

  it("no in-place retry starts after the budget is spent by parallel transient failures", async () => {
    const clock = createFakeClock();
    const plugin = RetryReflectPlugin.create({ clock, maxRetries: 3, circuitBreakerThreshold: 100 });
    const held = gate();
    const attemptsSeen: number[] = [];
    const calls = Array.from({ length: 8 }, () =>
      plugin.execute({ toolName: "list_orders", args: {}, scope: "run-1" }, async (_args, context) => {
        attemptsSeen.push(context.attempt);
        await held.promise;
        throw unavailable();
      }),
    );
    await clock.advance(0);
    held.open();
    await clock.runAll();
    const outcomes = await Promise.all(calls);
    // Every tool run happened before the budget was spent; the three in-place retries found it spent.
    expect(attemptsSeen).toHaveLength(8);
    expect(outcomes.every((outcome) => outcome.status === "failed" && outcome.reason === "exhausted")).toBe(true);
    // Failures 4..8 spent the budget; the three calls that were to retry in place report the scope's count.
    expect(outcomes.map((outcome) => outcome.attempt).sort()).toEqual([4, 5, 6, 7, 8, 8, 8, 8]);
    expect(clock.sleeps).toEqual([500, 1000, 2000]);
  });

  it("1,000 parallel failing calls in one scope: the budget holds exactly", async () => {
    for (const kind of ["invalid", "transient"] as const) {
      const clock = createFakeClock();
      const plugin = RetryReflectPlugin.create({ clock, maxRetries: 3, circuitBreakerThreshold: 10_000 });
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
      expect(runs).toBe(1000);
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
        // The three in-place retries waited, found the budget spent, and did not run.
        expect(clock.sleeps).toEqual([500, 1000, 2000]);
        expect(outcomes.every((outcome) => outcome.status === "failed" && outcome.reason === "exhausted")).toBe(true);
        expect(Math.max(...outcomes.map((outcome) => outcome.attempt))).toBe(1000);
      }
      const after = await plugin.execute({ toolName: "search", args: { q: "x" }, scope: "run-1" }, () => {
        runs++;
        return [];
      });
      expect(after.status === "failed" && after.reason).toBe("exhausted");
      expect(after.attempt).toBe(1000);
      expect(runs).toBe(1000);
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

  it("a call waiting at the backoff gate is rejected when the circuit opened while it waited", async () => {
    const clock = createFakeClock();
    const plugin = RetryReflectPlugin.create({ clock, maxRetries: 3, circuitBreakerThreshold: 2 });
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
    expect(other.status === "failed" && other.reason).toBe("circuit_open");
    await clock.runAll();
    const outcome = await waiting;
    expect(outcome.status === "failed" && outcome.reason).toBe("circuit_open");
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
