import { describe, expect, it } from "vitest";
import type { RetryReflectEvent } from "../src/events.js";
import { type ExecuteOutcome, type RetryReflectOptions, RetryReflectPlugin } from "../src/index.js";
import { createFakeClock } from "../src/testing.js";

// The breaker options through the plugin, at plugin level and per tool: the failure-rate breaker
// (`circuitBreakerFailureRate`, `circuitBreakerMinimumCalls`, `circuitBreakerWindowMs`), growing
// open periods (`circuitBreakerMaxResetMs`), a breaker of its own for a tool whose breaker
// settings differ, and `plugin.circuits` over all of them.

/** A promise and the function that resolves it: lets a test hold tools in flight. */
function gate(): { promise: Promise<void>; open: () => void } {
  let open!: () => void;
  const promise = new Promise<void>((resolve) => (open = resolve));
  return { promise, open };
}

/** Counted by the breaker, recoverable (reflected), never retried in place. */
const exploded = () => new Error("upstream exploded");

type Result = "ok" | "fail";

/**
 * A plugin whose calls that meet an open circuit are turned away at once (`waitForRecovery: false`),
 * told the circuit's remaining time: these tests read the breakers' states and open times (the wait
 * for recovery is tested in patience.test.ts). Open 60 s unless a test says otherwise (not the
 * default, 1 s): a circuit stays open while a test's clock moves on.
 */
function setup(options: RetryReflectOptions = {}) {
  const clock = createFakeClock();
  const events: RetryReflectEvent[] = [];
  const plugin = RetryReflectPlugin.create({
    clock,
    waitForRecovery: false,
    circuitBreakerResetMs: 60_000,
    observers: [{ onEvent: (event) => events.push(event) }],
    ...options,
  });
  let scopes = 0;
  let runs = 0;
  /** One call in a scope of its own (no budget nor gate in the way): the tool succeeds or fails. */
  const call = (toolName: string, result: Result, held?: Promise<void>) =>
    plugin.execute({ toolName, args: {}, scope: `run-${++scopes}` }, async () => {
      runs++;
      if (held !== undefined) await held;
      if (result === "fail") throw exploded();
      return "ok";
    });
  /** Calls in flight at once, each held until the faults are injected together. */
  const together = async (toolName: string, results: readonly Result[]) => {
    const held = gate();
    const calls = results.map((result) => call(toolName, result, held.promise));
    await clock.advance(0);
    held.open();
    return Promise.all(calls);
  };
  const opened = () => events.flatMap((event) => (event.type === "circuit_opened" ? [event.fields] : []));
  const rejections = () => events.flatMap((event) => (event.type === "call_rejected" ? [event.fields] : []));
  return { clock, plugin, events, call, together, opened, rejections, runs: () => runs };
}

const F: Result = "fail";
const S: Result = "ok";
const statusOf = (outcome: ExecuteOutcome<unknown>) => (outcome.status === "failed" ? outcome.reason : outcome.status);
/** The wait the model is told before it calls again (an open circuit's remaining time), if any. */
const retryAfterOf = (outcome: ExecuteOutcome<unknown>) => (outcome.status === "success" ? undefined : outcome.error.retryAfterMs);
/** A call turned away by the open circuit, without running: temporary, with the remaining time. */
const turnedAway = (outcome: ExecuteOutcome<unknown>) =>
  outcome.status === "reflect" && outcome.error.code === "CIRCUIT_OPEN" && outcome.error.recoverable;
const repeat = (result: Result, count: number): Result[] => Array.from({ length: count }, () => result);

describe("the failure-rate breaker through the plugin", () => {
  const rate = { circuitBreakerFailureRate: 0.5, circuitBreakerMinimumCalls: 4, circuitBreakerWindowMs: 10_000 } as const;

  it("does not open below the minimum calls, however many of them failed", async () => {
    const { plugin, together, opened, call } = setup(rate);
    const outcomes = await together("search", [F, F, F]);
    expect(outcomes.map(statusOf)).toEqual(["reflect", "reflect", "reflect"]);
    expect(plugin.circuits.state("search")).toBe("closed");
    expect(opened()).toEqual([]);
    // The fourth call brings the window to the minimum: 3 of 4 failed (0.75 ≥ 0.5), even a success opens it.
    expect(statusOf(await call("search", S))).toBe("success");
    expect(plugin.circuits.state("search")).toBe("open");
    expect(opened()).toEqual([{ tool_name: "search", failures: 3, reset_ms: 60_000 }]);
  });

  it("opens at the rate (2 of 4), not below it (1 of 4, 4 of 10); the consecutive count is not used", async () => {
    const below = setup({ ...rate, circuitBreakerThreshold: 2 });
    await below.together("search", [F, S, S, S]);
    // Four consecutive failures with a threshold of 2: the rate (4 of 10) decides, and it stays closed.
    await below.together("search", [S, S, F, F, F, S]);
    expect(below.plugin.circuits.state("search")).toBe("closed");
    expect(below.opened()).toEqual([]);

    const at = setup(rate);
    const outcomes = await at.together("search", [F, S, F, S]);
    expect(at.plugin.circuits.state("search")).toBe("open");
    expect(at.opened()).toEqual([{ tool_name: "search", failures: 2, reset_ms: 60_000 }]);
    // The failure recorded last was judged with the window full: it is told to call again after the open time (or it is a success).
    expect(outcomes.filter((outcome) => retryAfterOf(outcome) === 60_000).length).toBeLessThanOrEqual(1);
    const runs = at.runs();
    const rejected = await at.call("search", S);
    expect(turnedAway(rejected)).toBe(true);
    expect(retryAfterOf(rejected)).toBe(60_000);
    expect(at.runs()).toBe(runs);
    expect(at.rejections()).toEqual([{ tool_name: "search", retry_after_ms: 60_000 }]);
  });

  it("judges many calls in flight at once: 10 with 5 faults opens, 10 with 4 faults does not", async () => {
    const options = { circuitBreakerFailureRate: 0.5, circuitBreakerMinimumCalls: 10 };
    const half = setup(options);
    await half.together("search", [...repeat(F, 5), ...repeat(S, 5)]);
    expect(half.plugin.circuits.state("search")).toBe("open");
    expect(half.opened()).toEqual([{ tool_name: "search", failures: 5, reset_ms: 60_000 }]);

    const fewer = setup(options);
    await fewer.together("search", [...repeat(S, 3), ...repeat(F, 4), ...repeat(S, 3)]);
    expect(fewer.plugin.circuits.state("search")).toBe("closed");
    // Calls that end after it opened change nothing (100 in flight, the circuit opening midway).
    const many = setup(options);
    const outcomes = await many.together("search", repeat(F, 100));
    expect(many.opened()).toHaveLength(1);
    // The failures recorded after it opened are told of the open circuit: call again after its open time.
    expect(outcomes.filter((outcome) => outcome.status === "reflect" && retryAfterOf(outcome) === 60_000).length).toBeGreaterThanOrEqual(1);
    expect(many.plugin.circuits.state("search")).toBe("open");
  });

  it("slides: calls older than the window stop counting", async () => {
    const { clock, plugin, together } = setup(rate);
    await together("search", [F, F, F]);
    await clock.advance(10_000); // the three failures slide out
    await together("search", [F, S, S, S]);
    // 1 of 4 in the window (with the old failures it would be 4 of 7).
    expect(plugin.circuits.state("search")).toBe("closed");

    // Old successes stop diluting new failures too.
    const diluted = setup(rate);
    await diluted.together("search", repeat(S, 8));
    await diluted.clock.advance(5_000);
    await diluted.together("search", [F, F, F]);
    expect(diluted.plugin.circuits.state("search")).toBe("closed"); // 3 of 11
    await diluted.clock.advance(5_000); // the successes slide out
    await diluted.together("search", [F]);
    expect(diluted.plugin.circuits.state("search")).toBe("open"); // 4 of 4
  });

  it("per tool: a tool's rate settings are its own; other tools keep the plugin's consecutive count", async () => {
    const { plugin, together, call, opened } = setup({
      circuitBreakerThreshold: 3,
      tools: { flaky: { circuitBreakerFailureRate: 0.5, circuitBreakerMinimumCalls: 2, circuitBreakerWindowMs: 5_000 } },
    });
    // `flaky`: 1 of 2 opens it.
    await together("flaky", [F, S]);
    expect(plugin.circuits.state("flaky")).toBe("open");
    // `steady` (the plugin's threshold 3): one failure in two calls does not, nor two failures in a row; three do.
    await together("steady", [F, S]);
    await call("steady", F);
    await call("steady", S);
    await call("steady", F);
    await call("steady", F);
    expect(plugin.circuits.state("steady")).toBe("closed");
    await call("steady", F);
    expect(plugin.circuits.state("steady")).toBe("open");
    expect(opened().map((fields) => [fields.tool_name, fields.failures])).toEqual([
      ["flaky", 1],
      ["steady", 3],
    ]);
  });

  it("per tool: a plugin-level rate with a tool's own minimum and window", async () => {
    const { clock, plugin, together } = setup({
      circuitBreakerFailureRate: 0.5,
      circuitBreakerMinimumCalls: 10,
      tools: { quick: { circuitBreakerMinimumCalls: 2, circuitBreakerWindowMs: 1_000 } },
    });
    await together("quick", [F, F]);
    await together("slow", [F, F]);
    expect(plugin.circuits.state("quick")).toBe("open");
    expect(plugin.circuits.state("slow")).toBe("closed");
    // `quick`'s window is 1 s: a failure then a success a second later is 1 of 1 (no open, minimum 2) then 0 of 1.
    const other = setup({
      circuitBreakerFailureRate: 0.5,
      tools: { quick: { circuitBreakerMinimumCalls: 2, circuitBreakerWindowMs: 1_000 } },
    });
    await other.together("quick", [F]);
    await other.clock.advance(1_000);
    await other.together("quick", [S]);
    expect(other.plugin.circuits.state("quick")).toBe("closed");
    await clock.advance(0);
  });
});

describe("growing open periods (circuitBreakerMaxResetMs) through the plugin", () => {
  it("each re-open after a failed probe doubles the open time, up to the max; a successful probe starts again", async () => {
    const { clock, call, rejections, opened } = setup({
      circuitBreakerThreshold: 1,
      circuitBreakerResetMs: 1_000,
      circuitBreakerMaxResetMs: 5_000,
    });
    const opening = await call("pay", F);
    expect(opening.status).toBe("reflect");
    expect(retryAfterOf(opening)).toBe(1_000);
    const waits: Array<number | undefined> = [];
    const rejected: Array<number | undefined> = [];
    let openMs = 1_000;
    for (let probe = 0; probe < 4; probe++) {
      // While open: rejected with the remaining time.
      const early = await call("pay", S);
      expect(turnedAway(early)).toBe(true);
      rejected.push(retryAfterOf(early));
      await clock.advance(openMs);
      // The probe fails: open again, for longer.
      const failedProbe = await call("pay", F);
      const wait = retryAfterOf(failedProbe);
      waits.push(wait);
      openMs = wait ?? 0;
    }
    expect(rejected).toEqual([1_000, 2_000, 4_000, 5_000]);
    expect(waits).toEqual([2_000, 4_000, 5_000, 5_000]);
    expect(rejections().map((fields) => fields.retry_after_ms)).toEqual([1_000, 2_000, 4_000, 5_000]);
    expect(opened().map((fields) => fields.reset_ms)).toEqual([1_000, 2_000, 4_000, 5_000, 5_000]);
    // A successful probe closes it; the next open period is resetMs again.
    await clock.advance(5_000);
    expect((await call("pay", S)).status).toBe("success");
    const again = await call("pay", F);
    expect(retryAfterOf(again)).toBe(1_000);
  });

  it("per tool: only the tool with circuitBreakerMaxResetMs grows its open periods", async () => {
    const { clock, call } = setup({
      circuitBreakerThreshold: 1,
      circuitBreakerResetMs: 1_000,
      tools: { growing: { circuitBreakerMaxResetMs: 8_000 } },
    });
    const waitsOf = async (toolName: string) => {
      const waits: Array<number | undefined> = [];
      const first = await call(toolName, F);
      let openMs = retryAfterOf(first) ?? 0;
      waits.push(openMs);
      for (let probe = 0; probe < 4; probe++) {
        await clock.advance(openMs);
        const outcome = await call(toolName, F);
        openMs = retryAfterOf(outcome) ?? 0;
        waits.push(openMs);
      }
      return waits;
    };
    expect(await waitsOf("growing")).toEqual([1_000, 2_000, 4_000, 8_000, 8_000]);
    expect(await waitsOf("fixed")).toEqual([1_000, 1_000, 1_000, 1_000, 1_000]);
  });

  it("one probe at a time while half-open, whatever is in flight; the others are rejected", async () => {
    const { clock, plugin, call } = setup({ circuitBreakerThreshold: 1, circuitBreakerResetMs: 1_000, circuitBreakerMaxResetMs: 4_000 });
    await call("pay", F);
    await clock.advance(1_000);
    const held = gate();
    const calls = Array.from({ length: 10 }, () => call("pay", F, held.promise));
    await clock.advance(0);
    held.open();
    const outcomes = await Promise.all(calls);
    // The probe's own outcome carries the doubled time; the rest were turned away without running.
    expect(outcomes.filter(turnedAway)).toHaveLength(9);
    expect(outcomes.map(retryAfterOf).sort()).toEqual([1_000, 1_000, 1_000, 1_000, 1_000, 1_000, 1_000, 1_000, 1_000, 2_000]);
    expect(plugin.circuits.state("pay")).toBe("open");
  });
});

describe("a tool with breaker settings of its own has its own breaker", () => {
  it("under a circuitBreakerKey, a tool's policy without breaker settings shares the plugin's circuit; one with breaker settings fails at build", async () => {
    const { call } = setup({
      circuitBreakerThreshold: 2,
      circuitBreakerKey: () => "backend",
      tools: { tuned: { maxRetries: 5 } },
    });
    // `plain` and `tuned` (a policy, but no breaker settings of its own) share the plugin's "backend" circuit.
    await call("plain", F);
    const second = await call("tuned", F);
    expect(retryAfterOf(second)).toBe(60_000); // it opened the shared circuit
    const plainRejected = await call("plain", S);
    expect(turnedAway(plainRejected)).toBe(true);
    // A tool's own breaker is found by its name, and the keys of circuitBreakerKey are not tool names.
    expect(() =>
      RetryReflectPlugin.create({ circuitBreakerKey: () => "backend", tools: { solo: { circuitBreakerThreshold: 1 } } }),
    ).toThrow(/tools\.solo\.circuitBreakerThreshold.*circuitBreakerKey.*received 1/);
    expect(() =>
      RetryReflectPlugin.create({ circuitBreakerKey: () => "backend", tools: { solo: { circuitBreakerFailureRate: 0.5 } } }),
    ).toThrow(/tools\.solo\.circuitBreakerFailureRate/);
    // The same value as the plugin's is no setting of its own.
    expect(() =>
      RetryReflectPlugin.create({
        circuitBreakerKey: () => "backend",
        circuitBreakerThreshold: 2,
        tools: { solo: { circuitBreakerThreshold: 2 } },
      }),
    ).not.toThrow();
  });

  it("keeps states apart per tool name; plugin.circuits reports, isolates, resets, snapshots and restores all of them", async () => {
    const options = {
      circuitBreakerThreshold: 2,
      circuitBreakerResetMs: 10_000,
      tools: {
        rated: { circuitBreakerFailureRate: 0.5, circuitBreakerMinimumCalls: 2 },
        growing: { circuitBreakerThreshold: 1, circuitBreakerMaxResetMs: 40_000 },
      },
    };
    const { clock, plugin, call, together } = setup(options);
    await call("growing", F);
    await clock.advance(10_000);
    await call("growing", F); // failed probe: open for 20 s
    await together("rated", [F, S]);
    await call("plain", F); // one failure of two
    expect([plugin.circuits.state("rated"), plugin.circuits.state("growing"), plugin.circuits.state("plain")]).toEqual([
      "open",
      "open",
      "closed",
    ]);
    expect(plugin.circuits.size).toBe(3);

    const snapshot = plugin.circuits.snapshot();
    expect(Object.keys(snapshot.breakers).sort()).toEqual(["growing", "plain", "rated"]);
    expect(snapshot.breakers.growing).toMatchObject({ state: "open", openMs: 20_000 });

    // Restored into another plugin with the same options: each key goes to its tool's breaker.
    const restored = setup(options);
    restored.plugin.circuits.restore(JSON.parse(JSON.stringify(snapshot)));
    expect(restored.plugin.circuits.snapshot()).toEqual(snapshot);
    const stillOpen = await restored.call("growing", S);
    expect(turnedAway(stillOpen) && retryAfterOf(stillOpen)).toBe(20_000);
    expect(turnedAway(await restored.call("rated", S))).toBe(true);
    // `plain` had one failure: one more opens it (threshold 2).
    const plainOpened = await restored.call("plain", F);
    expect(retryAfterOf(plainOpened)).toBe(10_000);
    expect(restored.plugin.circuits.state("plain")).toBe("open");
    // The growth goes on from the restored period: the next failed probe opens for 40 s.
    await restored.clock.advance(20_000);
    const probe = await restored.call("growing", F);
    expect(retryAfterOf(probe)).toBe(40_000);

    // Isolate and reset reach the tool's own breaker.
    plugin.circuits.reset("rated");
    expect(plugin.circuits.state("rated")).toBe("closed");
    expect((await call("rated", S)).status).toBe("success");
    plugin.circuits.isolate("rated");
    expect(plugin.circuits.isIsolated("rated")).toBe(true);
    const isolated = await call("rated", S);
    expect(isolated.status === "failed" && isolated.error.details?.isolated).toBe(true);
    expect((await call("other", S)).status).toBe("success");
    plugin.circuits.reset();
    expect([plugin.circuits.state("rated"), plugin.circuits.state("growing"), plugin.circuits.state("plain")]).toEqual([
      "closed",
      "closed",
      "closed",
    ]);
  });
});
