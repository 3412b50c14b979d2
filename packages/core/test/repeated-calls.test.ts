import { describe, expect, it } from "vitest";
import { ENGINE, type Engine } from "../src/call/call.js";
import type { RetryReflectEvent } from "../src/events.js";
import { type ExecuteOutcome, type RetryReflectOptions, RetryReflectPlugin } from "../src/index.js";
import { counterKey } from "../src/state/counters.js";
import { createFakeClock } from "../src/testing.js";

// `repeatedCallLimit`: an exact call (same tool, same canonical arguments) that already failed that
// many times for a non-transient reason in its scope is refused without running (`REPEATED_CALL`).

/** A promise and the function that resolves it: lets a test hold tools in flight. */
function gate(): { promise: Promise<void>; open: () => void } {
  let open!: () => void;
  const promise = new Promise<void>((resolve) => (open = resolve));
  return { promise, open };
}

const invalid = () => new Error("Invalid units. Supported: celsius, fahrenheit");
const notFound = () => new Error("order 42 not found");
const unavailable = () => Object.assign(new Error("HTTP 503 Service Unavailable"), { status: 503 });

function setup(options: RetryReflectOptions = {}) {
  const clock = createFakeClock();
  const events: RetryReflectEvent[] = [];
  const plugin = RetryReflectPlugin.create({ clock, observers: [{ onEvent: (event) => events.push(event) }], ...options });
  const runs: unknown[] = [];
  /** A weather tool: kelvin is refused by the backend, anything else answers. */
  const weather = async (args: { city: string; units: string }) => {
    runs.push(args);
    if (args.units === "kelvin") throw invalid();
    return `${args.city}: 22°`;
  };
  const refusals = () => events.filter((event) => event.type === "call_refused").map((event) => event.fields);
  return { clock, plugin, events, runs, weather, refusals };
}

const codeOf = (outcome: ExecuteOutcome<unknown>) => (outcome.status === "success" ? "success" : outcome.error.code);

describe("repeatedCallLimit: an exact call that keeps failing is refused", () => {
  it("refuses the exact call after `limit` non-transient failures, without running it, whatever the key order", async () => {
    const { clock, plugin, runs, weather, refusals, events } = setup({ repeatedCallLimit: 2, maxRetries: 5 });
    const first = await plugin.execute({ toolName: "get_weather", args: { city: "nyc", units: "kelvin" }, scope: "run-1" }, weather);
    expect(first.status === "reflect" && first.error.code).toBe("INVALID_ARGUMENTS");
    // The same call with its keys in another order is the same call: it runs once more (under the limit).
    const second = plugin.execute({ toolName: "get_weather", args: { units: "kelvin", city: "nyc" }, scope: "run-1" }, weather);
    await clock.runAll(); // the gate of the first reflection
    const secondOutcome = await second;
    expect(secondOutcome.status === "reflect" && secondOutcome.error.code).toBe("INVALID_ARGUMENTS");
    expect(runs).toHaveLength(2);

    // The third: refused at once (no gate wait, no run).
    const sleepsBefore = clock.sleeps.length;
    const third = await plugin.execute({ toolName: "get_weather", args: { city: "nyc", units: "kelvin" }, scope: "run-1" }, weather);
    expect(runs).toHaveLength(2);
    expect(clock.sleeps).toHaveLength(sleepsBefore);
    expect(third.status).toBe("reflect");
    if (third.status !== "reflect") return;
    expect(third.error.code).toBe("REPEATED_CALL");
    expect(third.error.recoverable).toBe(true);
    expect(third.error.message).toContain("already failed 2 times");
    // The model is told to change its arguments or stop.
    expect(third.error.suggestedAction).toMatch(/change the arguments/);
    expect(third.error.suggestedAction).toMatch(/stop/);
    expect(third.message).toContain("REPEATED_CALL");
    // It counts as an attempt.
    expect(third.attempt).toBe(3);
    expect(refusals()).toEqual([{ tool_name: "get_weather", reason: "repeated_call" }]);
    const refused = events.find((event) => event.type === "call_refused");
    expect(refused?.level).toBe("WARN");
    expect(refused?.message).toBe("call refused");
    // Still refused the next time; never a `retry` event for a refusal.
    const fourth = await plugin.execute({ toolName: "get_weather", args: { units: "kelvin", city: "nyc" }, scope: "run-1" }, weather);
    expect(codeOf(fourth)).toBe("REPEATED_CALL");
    expect(fourth.attempt).toBe(4);
    expect(runs).toHaveLength(2);
    expect(events.filter((event) => event.type === "retry")).toHaveLength(2);
  });

  it("refuses on the synchronous path too (no observers)", async () => {
    const clock = createFakeClock();
    const plugin = RetryReflectPlugin.create({ clock, repeatedCallLimit: 1 });
    let runs = 0;
    const tool = () => {
      runs++;
      throw invalid();
    };
    expect(codeOf(await plugin.execute({ toolName: "t", args: { a: 1, b: [1, 2] } }, tool))).toBe("INVALID_ARGUMENTS");
    const refused = await plugin.execute({ toolName: "t", args: { b: [1, 2], a: 1 } }, tool);
    expect(codeOf(refused)).toBe("REPEATED_CALL");
    expect(refused.status).toBe("reflect");
    expect(runs).toBe(1);
    // An array's order is content: another call.
    const other = plugin.execute({ toolName: "t", args: { a: 1, b: [2, 1] } }, tool);
    await clock.runAll();
    expect(codeOf(await other)).toBe("INVALID_ARGUMENTS");
    expect(runs).toBe(2);
  });

  it("lets a corrected call run meanwhile, also when issued at the same time as the refused ones", async () => {
    const { clock, plugin, runs, weather, refusals } = setup({ repeatedCallLimit: 1, maxRetries: 10 });
    const bad = { city: "nyc", units: "kelvin" };
    expect(codeOf(await plugin.execute({ toolName: "get_weather", args: bad, scope: "run-1" }, weather))).toBe("INVALID_ARGUMENTS");
    // Four refused calls and a corrected one, all in flight at once.
    const calls = Promise.all([
      plugin.execute({ toolName: "get_weather", args: { ...bad }, scope: "run-1" }, weather),
      plugin.execute({ toolName: "get_weather", args: { units: "kelvin", city: "nyc" }, scope: "run-1" }, weather),
      plugin.execute({ toolName: "get_weather", args: { city: "nyc", units: "celsius" }, scope: "run-1" }, weather),
      plugin.execute({ toolName: "get_weather", args: { ...bad }, scope: "run-1" }, weather),
      plugin.execute({ toolName: "get_weather", args: { ...bad }, scope: "run-1" }, weather),
    ]);
    await clock.runAll();
    const outcomes = await calls;
    expect(outcomes.map(codeOf)).toEqual(["REPEATED_CALL", "REPEATED_CALL", "success", "REPEATED_CALL", "REPEATED_CALL"]);
    expect(outcomes[2]).toMatchObject({ status: "success", value: "nyc: 22°" });
    expect(runs).toEqual([bad, { city: "nyc", units: "celsius" }]);
    expect(refusals()).toHaveLength(4);
    // The refusals did not move the gate: the corrected call waited only the first failure's backoff.
    expect(clock.sleeps).toEqual([500]);
  });

  it("counts identical calls that were in flight together: each failure counts, later ones are refused", async () => {
    const { clock, plugin } = setup({ repeatedCallLimit: 2, maxRetries: 20, circuitBreakerThreshold: 100 });
    const held = gate();
    let runs = 0;
    let corrected = 0;
    const tool = async (args: { q: string }) => {
      if (args.q === "good") {
        corrected++;
        return "found";
      }
      runs++;
      await held.promise;
      throw notFound();
    };
    // Five identical calls start before any of them failed: none can be refused yet.
    const inFlight = Array.from({ length: 5 }, () => plugin.execute({ toolName: "lookup", args: { q: "bad" }, scope: "s" }, tool));
    await clock.advance(0);
    expect(runs).toBe(5);
    // A corrected call runs while they are in flight.
    const good = await plugin.execute({ toolName: "lookup", args: { q: "good" }, scope: "s" }, tool);
    expect(good.status).toBe("success");
    held.open(); // the fault, while they run
    const outcomes = await Promise.all(inFlight);
    expect(outcomes.map(codeOf)).toEqual(["TOOL_FAILED", "TOOL_FAILED", "TOOL_FAILED", "TOOL_FAILED", "TOOL_FAILED"]);
    // Failed five times already (limit 2): refused now, in parallel with another corrected call.
    const [again, goodAgain] = await Promise.all([
      plugin.execute({ toolName: "lookup", args: { q: "bad" }, scope: "s" }, tool),
      (async () => {
        const call = plugin.execute({ toolName: "lookup", args: { q: "good" }, scope: "s" }, tool);
        await clock.runAll();
        return call;
      })(),
    ]);
    expect(codeOf(again)).toBe("REPEATED_CALL");
    expect(again.status === "reflect" && again.error.message).toContain("already failed 5 times");
    expect(goodAgain.status).toBe("success");
    expect(runs).toBe(5);
    expect(corrected).toBe(2);
  });

  it("keeps refusing the exact call after a corrected call succeeded in the scope", async () => {
    const { clock, plugin, runs, weather } = setup({ repeatedCallLimit: 1 });
    const bad = { city: "nyc", units: "kelvin" };
    await plugin.execute({ toolName: "get_weather", args: bad, scope: "run-1" }, weather);
    const good = plugin.execute({ toolName: "get_weather", args: { city: "nyc", units: "celsius" }, scope: "run-1" }, weather);
    await clock.runAll();
    expect((await good).status).toBe("success");
    // The success starts the attempt count again, but the exact call that failed still fails.
    const repeated = await plugin.execute({ toolName: "get_weather", args: { ...bad }, scope: "run-1" }, weather);
    expect(codeOf(repeated)).toBe("REPEATED_CALL");
    expect(repeated.attempt).toBe(1);
    expect(runs).toHaveLength(2);
    // Other calls of the tool keep running, and resetScope forgets it.
    const other = await plugin.execute({ toolName: "get_weather", args: { city: "sf", units: "celsius" }, scope: "run-1" }, weather);
    expect(other.status).toBe("success");
    plugin.resetScope("run-1");
    expect(codeOf(await plugin.execute({ toolName: "get_weather", args: bad, scope: "run-1" }, weather))).toBe("INVALID_ARGUMENTS");
    expect(runs).toHaveLength(4);
  });

  it("does not count transient failures (retried in place, or timed out)", async () => {
    const clock = createFakeClock();
    const plugin = RetryReflectPlugin.create({ clock, repeatedCallLimit: 2, maxRetries: 20, circuitBreakerThreshold: 100 });
    let runs = 0;
    // Two transient failures, then a non-transient one: one failure that counts per call.
    const tool = () => {
      runs++;
      if (runs % 3 !== 0) throw unavailable();
      throw notFound();
    };
    const first = plugin.execute({ toolName: "orders", args: { id: 42 }, scope: "s" }, tool);
    await clock.runAll();
    expect(codeOf(await first)).toBe("TOOL_FAILED");
    expect(runs).toBe(3);
    // One counted failure (of three): under the limit of 2, the call runs again.
    const second = plugin.execute({ toolName: "orders", args: { id: 42 }, scope: "s" }, tool);
    await clock.runAll();
    expect(codeOf(await second)).toBe("TOOL_FAILED");
    expect(runs).toBe(6);
    const third = await plugin.execute({ toolName: "orders", args: { id: 42 }, scope: "s" }, tool);
    expect(codeOf(third)).toBe("REPEATED_CALL");
    expect(runs).toBe(6);

    // Timeouts are transient too: a call whose first attempt hung is not remembered as failed.
    const timed = RetryReflectPlugin.create({ clock, repeatedCallLimit: 1, attemptTimeoutMs: 100, circuitBreakerThreshold: 100 });
    let reports = 0;
    const report = () => {
      reports++;
      return reports % 2 === 1 ? new Promise<never>(() => {}) : "report";
    };
    for (let index = 0; index < 3; index++) {
      const outcome = timed.execute({ toolName: "report", args: { id: 1 }, scope: "a" }, report);
      await clock.runAll();
      expect(await outcome).toMatchObject({ status: "success", value: "report", attempt: 2 });
    }
    expect(reports).toBe(6);
  });

  it("does not affect other scopes", async () => {
    const { clock, plugin, runs, weather } = setup({ repeatedCallLimit: 1 });
    const bad = { city: "nyc", units: "kelvin" };
    await plugin.execute({ toolName: "get_weather", args: bad, scope: "run-1" }, weather);
    expect(codeOf(await plugin.execute({ toolName: "get_weather", args: bad, scope: "run-1" }, weather))).toBe("REPEATED_CALL");
    // Another agent run, at the same time as a refusal in the first: it runs the call.
    const [inOther, inFirst] = await Promise.all([
      plugin.execute({ toolName: "get_weather", args: bad, scope: "run-2" }, weather),
      plugin.execute({ toolName: "get_weather", args: bad, scope: "run-1" }, weather),
    ]);
    expect(codeOf(inOther)).toBe("INVALID_ARGUMENTS");
    expect(inOther.attempt).toBe(1);
    expect(codeOf(inFirst)).toBe("REPEATED_CALL");
    expect(runs).toHaveLength(2);
    // Another tool with the same arguments is another call.
    const other = plugin.execute({ toolName: "get_forecast", args: bad, scope: "run-1" }, weather);
    await clock.runAll();
    expect(codeOf(await other)).toBe("INVALID_ARGUMENTS");
    expect(runs).toHaveLength(3);
  });

  it("counts a refusal as an attempt (it can spend the budget) and never as a breaker failure", async () => {
    const { plugin, events } = setup({ repeatedCallLimit: 1, maxRetries: 3, circuitBreakerThreshold: 2 });
    let runs = 0;
    const tool = () => {
      runs++;
      throw notFound(); // TOOL_FAILED: counted by the breaker
    };
    expect(codeOf(await plugin.execute({ toolName: "orders", args: { id: 42 }, scope: "s" }, tool))).toBe("TOOL_FAILED");
    const refusals = await Promise.all([1, 2, 3].map(() => plugin.execute({ toolName: "orders", args: { id: 42 }, scope: "s" }, tool)));
    expect(refusals.map((outcome) => [outcome.status, codeOf(outcome), outcome.attempt])).toEqual([
      ["reflect", "REPEATED_CALL", 2],
      ["reflect", "REPEATED_CALL", 3],
      ["failed", "RETRIES_EXHAUSTED", 4],
    ]);
    const exhausted = refusals[2];
    expect(exhausted?.status === "failed" && exhausted.reason).toBe("exhausted");
    expect(exhausted?.status === "failed" && exhausted.error.details?.last_error_code).toBe("REPEATED_CALL");
    expect(runs).toBe(1);
    // One tool failure only: the circuit (threshold 2) is still closed.
    expect(plugin.circuits.state("orders")).toBe("closed");
    expect(events.some((event) => event.type === "circuit_opened")).toBe(false);
    // Another scope: one more real failure opens it (it had one failure, not four). The failure
    // that opens it is told as temporary, with the circuit's open time (the default, 1 s).
    const other = await plugin.execute({ toolName: "orders", args: { id: 43 }, scope: "t" }, tool);
    expect(other).toMatchObject({ status: "reflect", error: { code: "TOOL_FAILED", recoverable: true, retryAfterMs: 1_000 } });
    expect(plugin.circuits.state("orders")).toBe("open");
  });

  it("does nothing by default: identical failing calls all run", async () => {
    const { clock, plugin, runs, weather, refusals } = setup({ maxRetries: 10 });
    for (let index = 0; index < 5; index++) {
      const outcome = plugin.execute({ toolName: "get_weather", args: { city: "nyc", units: "kelvin" }, scope: "run-1" }, weather);
      await clock.runAll();
      expect(codeOf(await outcome)).toBe("INVALID_ARGUMENTS");
    }
    expect(runs).toHaveLength(5);
    expect(refusals()).toEqual([]);
    // Nothing is remembered either: after a success the tool is healthy again (no counter left active).
    const engine = (plugin as unknown as { [ENGINE]: Engine })[ENGINE];
    expect(engine.tracker.hasCounters("get_weather")).toBe(true);
    const good = plugin.execute({ toolName: "get_weather", args: { city: "nyc", units: "celsius" }, scope: "run-1" }, weather);
    await clock.runAll();
    expect((await good).status).toBe("success");
    expect(engine.tracker.hasCounters("get_weather")).toBe(false);
  });

  it("applies per tool: `tools[name].repeatedCallLimit` sets it for one tool, or overrides the plugin's", async () => {
    const clock = createFakeClock();
    const plugin = RetryReflectPlugin.create({
      clock,
      maxRetries: 10,
      tools: { strict: { repeatedCallLimit: 1 }, lenient: { repeatedCallLimit: 3 } },
    });
    const runs: Record<string, number> = { strict: 0, lenient: 0, plain: 0 };
    const call = async (toolName: string) => {
      const outcome = plugin.execute({ toolName, args: { units: "kelvin" }, scope: "s" }, () => {
        runs[toolName] = (runs[toolName] ?? 0) + 1;
        throw invalid();
      });
      await clock.runAll();
      return codeOf(await outcome);
    };
    const codes: Record<string, string[]> = { strict: [], lenient: [], plain: [] };
    for (let index = 0; index < 4; index++) for (const tool of ["strict", "lenient", "plain"]) codes[tool]?.push(await call(tool));
    expect(codes).toEqual({
      strict: ["INVALID_ARGUMENTS", "REPEATED_CALL", "REPEATED_CALL", "REPEATED_CALL"],
      lenient: ["INVALID_ARGUMENTS", "INVALID_ARGUMENTS", "INVALID_ARGUMENTS", "REPEATED_CALL"],
      plain: ["INVALID_ARGUMENTS", "INVALID_ARGUMENTS", "INVALID_ARGUMENTS", "INVALID_ARGUMENTS"],
    });
    expect(runs).toEqual({ strict: 1, lenient: 3, plain: 4 });

    // The plugin's limit, and a tool that lifts it back to a higher one.
    const overridden = RetryReflectPlugin.create({
      clock,
      maxRetries: 10,
      repeatedCallLimit: 1,
      tools: { search: { repeatedCallLimit: 2 } },
    });
    let searches = 0;
    const search = () => {
      searches++;
      throw invalid();
    };
    const results: string[] = [];
    for (const toolName of ["search", "search", "search", "other", "other"]) {
      const outcome = overridden.execute({ toolName, args: { q: 1 }, scope: "s" }, search);
      await clock.runAll();
      results.push(codeOf(await outcome));
    }
    expect(results).toEqual(["INVALID_ARGUMENTS", "INVALID_ARGUMENTS", "REPEATED_CALL", "INVALID_ARGUMENTS", "REPEATED_CALL"]);
    expect(searches).toBe(3);
  });

  it("counts a write re-issued with a new idempotency key as the same call (the key is not content)", async () => {
    const { clock, plugin, refusals } = setup({ repeatedCallLimit: 1, toolEffects: { send_email: "write" } });
    let sent = 0;
    const send = () => {
      sent++;
      throw new Error("mailbox full");
    };
    const first = await plugin.execute({ toolName: "send_email", args: { to: "a@x.io", idempotency_key: "k-1" }, scope: "s" }, send);
    expect(codeOf(first)).toBe("TOOL_FAILED");
    const second = plugin.execute({ toolName: "send_email", args: { to: "a@x.io", idempotency_key: "k-2" }, scope: "s" }, send);
    await clock.runAll();
    expect(codeOf(await second)).toBe("REPEATED_CALL");
    const corrected = plugin.execute({ toolName: "send_email", args: { to: "b@x.io", idempotency_key: "k-3" }, scope: "s" }, send);
    await clock.runAll();
    expect(codeOf(await corrected)).toBe("TOOL_FAILED");
    expect(sent).toBe(2);
    expect(refusals()).toEqual([{ tool_name: "send_email", reason: "repeated_call" }]);
  });

  it("keeps memory bounded with many distinct failing calls: the oldest is forgotten first", async () => {
    const clock = createFakeClock();
    // No give-up time within this test's clock: the row keeps failing for minutes.
    const plugin = RetryReflectPlugin.create({
      clock,
      repeatedCallLimit: 1,
      maxRetries: 100_000,
      giveUpMs: 3_600_000,
      circuitBreakerThreshold: 1_000_000,
    });
    const engine = (plugin as unknown as { [ENGINE]: Engine })[ENGINE];
    let runs = 0;
    const tool = () => {
      runs++;
      throw invalid();
    };
    // 1,000 distinct failing calls, 100 at a time in flight.
    for (let batch = 0; batch < 10; batch++) {
      const calls = Array.from({ length: 100 }, (_, index) =>
        plugin.execute({ toolName: "search", args: { q: batch * 100 + index }, scope: "s" }, tool),
      );
      await clock.runAll();
      await Promise.all(calls);
    }
    expect(runs).toBe(1000);
    const repeats = engine.tracker.get(counterKey("s", "search"), "search")?.repeats;
    expect(repeats?.size).toBeGreaterThan(0);
    expect(repeats?.size).toBeLessThanOrEqual(64);
    const newest = plugin.execute({ toolName: "search", args: { q: "newest" }, scope: "s" }, tool);
    await clock.runAll();
    expect(codeOf(await newest)).toBe("INVALID_ARGUMENTS");
    // The newest is still remembered (refused); the oldest was forgotten (runs again).
    expect(codeOf(await plugin.execute({ toolName: "search", args: { q: "newest" }, scope: "s" }, tool))).toBe("REPEATED_CALL");
    const oldest = plugin.execute({ toolName: "search", args: { q: 0 }, scope: "s" }, tool);
    await clock.runAll();
    expect(codeOf(await oldest)).toBe("INVALID_ARGUMENTS");
    expect(runs).toBe(1002);

    // Many scopes: bounded by maxAttemptCounters.
    const scoped = RetryReflectPlugin.create({ clock, repeatedCallLimit: 1, maxAttemptCounters: 50 });
    const scopedEngine = (scoped as unknown as { [ENGINE]: Engine })[ENGINE];
    await Promise.all(
      Array.from({ length: 500 }, (_, index) => scoped.execute({ toolName: "search", args: { q: 1 }, scope: `run-${index}` }, tool)),
    );
    expect(scopedEngine.tracker.size).toBeLessThanOrEqual(50);
  });

  it("keeps a call that keeps being repeated in memory while others come and go", async () => {
    const clock = createFakeClock();
    // No give-up time within this test's clock: the row keeps failing for minutes.
    const plugin = RetryReflectPlugin.create({
      clock,
      repeatedCallLimit: 3,
      maxRetries: 100_000,
      giveUpMs: 3_600_000,
      circuitBreakerThreshold: 1_000_000,
    });
    let runs = 0;
    const tool = () => {
      runs++;
      throw invalid();
    };
    const run = async (q: number) => {
      const outcome = plugin.execute({ toolName: "search", args: { q }, scope: "s" }, tool);
      await clock.runAll();
      return codeOf(await outcome);
    };
    // The same call fails every few calls, among 200 others: it stays the most recently failed.
    expect(await run(-1)).toBe("INVALID_ARGUMENTS");
    for (let index = 0; index < 60; index++) await run(index);
    expect(await run(-1)).toBe("INVALID_ARGUMENTS");
    for (let index = 60; index < 120; index++) await run(index);
    expect(await run(-1)).toBe("INVALID_ARGUMENTS");
    for (let index = 120; index < 180; index++) await run(index);
    expect(await run(-1)).toBe("REPEATED_CALL");
    // Each refusal counts as a use too: refused again and again among other failing calls, it is never forgotten.
    for (let round = 0; round < 3; round++) {
      for (let index = 0; index < 60; index++) await run(1000 * (round + 1) + index);
      expect(await run(-1)).toBe("REPEATED_CALL");
    }
    expect(runs).toBe(3 + 180 + 180);
  });
});
