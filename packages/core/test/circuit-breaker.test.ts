import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { RetryReflectEvent } from "../src/events.js";
import { type RetryReflectOptions, RetryReflectPlugin, ToolError } from "../src/index.js";
import { CircuitBreaker } from "../src/primitives.js";
import type { CircuitTransition } from "../src/stores.js";
import { createFakeClock, drive } from "../src/testing.js";

const broken = () => {
  throw new Error("upstream exploded");
};

/** Only the definitive stops tell the model not to call the tool again. */
const STOP = /\b(?:do not|don't)\b[^.\n]*\bagain\b/i;

describe("circuit breaker inside the plugin", () => {
  function setup(options: RetryReflectOptions = {}) {
    const clock = createFakeClock();
    const events: RetryReflectEvent[] = [];
    // The scenario's threshold (the default, 10, sits above the attempts of one patient call) and a
    // long open time (60 s, past the calls' patience; the default, 1 s, has calls wait for the probe).
    const plugin = RetryReflectPlugin.create({
      clock,
      maxRetries: 0,
      circuitBreakerThreshold: 5,
      circuitBreakerResetMs: 60_000,
      observers: [{ onEvent: (event) => events.push(event) }],
      ...options,
    });
    let calls = 0;
    const tool = () => {
      calls++;
      return broken();
    };
    const call = (scope: string) => plugin.execute({ toolName: "broken_api", args: {}, scope }, tool);
    return { clock, events, plugin, call, calls: () => calls };
  }

  it("opens at exactly 5 consecutive failures and then turns calls away at once, without calling the tool, as temporary", async () => {
    const { plugin, call, calls, events } = setup();
    for (let run = 1; run <= 4; run++) {
      await call(`run-${run}`);
      expect(plugin.circuitState("broken_api")).toBe("closed");
    }
    await call("run-5");
    expect(plugin.circuitState("broken_api")).toBe("open");
    expect(events.filter((event) => event.type === "circuit_opened").map((event) => event.fields)).toEqual([
      { tool_name: "broken_api", failures: 5, reset_ms: 60_000 },
    ]);
    // The open time (60 s) is past the call's patience (15 s): no wait, the temporary text with the open time.
    const rejected = await call("run-6");
    expect(calls()).toBe(5);
    expect(rejected.status).toBe("reflect");
    if (rejected.status !== "reflect") return;
    expect(rejected.error.toJSON()).toMatchObject({ error_code: "CIRCUIT_OPEN", recoverable: true, retry_after_ms: 60_000 });
    expect(rejected.message).toContain("temporarily unavailable");
    expect(rejected.message).toContain("in about 60 s");
    expect(rejected.message).not.toMatch(STOP);
    expect(JSON.parse(rejected.message.split("\n\n")[1] ?? "{}")).toMatchObject({ error_code: "CIRCUIT_OPEN", retry_after_ms: 60_000 });
    expect(events.at(-1)?.type).toBe("call_rejected");
    expect(events.at(-1)?.fields).toEqual({ tool_name: "broken_api", retry_after_ms: 60_000 });
  });

  it("turns half-open after 60000 ms; a successful probe closes it", async () => {
    const { plugin, call, clock, events } = setup();
    for (let run = 0; run < 5; run++) await call(`run-${run}`);
    await clock.advance(59_999);
    expect(plugin.circuitState("broken_api")).toBe("open");
    await clock.advance(1);
    expect(plugin.circuitState("broken_api")).toBe("half-open");
    const probe = await plugin.execute({ toolName: "broken_api", args: {}, scope: "probe" }, () => "ok");
    expect(probe.status).toBe("success");
    expect(plugin.circuitState("broken_api")).toBe("closed");
    expect(events.filter((event) => event.type.startsWith("circuit_")).map((event) => event.type)).toEqual([
      "circuit_opened",
      "circuit_half_opened",
      "circuit_closed",
    ]);
  });

  it("a failed probe re-opens it and restarts the timer", async () => {
    const { plugin, call, clock, events, calls } = setup();
    for (let run = 0; run < 5; run++) await call(`run-${run}`);
    await clock.advance(60_000);
    await call("probe");
    expect(plugin.circuitState("broken_api")).toBe("open");
    await clock.advance(59_999);
    expect(plugin.circuitState("broken_api")).toBe("open");
    expect(plugin.circuits.retryAfterMs("broken_api")).toBe(1);
    // Due within the call's patience: the call waits the 1 ms for the circuit, then is its probe.
    const again = call("again");
    await clock.advance(0);
    expect(events.filter((event) => event.type === "waiting_for_recovery").map((event) => event.fields)).toEqual([
      { tool_name: "broken_api", wait_ms: 1 },
    ]);
    expect(calls()).toBe(6);
    await clock.advance(1);
    expect(calls()).toBe(7);
    await again;
    expect(events.filter((event) => event.type.startsWith("circuit_")).map((event) => event.type)).toEqual([
      "circuit_opened",
      "circuit_half_opened",
      "circuit_opened",
      "circuit_half_opened",
      "circuit_opened",
    ]);
  });

  for (const waitForRecovery of [true, false]) {
    it(
      waitForRecovery
        ? "admits exactly one probe among 1000 concurrent calls at half-open; the others wait for its result and run once it succeeds"
        : "admits exactly one probe among 1000 concurrent calls at half-open; without waitForRecovery the others are turned away at once, as temporary",
      async () => {
        const { plugin: probing, call, clock } = setup({ waitForRecovery });
        for (let run = 0; run < 5; run++) await call(`run-${run}`);
        await clock.advance(60_000);
        expect(probing.circuitState("broken_api")).toBe("half-open");
        let runs = 0;
        let release!: () => void;
        const gate = new Promise<void>((resolve) => (release = resolve));
        const outcomes = Array.from({ length: 1000 }, (_, index) =>
          probing.execute({ toolName: "broken_api", args: {}, scope: `s${index}` }, async () => {
            runs++;
            if (runs === 1) await gate;
            return "recovered";
          }),
        );
        await clock.advance(0);
        expect(runs).toBe(1); // the probe; the others do not run while it does
        release();
        const settled = await Promise.all(outcomes);
        expect(probing.circuitState("broken_api")).toBe("closed");
        if (waitForRecovery) {
          expect(runs).toBe(1000);
          expect(settled.every((outcome) => outcome.status === "success")).toBe(true);
          return;
        }
        expect(runs).toBe(1);
        expect(settled.filter((outcome) => outcome.status === "success")).toHaveLength(1);
        const rejected = settled.filter((outcome) => outcome.status === "reflect");
        expect(rejected).toHaveLength(999);
        expect(
          rejected.every(
            (outcome) =>
              outcome.status === "reflect" &&
              outcome.error.code === "CIRCUIT_OPEN" &&
              outcome.error.recoverable &&
              (outcome.error.retryAfterMs ?? 0) > 0,
          ),
        ).toBe(true);
      },
    );
  }

  it("does not count INVALID_ARGUMENTS failures by default", async () => {
    const clock = createFakeClock();
    const plugin = RetryReflectPlugin.create({ clock, maxRetries: 100 });
    for (let index = 0; index < 10; index++) {
      const outcome = plugin.execute({ toolName: "t", args: {}, scope: `s${index}` }, () => {
        throw new Error("Invalid units. Supported: celsius, fahrenheit");
      });
      await clock.runAll();
      expect((await outcome).status).toBe("reflect");
    }
    expect(plugin.circuitState("t")).toBe("closed");
    const counting = RetryReflectPlugin.create({ clock, maxRetries: 100, circuitBreakerCountsInvalidArguments: true });
    for (let index = 0; index < 10; index++) {
      await counting.execute({ toolName: "t", args: {}, scope: `s${index}` }, () => {
        throw new ToolError({ code: "INVALID_ARGUMENTS", message: "bad", recoverable: true });
      });
    }
    expect(counting.circuitState("t")).toBe("open");
  });
});

describe("CircuitBreaker", () => {
  it("releases a hung probe after resetMs and ignores its late result", async () => {
    const clock = createFakeClock();
    const transitions: CircuitTransition[] = [];
    const breaker = new CircuitBreaker({ threshold: 1, resetMs: 1000, clock, onTransition: (transition) => transitions.push(transition) });
    const first = breaker.acquire("t");
    if (!first.admitted) throw new Error("closed must admit");
    breaker.onFailure("t", first.permit);
    await clock.advance(1000);
    const hung = breaker.acquire("t");
    expect(hung.admitted).toBe(true);
    expect(breaker.acquire("t")).toEqual({ admitted: false, retryAfterMs: 1000, state: "half-open" });
    await clock.advance(1000);
    const second = breaker.acquire("t");
    expect(second.admitted).toBe(true);
    if (!hung.admitted || !second.admitted) return;
    breaker.onSuccess("t", hung.permit); // late result of the hung probe: ignored
    expect(breaker.state("t")).toBe("half-open");
    breaker.onSuccess("t", second.permit);
    expect(breaker.state("t")).toBe("closed");
    expect(transitions.map((transition) => `${transition.from}->${transition.to}`)).toEqual([
      "closed->open",
      "open->half-open",
      "half-open->closed",
    ]);
  });

  it("snapshots and restores as versioned JSON, keeping the remaining open time", async () => {
    const clock = createFakeClock();
    const breaker = new CircuitBreaker({ threshold: 2, resetMs: 10_000, clock });
    for (const key of ["a", "a", "b"]) {
      const decision = breaker.acquire(key);
      if (decision.admitted) breaker.onFailure(key, decision.permit);
    }
    await clock.advance(4000);
    const snapshot = JSON.parse(JSON.stringify(breaker.snapshot()));
    expect(snapshot).toEqual({
      version: 1,
      breakers: { a: { state: "open", failures: 2, remainingMs: 6000 }, b: { state: "closed", failures: 1 } },
    });

    const other = new CircuitBreaker({ threshold: 2, resetMs: 10_000, clock: createFakeClock(50_000) });
    other.restore(snapshot);
    expect(other.state("a")).toBe("open");
    expect(other.peek("a")).toBe(6000);
    const b = other.acquire("b");
    if (b.admitted) other.onFailure("b", b.permit);
    expect(other.state("b")).toBe("open");
    expect(() => other.restore({ version: 2 } as never)).toThrow(/version 1/);
  });

  it("isolates a key until reset, and reset closes it", () => {
    const breaker = new CircuitBreaker({ clock: createFakeClock() });
    breaker.isolate("t");
    expect(breaker.state("t")).toBe("open");
    expect(breaker.acquire("t").admitted).toBe(false);
    breaker.reset("t");
    expect(breaker.state("t")).toBe("closed");
    expect(breaker.acquire("t").admitted).toBe(true);
  });

  it("keeps its registry bounded: a million tool names never hold more than maxKeys entries", () => {
    const breaker = new CircuitBreaker({ threshold: 3, maxKeys: 1000, clock: createFakeClock() });
    for (let index = 0; index < 1_000_000; index++) {
      const key = `tool-${index}`;
      const decision = breaker.acquire(key);
      if (decision.admitted) breaker.onFailure(key, decision.permit);
    }
    expect(breaker.size).toBe(1000);
    expect(breaker.snapshot().breakers["tool-999999"]).toEqual({ state: "closed", failures: 1 });
    expect(breaker.snapshot().breakers["tool-0"]).toBeUndefined();
  });

  it("keeps nothing for tools that only succeed", () => {
    const breaker = new CircuitBreaker({ clock: createFakeClock() });
    for (let index = 0; index < 100; index++) {
      const decision = breaker.acquire(`t${index}`);
      if (decision.admitted) breaker.onSuccess(`t${index}`, decision.permit);
    }
    expect(breaker.size).toBe(0);
  });

  it("matches a reference model over random sequences of successes, failures and clock advances", async () => {
    type Step = { kind: "success" } | { kind: "failure" } | { kind: "advance"; ms: number };
    const step = fc.oneof(
      fc.constant<Step>({ kind: "success" }),
      fc.constant<Step>({ kind: "failure" }),
      fc.integer({ min: 0, max: 3000 }).map((ms): Step => ({ kind: "advance", ms })),
    );
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 6 }),
        fc.integer({ min: 1, max: 2500 }),
        fc.array(step, { maxLength: 80 }),
        async (threshold, resetMs, steps) => {
          const clock = createFakeClock();
          const breaker = new CircuitBreaker({ threshold, resetMs, clock });
          // Reference: calls run to completion one at a time.
          let state: "closed" | "open" | "half-open" = "closed";
          let failures = 0;
          let openedAt = 0;
          let now = 0;
          for (const each of steps) {
            if (each.kind === "advance") {
              await clock.advance(each.ms);
              now += each.ms;
              continue;
            }
            if (state === "open" && now - openedAt >= resetMs) state = "half-open";
            const decision = breaker.acquire("t");
            const modelAdmits = state !== "open";
            expect(decision.admitted).toBe(modelAdmits);
            if (!decision.admitted) {
              expect(decision.retryAfterMs).toBe(openedAt + resetMs - now);
              continue;
            }
            if (each.kind === "success") {
              breaker.onSuccess("t", decision.permit);
              state = "closed";
              failures = 0;
            } else {
              breaker.onFailure("t", decision.permit);
              failures++;
              if (state === "half-open" || failures >= threshold) {
                state = "open";
                openedAt = now;
              }
            }
            expect(breaker.state("t")).toBe(state === "open" && now - openedAt >= resetMs ? "half-open" : state);
            if (state === "open" && now - openedAt >= resetMs) state = "half-open";
          }
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe("the failure that opens the circuit", () => {
  function flaky(resetMs: number, upAt = Number.POSITIVE_INFINITY) {
    const clock = createFakeClock();
    const events: RetryReflectEvent[] = [];
    const plugin = RetryReflectPlugin.create({
      clock,
      circuitBreakerThreshold: 2,
      circuitBreakerResetMs: resetMs,
      observers: [{ onEvent: (event) => events.push(event) }],
    });
    let calls = 0;
    const tool = () => {
      calls++;
      if (clock.now() < upAt) throw Object.assign(new Error("down"), { status: 503 });
      return "back";
    };
    return { clock, events, plugin, tool, calls: () => calls };
  }

  it("does not retry into an open circuit whose open time is past the patience: the temporary text, with the open time", async () => {
    const { clock, events, plugin, tool, calls } = flaky(60_000);
    const outcome = plugin.execute({ toolName: "flaky", args: {} }, tool);
    await clock.runAll();
    const result = await outcome;
    expect(calls()).toBe(2);
    expect(clock.sleeps).toEqual([500]);
    expect(plugin.circuitState("flaky")).toBe("open");
    expect(result.status).toBe("reflect");
    if (result.status !== "reflect") return;
    expect(result.error.toJSON()).toMatchObject({ error_code: "TRANSIENT", message: "down", recoverable: true, retry_after_ms: 60_000 });
    expect(result.prompt).toMatch(/temporarily unavailable: "down".*in about 60 s/);
    expect(result.prompt).not.toMatch(STOP);
    expect(events.map((event) => event.type)).toEqual(["retry", "circuit_opened", "retry"]);
    expect(events.at(-1)?.fields).toMatchObject({ mode: "reflect", backoff_ms: 60_000 });
    // The library keeps the wait it told: the model's next call, 1 s later, waits out the open time, then is the probe.
    await clock.advance(1_000);
    let ran = false;
    const again = plugin.execute({ toolName: "flaky", args: {} }, () => {
      ran = true;
      return "back";
    });
    await clock.advance(58_999);
    expect(ran).toBe(false);
    expect(await drive(clock, again)).toMatchObject({ status: "success", value: "back" });
    expect(clock.now()).toBe(60_500);
    expect(plugin.circuitState("flaky")).toBe("closed");
  });

  it("waits in place for a circuit due to close within the patience, and is its probe", async () => {
    const { clock, events, plugin, tool, calls } = flaky(5_000, 3_000);
    const result = await drive(clock, plugin.execute({ toolName: "flaky", args: {} }, tool));
    expect(result).toMatchObject({ status: "success", value: "back" });
    expect(calls()).toBe(3);
    expect(clock.sleeps).toEqual([500, 5_000]); // the backoff, then the circuit's open time
    expect(clock.now()).toBe(5_500);
    expect(plugin.circuitState("flaky")).toBe("closed");
    expect(events.map((event) => event.type)).toEqual([
      "retry",
      "circuit_opened",
      "retry",
      "circuit_half_opened",
      "circuit_closed",
      "retry_succeeded",
    ]);
  });
});

describe("waiting for recovery: the calls waiting when the probe starts", () => {
  // A call that met the open circuit within its patience waits for the probe's result, whatever
  // the probe's lease (circuitBreakerResetMs, 1 s by default): it is not turned away when another
  // waiting call becomes the probe (DESIGN.md Part 4: "when it succeeds the waiting calls run").
  it("with the defaults, the calls waiting for the circuit run once the probe succeeds", async () => {
    const clock = createFakeClock();
    const plugin = RetryReflectPlugin.create({ clock, circuitBreakerThreshold: 1 });
    await plugin.execute({ toolName: "t", args: {}, scope: "opener" }, broken);
    expect(plugin.circuits.retryAfterMs("t")).toBe(1_000); // the default open time
    await clock.advance(500); // 500 ms left: within the calls' patience (15 s)
    const runsAt: number[] = [];
    const tool = async () => {
      runsAt.push(clock.now());
      if (runsAt.length === 1) await clock.sleep(500); // the probe takes 500 ms
      return "ok";
    };
    const calls = ["a", "b"].map((scope) => plugin.execute({ toolName: "t", args: {}, scope }, tool));
    const outcomes = await Promise.all(calls.map((call) => drive(clock, call)));
    expect(outcomes.map((outcome) => outcome.status)).toEqual(["success", "success"]);
    expect(runsAt).toEqual([1_000, 1_500]); // the probe when the circuit half-opens; the other once it succeeded
    expect(plugin.circuitState("t")).toBe("closed");
    expect(clock.now()).toBe(1_500);
  });
});

describe("the failure that opens the circuit, told as temporary", () => {
  // DESIGN.md Part 4: "suggested_action is always the library's own action for the decision". A
  // TOOL_FAILED failure that opens the circuit (60 s, past the patience) is told as temporary: its
  // structured error asks for the same call later too, not for corrected arguments.
  it("says the same thing in its text and in its suggested_action", async () => {
    const clock = createFakeClock();
    const plugin = RetryReflectPlugin.create({ clock, circuitBreakerThreshold: 1, circuitBreakerResetMs: 60_000 });
    const outcome = await plugin.execute({ toolName: "t", args: {}, scope: "s" }, broken);
    expect(plugin.circuitState("t")).toBe("open");
    expect(outcome.status).toBe("reflect");
    if (outcome.status !== "reflect") return;
    expect(outcome.prompt).toContain("call it again then with the same arguments");
    expect(outcome.error.retryAfterMs).toBe(60_000);
    expect(outcome.error.suggestedAction).not.toMatch(/corrected arguments/);
    expect(outcome.error.suggestedAction).toBe(
      "Call 't' again with the same arguments after retry_after_ms, or continue without it and tell the user it is unavailable for now.",
    );
  });
});

describe("the rejection message", () => {
  it("is the temporary text and the structured error, byte for byte, for any tool name", async () => {
    for (const toolName of ["broken_api", `we'ird "tool" \\ name\n`]) {
      const clock = createFakeClock();
      const plugin = RetryReflectPlugin.create({ clock, circuitBreakerThreshold: 1, circuitBreakerResetMs: 60_000, maxRetries: 2 });
      await plugin.execute({ toolName, args: {} }, () => {
        throw new Error("boom");
      });
      await clock.advance(1500);
      const rejected = await plugin.execute({ toolName, args: {}, scope: "other" }, () => "never");
      expect(rejected.status).toBe("reflect");
      if (rejected.status !== "reflect") return;
      const [text, json] = rejected.message.split("\n\n");
      const message = `The circuit breaker of '${toolName}' is open after repeated failures.`;
      expect(text).toBe(
        `The tool '${toolName}' is temporarily unavailable: ${JSON.stringify(message)}. It may work again in about 59 s: call it again then with the same arguments (the same idempotency key, if it has one), or tell the user.`,
      );
      expect(rejected.prompt).toBe(text);
      // Byte for byte: the members in this order.
      const structured = {
        error_code: "CIRCUIT_OPEN",
        message,
        recoverable: true,
        suggested_action: `Call '${toolName}' again with the same arguments after retry_after_ms, or continue without it and tell the user it is unavailable for now.`,
        attempt: 1,
        max_retries: 2,
        retry_after_ms: 58_500,
      };
      expect(json).toBe(JSON.stringify(structured));
      expect(ToolError.isInstance(rejected.error) && rejected.error instanceof Error).toBe(true);
      expect(rejected.error.toJSON()).toMatchObject({ error_code: "CIRCUIT_OPEN", retry_after_ms: 58_500 });
    }
  });
});

describe("circuitBreakerKey", () => {
  it("shares one breaker between the tools a key function groups (one per upstream host)", async () => {
    const clock = createFakeClock();
    const keys: string[] = [];
    const plugin = RetryReflectPlugin.create({
      clock,
      maxRetries: 0,
      circuitBreakerThreshold: 2,
      circuitBreakerResetMs: 60_000, // open past the calls' patience: a call is turned away at once
      circuitBreakerKey: (call) => {
        const key = (call.args as { host: string }).host;
        keys.push(key);
        return key;
      },
    });
    const down = () => {
      throw new Error("upstream exploded");
    };
    await plugin.execute({ toolName: "get_orders", args: { host: "erp" }, scope: "a" }, down);
    await plugin.execute({ toolName: "get_stock", args: { host: "erp" }, scope: "b" }, down);
    expect(plugin.circuitState("erp")).toBe("open");
    let ran = false;
    const rejected = await plugin.execute({ toolName: "get_prices", args: { host: "erp" }, scope: "c" }, () => (ran = true));
    expect(ran).toBe(false);
    expect(rejected.status === "reflect" && rejected.error.code).toBe("CIRCUIT_OPEN");
    expect(rejected.status === "reflect" && rejected.message).toContain("The tool 'get_prices' is temporarily unavailable");
    // Another host is unaffected.
    expect((await plugin.execute({ toolName: "get_orders", args: { host: "crm" }, scope: "d" }, () => "ok")).status).toBe("success");
    expect(keys).toEqual(["erp", "erp", "erp", "crm"]); // called once per call
  });
});
