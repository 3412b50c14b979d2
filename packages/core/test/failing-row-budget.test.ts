import { getEventListeners } from "node:events";
import { describe, expect, it } from "vitest";
import { type ExecuteOutcome, type RetryReflectOptions, RetryReflectPlugin } from "../src/index.js";
import { createFakeClock } from "../src/testing.js";

// A failing row reserves its budget (issue 22): while a tool has failed in a scope since its last
// success, a call starts only while the row's failures plus the attempts in flight stay below
// `maxRetries + 1`; the others wait for an in-flight attempt to settle. A success ends the row (the
// waiting calls run), a failure that spends the budget ends them `exhausted` without running. A
// tool with no failing row runs its calls in parallel without limit.

const invalid = () => new Error("Invalid input: city must be a city name");
const unavailable = () => Object.assign(new Error("HTTP 503 Service Unavailable"), { status: 503 });

type Result = "ok" | "invalid" | "unavailable";

/** A tool whose runs are held until the test settles them, oldest first; it counts its runs. */
function heldTool() {
  const pending: ((result: Result) => void)[] = [];
  let runs = 0;
  let running = 0;
  let mostRunning = 0;
  const fn = async () => {
    runs++;
    running++;
    mostRunning = Math.max(mostRunning, running);
    try {
      const result = await new Promise<Result>((resolve) => pending.push(resolve));
      if (result === "ok") return "ok";
      throw result === "invalid" ? invalid() : unavailable();
    } finally {
      running--;
    }
  };
  return {
    fn,
    runs: () => runs,
    running: () => running,
    mostRunning: () => mostRunning,
    settleOldest(result: Result) {
      const settle = pending.shift();
      if (settle === undefined) throw new Error("no run is held");
      settle(result);
    },
  };
}

/** A plugin whose tool `geocode` has a failing row of one reflected failure in scope `s`; its gate opens at 100 ms. */
async function failingRow(maxRetries: number, options: RetryReflectOptions = {}) {
  const clock = createFakeClock();
  const plugin = RetryReflectPlugin.create({ clock, maxRetries, initialBackoffMs: 100, circuitBreakerThreshold: 10_000, ...options });
  const first = await plugin.execute({ toolName: "geocode", args: { city: "Nwe Yrok" }, scope: "s" }, () => {
    throw invalid();
  });
  expect(first).toMatchObject({ status: "reflect", attempt: 1 });
  return { clock, plugin };
}

function isExhausted(outcome: ExecuteOutcome<unknown>): boolean {
  return outcome.status === "failed" && outcome.reason === "exhausted" && outcome.error.code === "RETRIES_EXHAUSTED";
}

describe("a failing row reserves its budget", () => {
  it("two corrected calls released from the gate together: maxRetries 1 runs the tool twice in the row, not three times", async () => {
    const { clock, plugin } = await failingRow(1);
    const tool = heldTool();
    const corrected = [0, 1].map((index) =>
      plugin.execute({ toolName: "geocode", args: { city: "New York", index }, scope: "s" }, tool.fn),
    );
    await clock.advance(100); // the gate opens for both at once
    expect(tool.runs()).toBe(1); // 1 failure used + 1 in flight = maxRetries + 1: the other call waits
    tool.settleOldest("invalid"); // the second failure of the row spends the budget
    const outcomes = await Promise.all(corrected);
    expect(outcomes.every(isExhausted)).toBe(true);
    expect(tool.runs()).toBe(1); // the waiting call ended without running: 2 runs in the row in all
  });

  for (const maxRetries of [1, 3]) {
    for (const count of [8, 200]) {
      it(`${count} corrected calls released at once with maxRetries ${maxRetries}: never more than ${maxRetries + 1} runs in the row, the rest exhausted without running`, async () => {
        const { clock, plugin } = await failingRow(maxRetries);
        const tool = heldTool();
        const calls = Array.from({ length: count }, (_, index) =>
          plugin.execute({ toolName: "geocode", args: { city: "New York", index }, scope: "s" }, tool.fn),
        );
        await clock.advance(100);
        expect(tool.running()).toBe(maxRetries); // the row's 1 failure + maxRetries in flight
        // Each failure moves an attempt from in flight to used: the row stays full, nobody else starts.
        for (let settled = 0; settled < maxRetries; settled++) {
          tool.settleOldest("invalid");
          await clock.runAll();
          expect(tool.runs()).toBe(maxRetries);
        }
        const outcomes = await Promise.all(calls);
        expect(1 + tool.runs()).toBe(maxRetries + 1);
        expect(tool.mostRunning()).toBe(maxRetries);
        // The failures took attempts 2..maxRetries+1: all but the last reflected, the last spent the budget.
        expect(outcomes.filter((outcome) => outcome.status === "reflect")).toHaveLength(maxRetries - 1);
        expect(outcomes.filter(isExhausted)).toHaveLength(count - maxRetries + 1);

        // The reset still ends the stop: then the row starts afresh and the calls run in parallel again.
        await clock.advance(60_000);
        const healed = heldTool();
        const again = Array.from({ length: count }, (_, index) =>
          plugin.execute({ toolName: "geocode", args: { city: "New York", index }, scope: "s" }, healed.fn),
        );
        await clock.advance(0);
        expect(healed.running()).toBe(count);
        for (let index = 0; index < count; index++) healed.settleOldest("ok");
        expect((await Promise.all(again)).every((outcome) => outcome.status === "success")).toBe(true);
      });
    }
  }

  // Transient failures do not spend the model's corrections (`maxRetries`), but they are failures
  // of the row: once it is full, its calls' attempts (first ones and in-place retries) go one at a
  // time, and none is stopped by their count. (No retry budget: it would turn the in-place retries
  // of this one scope away, which retry-budget.test.ts looks at.)
  it("in-place retries of transient failures take their places in the row too: once it is full, one attempt at a time, none exhausted", async () => {
    const { clock, plugin } = await failingRow(3, { retryBudget: false });
    const tool = heldTool();
    const calls = Array.from({ length: 8 }, (_, index) =>
      plugin.execute({ toolName: "geocode", args: { city: "New York", index }, scope: "s" }, tool.fn),
    );
    await clock.advance(100);
    expect(tool.running()).toBe(3);
    // Each attempt fails transiently: from the row's 4th failure (maxRetries + 1) on, one attempt runs at a time.
    const runningAfter: number[] = [];
    for (let failure = 0; failure < 8; failure++) {
      tool.settleOldest("unavailable");
      await clock.advance(0);
      runningAfter.push(tool.running());
    }
    expect(runningAfter).toEqual([2, 1, 1, 1, 1, 1, 1, 0]);
    expect(tool.runs()).toBe(8); // every call has run once; each now waits to retry in place
    // The tool is back: every call's next attempt succeeds (no call was stopped by the count).
    const outcomes: ExecuteOutcome<unknown>[] = [];
    void Promise.all(calls).then((all) => outcomes.push(...all));
    for (let step = 0; step < 1_000 && outcomes.length === 0; step++) {
      if (tool.running() > 0) {
        tool.settleOldest("ok");
        await clock.advance(0);
      } else await clock.advance(100);
    }
    expect(outcomes.map((outcome) => outcome.status)).toEqual(Array(8).fill("success"));
    expect(tool.runs()).toBe(16);
    expect(tool.mostRunning()).toBe(3);
  });

  it("a success among the calls in flight ends the row: the waiting calls run, all at once", async () => {
    const { clock, plugin } = await failingRow(3);
    const tool = heldTool();
    const calls = Array.from({ length: 8 }, (_, index) =>
      plugin.execute({ toolName: "geocode", args: { city: "New York", index }, scope: "s" }, tool.fn),
    );
    await clock.advance(100);
    expect(tool.running()).toBe(3);
    tool.settleOldest("invalid"); // attempt 2: reflected; the row is still full (2 used + 2 in flight)
    await clock.runAll();
    expect(tool.runs()).toBe(3);
    tool.settleOldest("ok"); // the row ends
    await clock.advance(0);
    expect(tool.runs()).toBe(8); // the 5 waiting calls started together (no row, no limit)
    expect(tool.running()).toBe(6);
    for (let index = 0; index < 6; index++) tool.settleOldest("ok");
    const outcomes = await Promise.all(calls);
    expect(outcomes.map((outcome) => outcome.status)).toEqual([
      "reflect",
      "success",
      "success",
      "success",
      "success",
      "success",
      "success",
      "success",
    ]);
  });

  it("an aborted waiter rejects with its signal's reason, without running; no listener or timer is left", async () => {
    const { clock, plugin } = await failingRow(1);
    const tool = heldTool();
    const [running, waiting, woken] = [new AbortController(), new AbortController(), new AbortController()];
    const calls = [running, waiting, woken].map((controller, index) =>
      plugin.execute({ toolName: "geocode", args: { city: "New York", index }, scope: "s", signal: controller.signal }, tool.fn),
    );
    await clock.advance(100);
    expect(tool.runs()).toBe(1);
    expect(clock.pendingSleeps()).toBe(0); // waiting for room is no timer
    expect(getEventListeners(waiting.signal, "abort")).toHaveLength(1);
    const reason = new Error("user cancelled");
    waiting.abort(reason);
    await expect(calls[1]).rejects.toBe(reason);
    expect(getEventListeners(waiting.signal, "abort")).toHaveLength(0);
    expect(tool.runs()).toBe(1);
    // The other waiter still waits, and ends exhausted when the call in flight spends the budget.
    tool.settleOldest("invalid");
    expect(isExhausted(await (calls[0] as Promise<ExecuteOutcome<unknown>>))).toBe(true);
    expect(isExhausted(await (calls[2] as Promise<ExecuteOutcome<unknown>>))).toBe(true);
    expect(tool.runs()).toBe(1);
    for (const controller of [running, woken]) expect(getEventListeners(controller.signal, "abort")).toHaveLength(0);
  });

  it("resetScope while calls wait for room: the row is forgotten and they run", async () => {
    const { clock, plugin } = await failingRow(1);
    const tool = heldTool();
    const calls = Array.from({ length: 4 }, (_, index) =>
      plugin.execute({ toolName: "geocode", args: { city: "New York", index }, scope: "s" }, tool.fn),
    );
    await clock.advance(100);
    expect(tool.runs()).toBe(1);
    plugin.resetScope("s");
    await clock.advance(0);
    expect(tool.running()).toBe(4);
    for (let index = 0; index < 4; index++) tool.settleOldest("ok");
    expect((await Promise.all(calls)).every((outcome) => outcome.status === "success")).toBe(true);
  });

  it("calls of a tool with no failing row run all in parallel, also while the tool waits in another scope's row", async () => {
    const clock = createFakeClock();
    const plugin = RetryReflectPlugin.create({ clock, maxRetries: 1, initialBackoffMs: 100, circuitBreakerThreshold: 10_000 });
    const healthy = heldTool();
    const first = Array.from({ length: 500 }, (_, index) =>
      plugin.execute({ toolName: "geocode", args: { index }, scope: `run-${index % 5}` }, healthy.fn),
    );
    await clock.advance(0);
    expect(healthy.running()).toBe(500);
    for (let index = 0; index < 500; index++) healthy.settleOldest("ok");
    expect((await Promise.all(first)).every((outcome) => outcome.status === "success")).toBe(true);

    // Scope "a" gets a failing row: its corrected calls wait for room; scope "b" has none.
    expect(
      (
        await plugin.execute({ toolName: "geocode", args: {}, scope: "a" }, () => {
          throw invalid();
        })
      ).status,
    ).toBe("reflect");
    const inRow = heldTool();
    const rowCalls = Array.from({ length: 8 }, (_, index) =>
      plugin.execute({ toolName: "geocode", args: { index }, scope: "a" }, inRow.fn),
    );
    const elsewhere = heldTool();
    const otherCalls = Array.from({ length: 500 }, (_, index) =>
      plugin.execute({ toolName: "geocode", args: { index }, scope: "b" }, elsewhere.fn),
    );
    await clock.advance(100);
    expect(inRow.running()).toBe(1);
    expect(elsewhere.running()).toBe(500);
    for (let index = 0; index < 500; index++) elsewhere.settleOldest("ok");
    expect((await Promise.all(otherCalls)).every((outcome) => outcome.status === "success")).toBe(true);
    inRow.settleOldest("ok");
    await clock.advance(0);
    expect(inRow.running()).toBe(7);
    for (let index = 0; index < 7; index++) inRow.settleOldest("ok");
    expect((await Promise.all(rowCalls)).every((outcome) => outcome.status === "success")).toBe(true);
  });
});
