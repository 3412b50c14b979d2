import { describe, expect, it, vi } from "vitest";
import type { RetryReflectEvent } from "../src/events.js";
import { InvalidOptionError, RetryReflectPlugin, type ToolContext } from "../src/index.js";
import { classifyError } from "../src/primitives.js";
import { createFakeClock, drive, type FaultKind, type FaultPlan, type FaultRule, InjectedFault, injectFaults } from "../src/testing.js";

// injectFaults: a tool function that fails by a seeded plan, on the fake clock. Nothing here waits
// for real time: every delay is the fake clock's.

/** The rejection of `promise` (fails the test if it resolves). */
async function rejectionOf(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    (value) => {
      throw new Error(`expected a rejection, got ${JSON.stringify(value)}`);
    },
    (error: unknown) => error,
  );
}

/** Whether `promise` has settled after the pending continuations ran. */
async function settled(promise: Promise<unknown>): Promise<boolean> {
  let done = false;
  promise.then(
    () => (done = true),
    () => (done = true),
  );
  for (let turn = 0; turn < 20; turn++) await Promise.resolve();
  return done;
}

/** A counting tool and its injected version, on a fake clock. */
function setup<A extends unknown[] = [unknown, ToolContext?]>(faults: readonly FaultRule[], extra: Partial<FaultPlan<A>> = {}) {
  const clock = createFakeClock();
  const calls: unknown[][] = [];
  const tool = injectFaults(
    (...args: A) => {
      calls.push(args);
      return `ok ${calls.length}`;
    },
    { faults, clock, ...extra },
  );
  return { clock, calls, tool };
}

const zero = { transient: 0, rate_limit: 0, hang: 0, lost_response: 0, permanent: 0, invalid_arguments: 0, slow: 0 };

describe("each kind of fault", () => {
  it("no rule: fn runs as it is, and the log says so", async () => {
    const { tool, calls } = setup([{ kind: "transient", calls: [5] }]);
    await expect(tool({ a: 1 })).resolves.toBe("ok 1");
    expect(calls).toEqual([[{ a: 1 }]]);
    expect(tool.log).toEqual([{ execution: 1, at: 0, kind: "none", ran: true }]);
    expect(tool.stats).toEqual({ executions: 1, ran: 1, faults: zero });
  });

  it("transient: a 503, fn does not run; the core classifies it TRANSIENT", async () => {
    const { tool, calls } = setup([{ kind: "transient" }]);
    const error = await rejectionOf(tool({}));
    expect(error).toBeInstanceOf(InjectedFault);
    expect(error).toMatchObject({ name: "InjectedFault", kind: "transient", status: 503, ran: false });
    expect((error as Error).message).toBe("503 Service Unavailable (injected fault)");
    expect(calls).toEqual([]);
    expect(tool.stats).toEqual({ executions: 1, ran: 0, faults: { ...zero, transient: 1 } });
    expect(classifyError(error)).toMatchObject({ code: "TRANSIENT", kind: "transient", recoverable: true });
  });

  it("rate_limit: a 429 with retryAfterMs and a retry-after header (seconds, rounded up); the core reads the hint", async () => {
    const { tool } = setup([
      { kind: "rate_limit", calls: [1] },
      { kind: "rate_limit", calls: [2], retryAfterMs: 2_500 },
    ]);
    const first = await rejectionOf(tool({}));
    expect(first).toMatchObject({ kind: "rate_limit", status: 429, retryAfterMs: 1_000, headers: { "retry-after": "1" }, ran: false });
    expect((first as Error).message).toBe("429 Too Many Requests (injected fault)");
    const second = await rejectionOf(tool({}));
    expect(second).toMatchObject({ retryAfterMs: 2_500, headers: { "retry-after": "3" } });
    expect(classifyError(first)).toMatchObject({ code: "RATE_LIMITED", retryAfterMs: 1_000, recoverable: true });
    expect(classifyError({ status: 429, headers: (second as InjectedFault).headers })).toMatchObject({ retryAfterMs: 3_000 });
  });

  it("rate_limit in a `during` window: the default hint is the time left in the window", async () => {
    const { tool, clock } = setup([{ kind: "rate_limit", during: { from: 1_000, until: 5_000 } }]);
    await expect(tool({})).resolves.toBe("ok 1");
    await clock.advance(1_500);
    expect(await rejectionOf(tool({}))).toMatchObject({ retryAfterMs: 3_500, headers: { "retry-after": "4" } });
    await clock.advance(3_499);
    expect(await rejectionOf(tool({}))).toMatchObject({ retryAfterMs: 1 });
    await clock.advance(1);
    await expect(tool({})).resolves.toBe("ok 2");
  });

  it("hang: never settles; rejects with the signal's reason when it aborts, and removes its listener", async () => {
    const { tool, clock, calls } = setup([{ kind: "hang" }]);
    const controller = new AbortController();
    const removed = vi.spyOn(controller.signal, "removeEventListener");
    const pending = tool({}, { signal: controller.signal } as ToolContext);
    await clock.advance(3_600_000);
    expect(await settled(pending)).toBe(false);
    const reason = new Error("cut off");
    controller.abort(reason);
    expect(await rejectionOf(pending)).toBe(reason);
    expect(removed.mock.calls.map(([type]) => type)).toEqual(["abort"]);
    expect(calls).toEqual([]);
    expect(tool.stats).toMatchObject({ executions: 1, ran: 0, faults: { hang: 1 } });
  });

  it("hang: an already-aborted signal rejects at once; without a signal it stays pending; `signal` finds it elsewhere", async () => {
    const aborted = AbortSignal.abort(new Error("gone"));
    const { tool } = setup([{ kind: "hang" }]);
    await expect(tool({}, { signal: aborted } as ToolContext)).rejects.toThrow("gone");
    expect(await settled(tool({}))).toBe(false);

    const controller = new AbortController();
    const custom = injectFaults((_args: unknown, options: { abort: AbortSignal }) => options, {
      faults: [{ kind: "hang" }],
      signal: (_args, options) => options.abort,
    });
    const pending = custom({}, { abort: controller.signal });
    controller.abort();
    expect(await rejectionOf(pending)).toMatchObject({ name: "AbortError" });
  });

  it("lost_response: fn runs (the side effect happens), then after delayMs an ECONNRESET; the core classifies it TRANSIENT", async () => {
    const { tool, clock, calls } = setup([{ kind: "lost_response", delayMs: 300 }]);
    const pending = rejectionOf(tool({ order: 1 }));
    expect(calls).toEqual([[{ order: 1 }]]);
    expect(tool.log).toEqual([{ execution: 1, at: 0, kind: "lost_response", ran: true }]);
    await clock.advance(299);
    expect(await settled(pending)).toBe(false);
    await clock.advance(1);
    const error = await pending;
    expect(error).toMatchObject({ kind: "lost_response", code: "ECONNRESET", ran: true, status: undefined });
    expect((error as Error).message).toBe("socket hang up: the reply was lost (injected fault)");
    expect(tool.stats).toEqual({ executions: 1, ran: 1, faults: { ...zero, lost_response: 1 } });
    expect(classifyError(error)).toMatchObject({ code: "TRANSIENT", kind: "transient" });
  });

  it("lost_response: what fn threw is lost too; the default delay is 0 (no sleep)", async () => {
    const clock = createFakeClock();
    const tool = injectFaults(
      () => {
        throw new Error("the tool's own failure");
      },
      { faults: [{ kind: "lost_response" }], clock },
    );
    expect(await rejectionOf(tool())).toMatchObject({ code: "ECONNRESET", ran: true });
    expect(clock.sleeps).toEqual([]);
  });

  it("permanent: a 401, fn does not run; the core classifies it UNAUTHORIZED, not recoverable", async () => {
    const { tool, calls } = setup([{ kind: "permanent" }]);
    const error = await rejectionOf(tool({}));
    expect(error).toMatchObject({ kind: "permanent", status: 401, ran: false, message: "401 Unauthorized (injected fault)" });
    expect(calls).toEqual([]);
    expect(classifyError(error)).toMatchObject({ code: "UNAUTHORIZED", recoverable: false });
  });

  it("invalid_arguments: a 400 with code INVALID_ARGUMENTS, fn does not run; the core classifies it INVALID_ARGUMENTS", async () => {
    const { tool } = setup([{ kind: "invalid_arguments", message: "units: expected one of celsius, fahrenheit" }]);
    const error = await rejectionOf(tool({}));
    expect(error).toMatchObject({ kind: "invalid_arguments", status: 400, code: "INVALID_ARGUMENTS", ran: false });
    expect((error as Error).message).toBe("units: expected one of celsius, fahrenheit");
    expect(classifyError(error)).toMatchObject({ code: "INVALID_ARGUMENTS", kind: "invalid_arguments", recoverable: true });
  });

  it("slow: waits delayMs (default 1000) on the clock, then fn runs; the log's `ran` turns true when it does", async () => {
    const { tool, clock, calls } = setup([
      { kind: "slow", calls: [1] },
      { kind: "slow", delayMs: 50 },
    ]);
    const first = tool({});
    const second = tool({});
    expect(tool.log.map((record) => record.ran)).toEqual([false, false]);
    await clock.advance(50);
    await expect(second).resolves.toBe("ok 1");
    expect(tool.log.map((record) => record.ran)).toEqual([false, true]);
    await clock.advance(950);
    await expect(first).resolves.toBe("ok 2");
    expect(clock.sleeps).toEqual([1_000, 50]);
    expect(calls).toHaveLength(2);
    expect(tool.stats).toEqual({ executions: 2, ran: 2, faults: { ...zero, slow: 2 } });
  });

  it("slow: the signal aborts the wait, and fn never runs", async () => {
    const { tool, clock, calls } = setup([{ kind: "slow" }]);
    const controller = new AbortController();
    const pending = rejectionOf(tool({}, { signal: controller.signal } as ToolContext));
    await clock.advance(500);
    controller.abort(new Error("stop"));
    expect(await pending).toMatchObject({ message: "stop" });
    expect(calls).toEqual([]);
    expect(tool.log).toEqual([{ execution: 1, at: 0, kind: "slow", ran: false }]);
    expect(clock.pendingSleeps()).toBe(0);
  });

  it("a sync fn's throw becomes a rejection; `message` overrides each kind's text", async () => {
    const clock = createFakeClock();
    const tool = injectFaults(
      (fail: boolean) => {
        if (fail) throw new Error("own");
        return 1;
      },
      { faults: [{ kind: "transient", calls: [2], message: "upstream down" }], clock },
    );
    await expect(tool(true)).rejects.toThrow("own");
    await expect(tool(false)).rejects.toThrow("upstream down");
    await expect(tool(false)).resolves.toBe(1);
    expect(tool.stats.ran).toBe(2);
  });
});

describe("which executions fail", () => {
  const kinds = (faults: readonly FaultRule[], count: number) => {
    const { tool } = setup(faults);
    for (let index = 0; index < count; index++) tool({}).catch(() => undefined);
    return tool.log.map((record) => record.kind);
  };

  it("calls: a list, a range, an open range; the first matching rule wins", () => {
    expect(kinds([{ kind: "transient", calls: [1, 3] }], 4)).toEqual(["transient", "none", "transient", "none"]);
    expect(kinds([{ kind: "permanent", calls: { from: 2, to: 3 } }], 4)).toEqual(["none", "permanent", "permanent", "none"]);
    expect(kinds([{ kind: "permanent", calls: { from: 3 } }], 4)).toEqual(["none", "none", "permanent", "permanent"]);
    expect(kinds([{ kind: "permanent", calls: { to: 2 } }], 3)).toEqual(["permanent", "permanent", "none"]);
    expect(
      kinds(
        [
          { kind: "transient", calls: [2] },
          { kind: "rate_limit", calls: { to: 3 } },
        ],
        4,
      ),
    ).toEqual(["rate_limit", "transient", "rate_limit", "none"]);
    expect(kinds([{ kind: "transient", calls: [] }], 2)).toEqual(["none", "none"]);
  });

  it("during: from <= elapsed < until, on the plan's clock, counted from when injectFaults was called", async () => {
    const clock = createFakeClock(10_000);
    await clock.advance(0);
    const tool = injectFaults(() => "ok", { clock, faults: [{ kind: "transient", during: { from: 100, until: 200 } }] });
    const at = async (ms: number) => {
      await clock.advance(ms - (clock.now() - 10_000));
      return tool().then(
        () => "none",
        (error: InjectedFault) => error.kind,
      );
    };
    expect([await at(99), await at(100), await at(199), await at(200)]).toEqual(["none", "transient", "transient", "none"]);
    expect(tool.log.map((record) => record.at)).toEqual([99, 100, 199, 200]);
    const open = injectFaults(() => "ok", { clock, faults: [{ kind: "permanent", during: { until: 50 } }] });
    await expect(open()).rejects.toMatchObject({ kind: "permanent" });
    await clock.advance(50);
    await expect(open()).resolves.toBe("ok");
  });

  it("calls and during together: both must match", async () => {
    const { tool, clock } = setup([{ kind: "transient", calls: { from: 2 }, during: { until: 1_000 } }]);
    const outcomes: string[] = [];
    for (let index = 0; index < 4; index++) {
      if (index === 2) await clock.advance(1_000);
      outcomes.push(await tool({}).then(String, (error: InjectedFault) => error.kind));
    }
    expect(outcomes).toEqual(["ok 1", "transient", "ok 2", "ok 3"]);
  });
});

describe("probability: seeded and deterministic", () => {
  const run = (seed: number | undefined, faults: readonly FaultRule[], count = 200) => {
    const tool = injectFaults(() => "ok", { faults, clock: createFakeClock(), ...(seed === undefined ? {} : { seed }) });
    for (let index = 0; index < count; index++) tool().catch(() => undefined);
    return tool;
  };
  const mixed: FaultRule[] = [
    { kind: "transient", probability: 0.2 },
    { kind: "rate_limit", probability: 0.25 },
    { kind: "permanent", probability: 0.1 },
  ];

  it("the same seed gives the same log; another seed another; the default seed is 1", () => {
    expect(run(7, mixed).log).toEqual(run(7, mixed).log);
    expect(run(7, mixed).log.map((record) => record.kind)).not.toEqual(run(8, mixed).log.map((record) => record.kind));
    expect(run(undefined, mixed).log).toEqual(run(1, mixed).log);
  });

  it("about `probability` of 1,000 executions fail (within 4 points), for several seeds", () => {
    for (const seed of [1, 2, 3, 42, 2_026]) {
      const { faults } = run(seed, [{ kind: "transient", probability: 0.3 }], 1_000).stats;
      expect(faults.transient).toBeGreaterThan(260);
      expect(faults.transient).toBeLessThan(340);
    }
    expect(run(5, [{ kind: "transient", probability: 0 }], 1_000).stats.faults.transient).toBe(0);
  });

  it("draws only for rules that match with probability < 1: a rule that does not match shifts nothing", () => {
    const plain = run(9, [{ kind: "transient", probability: 0.5 }]);
    const withOthers = run(9, [
      { kind: "permanent", calls: [1_000_000], probability: 0.5 },
      { kind: "rate_limit", during: { from: 60_000 }, probability: 0.5 },
      { kind: "transient", probability: 0.5 },
    ]);
    expect(withOthers.log).toEqual(plain.log);
  });
});

describe("through a real RetryReflectPlugin", () => {
  function pluginOn(options: Parameters<typeof RetryReflectPlugin.create>[0] = {}) {
    const clock = createFakeClock();
    const events: RetryReflectEvent[] = [];
    const plugin = RetryReflectPlugin.create({ clock, observers: [{ onEvent: (event) => events.push(event) }], ...options });
    return { clock, events, plugin };
  }
  const weather = (args: { city: string }) => ({ city: args.city, temperature: 22 });

  it("transient: retried in place to success after the backoff", async () => {
    const { clock, plugin, events } = pluginOn({ initialBackoffMs: 200 });
    const tool = injectFaults(weather, { clock, faults: [{ kind: "transient", calls: [1, 2] }] });
    const outcome = await drive(clock, plugin.execute({ toolName: "get_weather", args: { city: "NYC" } }, tool));
    expect(outcome).toMatchObject({ status: "success", value: { city: "NYC", temperature: 22 }, attempt: 3 });
    expect(events.filter((event) => event.type === "retry").map((event) => event.fields)).toMatchObject([
      { error_code: "TRANSIENT", mode: "in_place" },
      { error_code: "TRANSIENT", mode: "in_place" },
    ]);
    expect(clock.sleeps).toEqual([200, 400]);
    expect(tool.stats).toEqual({ executions: 3, ran: 1, faults: { ...zero, transient: 2 } });
  });

  it("rate_limit: the plugin waits the hint on the fake clock, then succeeds", async () => {
    const { clock, plugin, events } = pluginOn({ initialBackoffMs: 100 });
    const tool = injectFaults(weather, { clock, faults: [{ kind: "rate_limit", calls: [1], retryAfterMs: 2_000 }] });
    const outcome = await drive(clock, plugin.execute({ toolName: "get_weather", args: { city: "Oslo" } }, tool));
    expect(outcome).toMatchObject({ status: "success", attempt: 2 });
    expect(events[0]?.fields).toMatchObject({ error_code: "RATE_LIMITED", backoff_ms: 2_000 });
    expect(clock.sleeps).toEqual([2_000]);
    expect(clock.now()).toBe(2_000);
    expect(tool.log.map((record) => record.at)).toEqual([0, 2_000]);
  });

  it("hang with attemptTimeoutMs: the attempt ends TIMEOUT (the hang rejects with its signal's reason) and is retried", async () => {
    const { clock, plugin, events } = pluginOn({ attemptTimeoutMs: 1_000, initialBackoffMs: 100 });
    const tool = injectFaults(weather, { clock, faults: [{ kind: "hang", calls: [1] }] });
    const outcome = await drive(clock, plugin.execute({ toolName: "get_weather", args: { city: "Rome" } }, tool));
    expect(outcome).toMatchObject({ status: "success", attempt: 2 });
    expect(events.map((event) => event.type)).toEqual(["attempt_timed_out", "retry", "retry_succeeded"]);
    expect(events[1]?.fields).toMatchObject({ error_code: "TIMEOUT", mode: "in_place" });
    expect(clock.now()).toBe(1_100);
    expect(tool.stats).toMatchObject({ executions: 2, ran: 1, faults: { hang: 1 } });
    expect(clock.pendingSleeps()).toBe(0);
  });

  it("lost_response on a write behind an idempotency key: retried in place, so the side effect happens twice (ran = 2)", async () => {
    const { clock, plugin } = pluginOn({ toolEffects: { book_table: "write" }, initialBackoffMs: 100 });
    const keys: Array<string | undefined> = [];
    const book = (args: { table: number; idempotency_key: string }, context: ToolContext) => {
      keys.push(context.idempotencyKey); // a real client sends it downstream, so the service can deduplicate
      return { booking: `table-${args.table}` };
    };
    const tool = injectFaults(book, { clock, faults: [{ kind: "lost_response", calls: [1], delayMs: 250 }] });
    const outcome = await drive(clock, plugin.execute({ toolName: "book_table", args: { table: 4, idempotency_key: "k-1" } }, tool));
    expect(outcome).toMatchObject({ status: "success", value: { booking: "table-4" }, attempt: 2 });
    expect(tool.stats).toMatchObject({ executions: 2, ran: 2, faults: { lost_response: 1 } });
    expect(tool.log).toEqual([
      { execution: 1, at: 0, kind: "lost_response", ran: true },
      { execution: 2, at: 350, kind: "none", ran: true },
    ]);
    // Both runs carried the same key: a service that honours it books the table once.
    expect(keys).toEqual(["k-1", "k-1"]);
  });

  it("permanent: failed, not recoverable, never retried", async () => {
    const { clock, plugin } = pluginOn();
    const tool = injectFaults(weather, { clock, faults: [{ kind: "permanent" }] });
    const outcome = await drive(clock, plugin.execute({ toolName: "get_weather", args: { city: "Lima" } }, tool));
    expect(outcome).toMatchObject({ status: "failed", reason: "not_recoverable", error: { code: "UNAUTHORIZED", recoverable: false } });
    expect(tool.stats).toMatchObject({ executions: 1, ran: 0 });
  });

  it("invalid_arguments: reflected to the model (no retry in place)", async () => {
    const { clock, plugin } = pluginOn();
    const tool = injectFaults(weather, { clock, faults: [{ kind: "invalid_arguments", calls: [1] }] });
    const outcome = await drive(clock, plugin.execute({ toolName: "get_weather", args: { city: "?" } }, tool));
    expect(outcome).toMatchObject({ status: "reflect", error: { code: "INVALID_ARGUMENTS" } });
    expect(outcome.status === "reflect" && outcome.prompt).toContain("provide corrected arguments");
    expect(tool.stats).toMatchObject({ executions: 1, ran: 0 });
  });

  it("200 calls in flight at once, in 200 runs: the first 40 executions fail transiently, every call ends in success", async () => {
    // One call in five failing is above the default retry budget (5 % of the calls + 1 a second),
    // which would hand some of them back to the model (RETRY_BUDGET_SPENT): this test is the faults'.
    const { clock, plugin } = pluginOn({ initialBackoffMs: 100, circuitBreakerThreshold: 1_000, retryBudget: false });
    const tool = injectFaults(weather, {
      clock,
      faults: [
        { kind: "transient", calls: { to: 40 } },
        { kind: "slow", delayMs: 30, probability: 0.5 },
      ],
      seed: 3,
    });
    const pending = Array.from({ length: 200 }, (_, index) =>
      plugin.execute({ toolName: "get_weather", args: { city: `c${index}` }, scope: `run-${index}` }, tool),
    );
    const outcomes = await drive(clock, Promise.all(pending));
    expect(outcomes.every((outcome) => outcome.status === "success")).toBe(true);
    expect(outcomes.filter((outcome) => outcome.status === "success" && outcome.attempt === 2)).toHaveLength(40);
    const { stats } = tool;
    expect(stats).toMatchObject({ executions: 240, ran: 200, faults: { transient: 40 } });
    expect(stats.faults.slow).toBeGreaterThan(70);
    expect(stats.faults.slow).toBeLessThan(130);
    expect(tool.log.map((record) => record.execution)).toEqual(Array.from({ length: 240 }, (_, index) => index + 1));
    expect(clock.pendingSleeps()).toBe(0);
  });
});

describe("an invalid plan throws InvalidOptionError, naming the field and the value", () => {
  const cases: Array<[string, unknown, string]> = [
    ["unknown kind", { faults: [{ kind: "flaky" }] }, "faults[0].kind"],
    ["probability above 1", { faults: [{ kind: "transient" }, { kind: "transient", probability: 2 }] }, "faults[1].probability"],
    ["negative probability", { faults: [{ kind: "transient", probability: -0.1 }] }, "faults[0].probability"],
    ["probability NaN", { faults: [{ kind: "transient", probability: Number.NaN }] }, "faults[0].probability"],
    ["a call number 0", { faults: [{ kind: "transient", calls: [1, 0] }] }, "faults[0].calls[1]"],
    ["a fractional call", { faults: [{ kind: "transient", calls: [1.5] }] }, "faults[0].calls[0]"],
    ["a range backwards", { faults: [{ kind: "transient", calls: { from: 3, to: 2 } }] }, "faults[0].calls.to"],
    ["a range field unknown", { faults: [{ kind: "transient", calls: { first: 1 } }] }, "faults[0].calls.first"],
    ["calls a number", { faults: [{ kind: "transient", calls: 3 }] }, "faults[0].calls"],
    ["during negative", { faults: [{ kind: "transient", during: { from: -1 } }] }, "faults[0].during.from"],
    ["during empty", { faults: [{ kind: "transient", during: { from: 5, until: 5 } }] }, "faults[0].during.until"],
    ["delayMs negative", { faults: [{ kind: "slow", delayMs: -5 }] }, "faults[0].delayMs"],
    ["delayMs on a hang", { faults: [{ kind: "hang", delayMs: 5 }] }, "faults[0].delayMs"],
    ["retryAfterMs Infinity", { faults: [{ kind: "rate_limit", retryAfterMs: Number.POSITIVE_INFINITY }] }, "faults[0].retryAfterMs"],
    ["retryAfterMs on a transient", { faults: [{ kind: "transient", retryAfterMs: 10 }] }, "faults[0].retryAfterMs"],
    ["message a number", { faults: [{ kind: "transient", message: 5 }] }, "faults[0].message"],
    ["an unknown rule field", { faults: [{ kind: "transient", attempts: [1] }] }, "faults[0].attempts"],
    ["a rule not an object", { faults: ["transient"] }, "faults[0]"],
    ["faults missing", {}, "faults"],
    ["seed fractional", { faults: [], seed: 1.5 }, "seed"],
    ["clock without sleep", { faults: [], clock: { now: () => 0 } }, "clock"],
    ["signal not a function", { faults: [], signal: "config.signal" }, "signal"],
    ["an unknown plan field", { faults: [], random: Math.random }, "random"],
    ["no plan", undefined, "plan"],
  ];

  it.each(cases)("%s", (_name, plan, option) => {
    let thrown: unknown;
    try {
      injectFaults(() => "ok", plan as FaultPlan);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(InvalidOptionError);
    expect((thrown as InvalidOptionError).option).toBe(option);
    expect((thrown as Error).message).toContain(`\`${option}\``);
  });

  it("the message names the value and what was expected", () => {
    expect(() => injectFaults(() => "ok", { faults: [{ kind: "transient" }, { kind: "transient", probability: 2 }] })).toThrow(
      "Invalid option `faults[1].probability`: expected a number in [0, 1], received 2",
    );
    expect(() => injectFaults(() => "ok", { faults: [{ kind: "nope" as FaultKind }] })).toThrow(
      'Invalid option `faults[0].kind`: expected one of "transient", "rate_limit", "hang", "lost_response", "permanent", "invalid_arguments", "slow", received "nope"',
    );
  });

  it("fn must be a function", () => {
    expect(() => injectFaults("tool" as unknown as () => void, { faults: [] })).toThrow(InvalidOptionError);
    expect(() => injectFaults("tool" as unknown as () => void, { faults: [] })).toThrow("Invalid option `fn`: expected a function");
  });
});
