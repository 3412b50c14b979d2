import { describe, expect, it } from "vitest";
import { type ExecuteOutcome, RetryReflectPlugin } from "../src/index.js";
import { createFakeClock, drive, type FakeClock, recordEvents } from "../src/testing.js";

// Part 4, "Agents finish when tools come back": a transient failure is retried in place while the
// next attempt starts within the call's patience; past it the model is told the tool is
// temporarily unavailable, with the wait the library keeps for its next call; the definitive stop
// comes only once the tool has kept failing for the give-up time in the scope. The defaults here:
// patienceMs 15 s, giveUpMs 20 s, backoff 0.5, 1, 2, 4, 4 … s (maxBackoffMs 4 s).

/** A tool that takes 300 ms and fails with 503 until `until` on the clock, then answers; `runs`: when each execution started. */
function downUntil(clock: FakeClock, until: number) {
  const runs: number[] = [];
  const tool = async () => {
    runs.push(clock.now());
    await clock.sleep(300);
    if (clock.now() < until) throw Object.assign(new Error("503 Service Unavailable"), { status: 503 });
    return "sunny";
  };
  return { tool, runs };
}

/** Runs the clock until `outcome` settles (every sleep in between fires, one after another), and returns it. */
const settle = <T>(clock: FakeClock, outcome: Promise<T>): Promise<T> => drive(clock, outcome);

const jsonOf = (outcome: ExecuteOutcome<unknown>): Record<string, unknown> =>
  outcome.status === "success" ? {} : JSON.parse(outcome.message.slice(outcome.message.lastIndexOf("\n\n") + 2));
const STOP = /\b(?:do not|don't)\b[^.\n]*\bagain\b/i;

describe("patience: in place while the next attempt starts within patienceMs of the call's start", () => {
  it("a 12 s outage is waited out in place: one call, no model round trip", async () => {
    const clock = createFakeClock();
    const plugin = RetryReflectPlugin.create({ clock });
    const { tool, runs } = downUntil(clock, 12_000);
    const outcome = await settle(clock, plugin.execute({ toolName: "get_weather", args: {}, scope: "run" }, tool));
    expect(outcome).toMatchObject({ status: "success", value: "sunny" });
    // 300 ms each, then 0.5, 1, 2, 4 and 4 s apart: the sixth attempt, at 13 s, lands after the outage.
    expect(runs).toEqual([0, 800, 2_100, 4_400, 8_700, 13_000]);
  });

  it("past the patience, the model is told the tool is temporarily unavailable, with the wait the library then keeps", async () => {
    const clock = createFakeClock();
    const events = recordEvents();
    const plugin = RetryReflectPlugin.create({ clock, observers: [events] });
    const { tool, runs } = downUntil(clock, 18_000);
    const first = await settle(clock, plugin.execute({ toolName: "get_weather", args: {}, scope: "run" }, tool));
    expect(first.status).toBe("reflect");
    if (first.status !== "reflect") return;
    expect(clock.now()).toBe(13_300); // the next attempt, 4 s later, would start past 15 s
    expect(first.error.recoverable).toBe(true);
    expect(first.prompt).toMatch(/temporarily unavailable/);
    expect(first.prompt).toMatch(/about 4 s/);
    expect(first.prompt).not.toMatch(STOP);
    expect(jsonOf(first)).toMatchObject({ error_code: "TRANSIENT", recoverable: true, retry_after_ms: 4_000 });
    // The model's next call comes 1.5 s later: the gate holds it until the wait it was told.
    await clock.advance(1_500);
    const second = plugin.execute({ toolName: "get_weather", args: {}, scope: "run" }, tool);
    await clock.advance(2_499);
    expect(runs.at(-1)).toBe(13_000);
    const outcome = await settle(clock, second);
    expect(runs).toContain(17_300); // at the wait told, not later
    expect(outcome).toMatchObject({ status: "success", value: "sunny" });
    expect(events.types()).toContain("waiting_before_retry");
  });

  it("a tool that never comes back: temporary first, then the definitive stop once it has failed for the give-up time", async () => {
    const clock = createFakeClock();
    const plugin = RetryReflectPlugin.create({ clock });
    const { tool, runs } = downUntil(clock, Number.POSITIVE_INFINITY);
    const first = await settle(clock, plugin.execute({ toolName: "get_weather", args: {}, scope: "run" }, tool));
    expect(first.status).toBe("reflect");
    await clock.advance(1_500);
    const second = await settle(clock, plugin.execute({ toolName: "get_weather", args: {}, scope: "run" }, tool));
    expect(second.status).toBe("failed");
    if (second.status !== "failed") return;
    expect(second.reason).toBe("exhausted");
    expect(second.message).toMatch(STOP);
    expect(second.error.code).toBe("RETRIES_EXHAUSTED");
    expect(clock.now()).toBeGreaterThanOrEqual(20_000); // the first failure at 0: failing for 20 s
    expect(clock.now()).toBeLessThanOrEqual(24_000);
    // Stopped in the scope: a third call is refused without running, for exhaustedResetMs.
    const runsBefore = runs.length;
    const third = await plugin.execute({ toolName: "get_weather", args: {}, scope: "run" }, tool);
    expect(third.status === "failed" && third.reason).toBe("exhausted");
    expect(runs.length).toBe(runsBefore);
    // Another run (scope) is not stopped: its own row.
    const other = await settle(clock, plugin.execute({ toolName: "get_weather", args: {}, scope: "other-run" }, tool));
    expect(other.status).toBe("reflect");
  });

  it.each([
    ["succeeds in another scope meanwhile (overloaded, not down): told as temporary", true, "reflect"],
    ["succeeds nowhere: the definitive stop", false, "failed"],
  ])("a scope whose calls keep failing past the give-up time, while the tool %s", async (_name, luckyCall, status) => {
    const clock = createFakeClock();
    const plugin = RetryReflectPlugin.create({ clock, retryBudget: false });
    const unlucky = downUntil(clock, Number.POSITIVE_INFINITY).tool;
    const first = await settle(clock, plugin.execute({ toolName: "search", args: {}, scope: "unlucky" }, unlucky));
    expect(first.status).toBe("reflect");
    // Another run's call gets through: the tool answers some calls.
    if (luckyCall)
      await settle(
        clock,
        plugin.execute({ toolName: "search", args: {}, scope: "lucky" }, () => "results"),
      );
    await clock.advance(1_500);
    const second = await settle(clock, plugin.execute({ toolName: "search", args: {}, scope: "unlucky" }, unlucky));
    expect(clock.now()).toBeGreaterThan(20_000); // failing for longer than giveUpMs
    expect(second.status).toBe(status);
    expect(second.status !== "success" && second.message).toMatch(luckyCall ? /temporarily unavailable/ : STOP);
  });

  it("only the definitive stops say not to call again", async () => {
    const clock = createFakeClock();
    const plugin = RetryReflectPlugin.create({ clock, maxRetries: 1 });
    const temporary = await settle(clock, plugin.execute({ toolName: "a", args: {}, scope: "s" }, downUntil(clock, 1e12).tool));
    const corrected = await plugin.execute({ toolName: "b", args: {}, scope: "s" }, () => {
      throw new TypeError("units: expected one of celsius, fahrenheit; received kelvin");
    });
    expect(temporary.status === "reflect" && temporary.message).not.toMatch(STOP);
    expect(corrected.status === "reflect" && corrected.message).not.toMatch(STOP);
    await clock.advance(1_000);
    const spent = await plugin.execute({ toolName: "b", args: {}, scope: "s" }, () => {
      throw new TypeError("units: expected one of celsius, fahrenheit; received kelvin");
    });
    expect(spent.status === "failed" && spent.message).toMatch(STOP);
  });

  it("patienceMs and giveUpMs are per tool, and checked", () => {
    expect(() => RetryReflectPlugin.create({ patienceMs: -1 })).toThrow(/patienceMs/);
    expect(() => RetryReflectPlugin.create({ tools: { a: { giveUpMs: Number.NaN } } })).toThrow(/tools\.a\.giveUpMs/);
    expect(() => RetryReflectPlugin.create({ waitForRecovery: "yes" as never })).toThrow(/waitForRecovery/);
    const plugin = RetryReflectPlugin.create({ tools: { slow: { patienceMs: 60_000 } } });
    expect(plugin.options.tools.get("slow")?.patienceMs).toBe(60_000);
    expect(plugin.options.policy.patienceMs).toBe(15_000);
  });
});

describe("waiting for recovery at an open circuit", () => {
  function broken(clock: FakeClock) {
    let upAt = Number.POSITIVE_INFINITY;
    let runs = 0;
    const tool = () => {
      runs++;
      if (clock.now() < upAt) throw Object.assign(new Error("503 Service Unavailable"), { status: 503 });
      return "ok";
    };
    return {
      tool,
      runs: () => runs,
      comesBackAt: (at: number) => {
        upAt = at;
      },
    };
  }

  /**
   * A plugin whose circuit of `t` opens at once (threshold 1) for `resetMs`, the tool failing: the
   * failing call is of `opener`, a tool with no patience sharing `t`'s circuit (`circuitBreakerKey`).
   */
  async function openCircuit(resetMs: number, options = {}) {
    const clock = createFakeClock();
    const events = recordEvents();
    const plugin = RetryReflectPlugin.create({
      clock,
      circuitBreakerThreshold: 1,
      circuitBreakerResetMs: resetMs,
      circuitBreakerKey: () => "t",
      observers: [events],
      ...options,
      tools: { opener: { maxRetries: 0, patienceMs: 0 } },
    });
    const service = broken(clock);
    await settle(clock, plugin.execute({ toolName: "opener", args: {}, scope: "opener" }, service.tool));
    expect(plugin.circuitState("t")).toBe("open");
    return { clock, plugin, service, events };
  }

  it("a call that meets an open circuit due to close within its patience waits, is the probe, and runs when the tool is back", async () => {
    const { clock, plugin, service, events } = await openCircuit(5_000, { patienceMs: 15_000 });
    service.comesBackAt(5_000);
    const call = plugin.execute({ toolName: "t", args: {}, scope: "run" }, service.tool);
    const outcome = await settle(clock, call);
    expect(outcome).toMatchObject({ status: "success", value: "ok" });
    expect(clock.now()).toBe(5_000);
    expect(plugin.circuitState("t")).toBe("closed");
    expect(events.events.find((event) => event.type === "waiting_for_recovery")?.fields).toEqual({ tool_name: "t", wait_ms: 5_000 });
    expect(events.lines()).toContain('INFO waiting for recovery tool_name="t" wait_ms=5000');
  });

  it("calls waiting on one probe: all run when it succeeds, the tool called once meanwhile", async () => {
    const { clock, plugin, service } = await openCircuit(5_000, { patienceMs: 15_000 });
    let releaseProbe!: () => void;
    const probeGate = new Promise<void>((resolve) => (releaseProbe = resolve));
    service.comesBackAt(0);
    const runsBefore = service.runs();
    const slowFirst = async () => {
      if (service.runs() === runsBefore) {
        await probeGate;
      }
      return service.tool();
    };
    const calls = Array.from({ length: 5 }, (_, index) => plugin.execute({ toolName: "t", args: {}, scope: `run-${index}` }, slowFirst));
    await clock.advance(5_000); // the circuit lets its probe through: one of them
    await clock.advance(2_000);
    expect(service.runs()).toBe(runsBefore); // the probe is held; the others wait for it
    releaseProbe();
    const outcomes = await Promise.all(calls.map((call) => settle(clock, call)));
    expect(outcomes.map((outcome) => outcome.status)).toEqual(["success", "success", "success", "success", "success"]);
  });

  it("when the probe fails, the calls waiting for it are told the tool is temporarily unavailable", async () => {
    const { clock, plugin, service } = await openCircuit(5_000, { patienceMs: 8_000 });
    const calls = Array.from({ length: 3 }, (_, index) => plugin.execute({ toolName: "t", args: {}, scope: `run-${index}` }, service.tool));
    const outcomes = await Promise.all(calls.map((call) => settle(clock, call)));
    for (const outcome of outcomes) {
      expect(outcome.status).toBe("reflect");
      expect(outcome.status !== "success" && outcome.message).toMatch(/temporarily unavailable/);
      expect(outcome.status !== "success" && outcome.message).not.toMatch(STOP);
    }
  });

  it("an open circuit not due within the patience: temporary at once, with its remaining time, kept at the gate", async () => {
    const { clock, plugin, service } = await openCircuit(60_000, { patienceMs: 15_000 });
    await clock.advance(10_000);
    const refused = await plugin.execute({ toolName: "t", args: {}, scope: "run" }, service.tool);
    expect(refused.status).toBe("reflect");
    if (refused.status !== "reflect") return;
    expect(refused.error.code).toBe("CIRCUIT_OPEN");
    expect(refused.error.recoverable).toBe(true);
    expect(refused.error.retryAfterMs).toBe(50_000);
    expect(refused.prompt).toMatch(/temporarily unavailable.*about 50 s/);
    expect(refused.prompt).not.toMatch(STOP);
    // The model calls again at once: held at the gate until the circuit's time, then it is the probe.
    service.comesBackAt(0);
    const again = plugin.execute({ toolName: "t", args: {}, scope: "run" }, service.tool);
    await clock.advance(49_999);
    const runs = service.runs();
    const outcome = await settle(clock, again);
    expect(outcome).toMatchObject({ status: "success", value: "ok" });
    expect(service.runs()).toBe(runs + 1);
    expect(clock.now()).toBe(60_000);
  });

  it("a call waits for a hung probe only within its patience, then is told the tool is temporarily unavailable", async () => {
    const { clock, plugin } = await openCircuit(60_000, { patienceMs: 15_000, attemptTimeoutMs: 0 });
    await clock.advance(60_000);
    void plugin.execute({ toolName: "t", args: {}, scope: "probe" }, () => new Promise(() => {})); // the probe, hung (no attempt limit)
    await clock.advance(1);
    const waiting = plugin.execute({ toolName: "t", args: {}, scope: "run" }, () => "ok");
    await clock.advance(14_999);
    let settled = false;
    void waiting.then(() => {
      settled = true;
    });
    await clock.advance(0);
    expect(settled).toBe(false); // still within its patience: waiting for the probe
    const outcome = await drive(clock, waiting);
    expect(clock.now()).toBeLessThanOrEqual(60_001 + 16_000); // past its patience, at its next look
    expect(outcome.status === "reflect" && outcome.error.code).toBe("CIRCUIT_OPEN");
  });

  it("waitForRecovery: false turns the call away at once, with the temporary text", async () => {
    const { plugin, service } = await openCircuit(5_000, { patienceMs: 15_000, waitForRecovery: false });
    const refused = await plugin.execute({ toolName: "t", args: {}, scope: "run" }, service.tool);
    expect(refused.status === "reflect" && refused.error.code).toBe("CIRCUIT_OPEN");
  });

  it("the caller's abort ends a wait for recovery at once", async () => {
    const { clock, plugin, service } = await openCircuit(10_000, { patienceMs: 15_000 });
    const controller = new AbortController();
    const call = plugin.execute({ toolName: "t", args: {}, scope: "run", signal: controller.signal }, service.tool);
    await clock.advance(3_000);
    controller.abort(new Error("the user left"));
    await expect(call).rejects.toThrow("the user left");
  });

  it("an isolated circuit is a definitive stop", async () => {
    const clock = createFakeClock();
    const plugin = RetryReflectPlugin.create({ clock });
    plugin.circuits.isolate("t");
    const refused = await plugin.execute({ toolName: "t", args: {}, scope: "run" }, () => "never");
    expect(refused.status === "failed" && refused.message).toMatch(STOP);
  });
});

describe("the attempt limit grows: 10 s for the first attempt of a row, 30 s for the second, 60 s for every later one", () => {
  it("a first attempt that hangs is cut off at 10 s, a slow one at 30 s; the third gets 60 s and the slow answer arrives, all in place", async () => {
    const clock = createFakeClock();
    const events = recordEvents();
    const plugin = RetryReflectPlugin.create({ clock, observers: [events] });
    let runs = 0;
    const tool = () => {
      runs++;
      return runs === 1 ? new Promise(() => {}) : clock.sleep(45_000).then(() => "slow but fine");
    };
    const call = plugin.execute({ toolName: "report", args: {}, scope: "run" }, tool);
    await clock.advance(10_000 + 500 + 30_000 + 1_000 + 45_000);
    const outcome = await call;
    expect(outcome).toMatchObject({ status: "success", value: "slow but fine", attempt: 3 });
    expect(events.events.filter((event) => event.type === "attempt_timed_out").map((event) => event.fields.timeout_ms)).toEqual([
      10_000, 30_000,
    ]);
    // 10 s, 0.5 s, 30 s, 1 s, then the 45 s answer.
    expect(clock.now()).toBe(86_500);
  });

  it("attemptTimeoutMs takes a list, and a number; 0 turns it off; an empty list or a zero in it is refused", () => {
    expect(RetryReflectPlugin.create({ attemptTimeoutMs: [10_000, 20_000, 40_000] }).options.policy.attemptTimeoutsMs).toEqual([
      10_000, 20_000, 40_000,
    ]);
    expect(RetryReflectPlugin.create({ attemptTimeoutMs: 5_000 }).options.policy.attemptTimeoutsMs).toEqual([5_000]);
    expect(RetryReflectPlugin.create({ attemptTimeoutMs: 0 }).options.policy.attemptTimeoutsMs).toEqual([]);
    expect(() => RetryReflectPlugin.create({ attemptTimeoutMs: [] })).toThrow(/attemptTimeoutMs/);
    expect(() => RetryReflectPlugin.create({ attemptTimeoutMs: [1_000, 0] })).toThrow(/attemptTimeoutMs/);
  });
});
