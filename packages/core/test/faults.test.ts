import { describe, expect, it } from "vitest";
import type { RetryReflectEvent, RetryReflectObserver } from "../src/events.js";
import { InMemoryIdempotencyStore, RetriesExhaustedError, RetryReflectPlugin } from "../src/index.js";
import type { IdempotencyStore } from "../src/stores.js";
import { createFakeClock, drive } from "../src/testing.js";
import { withoutExtend } from "./helpers/stores.js";
import { collectUnhandledRejections, settleEventLoop } from "./helpers/unhandled.js";

function gate(): { promise: Promise<void>; open: () => void } {
  let open!: () => void;
  const promise = new Promise<void>((resolve) => (open = resolve));
  return { promise, open };
}

describe("observers can never break a call or the process", () => {
  const unhandled = collectUnhandledRejections();

  it("an async observer rejecting on every event for 10,000 calls: no unhandled rejection, outcomes unchanged", async () => {
    const clock = createFakeClock();
    const rejecting: RetryReflectObserver = {
      async onEvent() {
        throw new Error("telemetry backend down");
      },
      async onCallStart() {
        throw new Error("telemetry backend down");
      },
      async onCallEnd() {
        throw new Error("telemetry backend down");
      },
    };
    const plugin = RetryReflectPlugin.create({
      clock,
      observers: [rejecting],
      initialBackoffMs: 0,
      circuitBreakerThreshold: 3,
      circuitBreakerResetMs: 1,
    });
    const statuses = new Map<string, number>();
    for (let index = 0; index < 10_000; index++) {
      const pending = plugin.execute({ toolName: `t${index % 7}`, args: { index }, scope: `run-${index % 13}` }, () => {
        if (index % 3 === 0) throw new Error("Invalid units");
        if (index % 5 === 0) throw Object.assign(new Error("HTTP 503"), { status: 503 });
        return "ok";
      });
      if (index % 50 === 0) await clock.advance(2);
      // Its waits (in-place retries, the gate, a wait for the circuit's recovery) run on the clock.
      let settled = false;
      void pending.then(() => (settled = true));
      await clock.advance(0);
      const outcome = settled ? await pending : await drive(clock, pending);
      statuses.set(outcome.status, (statuses.get(outcome.status) ?? 0) + 1);
    }
    await settleEventLoop();
    expect(unhandled).toEqual([]);
    expect(statuses.get("success")).toBeGreaterThan(0);
    expect(statuses.get("reflect")).toBeGreaterThan(0);
  });

  it("a runInContext that throws after running the tool does not change the outcome of a payment", async () => {
    const clock = createFakeClock();
    let payments = 0;
    const plugin = RetryReflectPlugin.create({
      clock,
      toolEffects: { pay: "write" },
      observers: [
        {
          runInContext: (_call, run) => {
            run();
            throw new Error("context bookkeeping failed");
          },
        },
      ],
    });
    const args = { amount: 10, idempotency_key: "pay-1" };
    const pay = () => {
      payments++;
      return { receipt: "r-1" };
    };
    const first = await plugin.execute({ toolName: "pay", args, scope: "run" }, pay);
    expect(first).toEqual({ status: "success", value: { receipt: "r-1" }, attempt: 1, replayed: false });
    const retry = await plugin.execute({ toolName: "pay", args, scope: "run" }, pay);
    expect(retry.status === "success" && retry.replayed).toBe(true);
    expect(payments).toBe(1);
  });

  it("an async runInContext that rejects, or that returns another value, does not change the outcome; the tool runs once", async () => {
    const clock = createFakeClock();
    let runs = 0;
    const plugin = RetryReflectPlugin.create({
      clock,
      observers: [
        {
          runInContext: (async (_call: unknown, run: () => unknown) => {
            await run();
            throw new Error("late failure in the observer");
          }) as unknown as RetryReflectObserver["runInContext"],
        },
        {
          runInContext: ((_call: unknown, run: () => unknown) => {
            run();
            run();
            return "not the tool's result";
          }) as unknown as RetryReflectObserver["runInContext"],
        },
      ],
    });
    const outcome = await plugin.execute({ toolName: "t", args: {} }, () => {
      runs++;
      return "ok";
    });
    expect(outcome).toEqual({ status: "success", value: "ok", attempt: 1, replayed: false });
    expect(runs).toBe(1);
    await settleEventLoop();
    expect(unhandled).toEqual([]);
  });
});

describe("the caller's abort always wins", () => {
  for (const observed of [false, true]) {
    it(`rejects with the signal's reason when the tool ignores the signal and fails afterwards${observed ? " (observed)" : ""}`, async () => {
      const clock = createFakeClock();
      const plugin = RetryReflectPlugin.create({ clock, observers: observed ? [{ onEvent() {} }] : [] });
      const controller = new AbortController();
      const held = gate();
      const reason = new Error("user pressed stop");
      const outcome = plugin.execute({ toolName: "t", args: {}, signal: controller.signal }, async () => {
        await held.promise;
        throw new Error("socket closed");
      });
      controller.abort(reason);
      held.open();
      await expect(outcome).rejects.toBe(reason);
    });

    it(`rejects with the signal's reason when the tool ignores the signal and succeeds afterwards${observed ? " (observed)" : ""}`, async () => {
      const clock = createFakeClock();
      const plugin = RetryReflectPlugin.create({ clock, observers: observed ? [{ onEvent() {} }] : [] });
      const controller = new AbortController();
      const held = gate();
      const reason = new Error("user pressed stop");
      const outcome = plugin.execute({ toolName: "t", args: {}, signal: controller.signal }, async () => {
        await held.promise;
        return "late";
      });
      controller.abort(reason);
      held.open();
      await expect(outcome).rejects.toBe(reason);
    });
  }

  it("a write that completes after the abort is stored: the retry replays it instead of paying again", async () => {
    const clock = createFakeClock();
    const plugin = RetryReflectPlugin.create({ clock, toolEffects: { pay: "write" } });
    const controller = new AbortController();
    const held = gate();
    let payments = 0;
    const args = { amount: 5, idempotency_key: "k-abort" };
    const first = plugin.execute({ toolName: "pay", args, signal: controller.signal }, async () => {
      await held.promise;
      payments++;
      return { receipt: payments };
    });
    await clock.advance(0);
    controller.abort(new Error("stop"));
    await expect(first).rejects.toThrow("stop"); // at once, the payment still running
    const meanwhile = await plugin.execute({ toolName: "pay", args }, () => {
      payments++;
      return { receipt: payments };
    });
    // Its key stays held while it runs: the same call later, never a second payment beside it.
    expect(meanwhile.status === "reflect" && meanwhile.error.code).toBe("IN_PROGRESS");
    held.open();
    await clock.advance(0);
    const retry = await plugin.execute({ toolName: "pay", args }, () => {
      payments++;
      return { receipt: payments };
    });
    expect(retry).toEqual({ status: "success", value: { receipt: 1 }, attempt: 1, replayed: true });
    expect(payments).toBe(1);
  });
});

describe("a store that throws or times out yields an outcome, never a rejection", () => {
  /**
   * The in-memory store with a fault: `"throw"` throws synchronously (a method that breaks the
   * promise-only contract, as a JavaScript store may: cast here), read by the guard like `"reject"`;
   * any other value is answered as it is, not in a promise.
   */
  function faultyStore(fault: Partial<Record<keyof IdempotencyStore, unknown>>): IdempotencyStore & { inner: InMemoryIdempotencyStore } {
    const inner = new InMemoryIdempotencyStore();
    const wrap = <K extends "begin" | "complete" | "release">(name: K) =>
      ((...args: never[]) => {
        const behaviour = fault[name];
        if (behaviour === "throw") throw new Error(`store ${name} failed`);
        if (behaviour === "reject") return Promise.reject(Object.assign(new Error(`store ${name} timed out`), { name: "TimeoutError" }));
        if (behaviour !== undefined) return behaviour;
        return (inner[name] as (...args: never[]) => unknown)(...args);
      }) as IdempotencyStore[K];
    return { inner, begin: wrap("begin"), complete: wrap("complete"), release: wrap("release") };
  }

  function setup(store: IdempotencyStore) {
    const events: RetryReflectEvent[] = [];
    const plugin = RetryReflectPlugin.create({
      clock: createFakeClock(),
      toolEffects: { pay: "write" },
      idempotency: { store },
      observers: [{ onEvent: (event) => events.push(event) }],
    });
    let payments = 0;
    const pay = (execute: () => unknown = () => ({ receipt: "r" })) =>
      plugin.execute({ toolName: "pay", args: { amount: 1, idempotency_key: "k-1" }, scope: "run" }, () => {
        payments++;
        return execute();
      });
    return { plugin, events, pay, payments: () => payments };
  }

  for (const behaviour of ["throw", "reject", undefined, { status: "nonsense" }] as const) {
    it(`begin that ${behaviour === undefined ? "returns nothing" : typeof behaviour === "string" ? `${behaviour}s` : "returns a malformed record"}: STORE_UNAVAILABLE, the write does not run`, async () => {
      const { pay, payments, events } = setup(faultyStore({ begin: behaviour ?? null }));
      const outcome = await pay();
      expect(outcome.status).toBe("reflect");
      if (outcome.status !== "reflect") return;
      expect(outcome.error.toJSON()).toMatchObject({ error_code: "STORE_UNAVAILABLE", recoverable: true });
      expect(outcome.message).toContain("was not performed");
      expect(payments()).toBe(0);
      expect(events.find((event) => event.type === "store_error")?.fields).toMatchObject({ tool_name: "pay", operation: "begin" });
    });
  }

  for (const behaviour of ["throw", "reject"] as const) {
    it(`complete that ${behaviour}s after the write ran: success, with a store_error event`, async () => {
      const { pay, payments, events } = setup(faultyStore({ complete: behaviour }));
      const outcome = await pay();
      expect(outcome).toEqual({ status: "success", value: { receipt: "r" }, attempt: 1, replayed: false });
      expect(payments()).toBe(1);
      expect(events.filter((event) => event.type === "store_error").map((event) => event.fields)).toEqual([
        expect.objectContaining({ tool_name: "pay", operation: "complete" }),
      ]);
    });

    it(`release that ${behaviour}s after a failure: the failure's own outcome, with a store_error event`, async () => {
      const { pay, events } = setup(faultyStore({ release: behaviour }));
      const outcome = await pay(() => {
        throw new Error("Invalid amount: must be positive");
      });
      expect(outcome.status === "reflect" && outcome.error.code).toBe("INVALID_ARGUMENTS");
      expect(events.some((event) => event.type === "store_error" && event.fields.operation === "release")).toBe(true);
    });
  }
});

describe("the bounded idempotency store never drops an in-flight lock", () => {
  it("maxEntries 3: while K's payment is in flight three other keys complete; K is stored, and a retry of K replays", async () => {
    const clock = createFakeClock();
    const store = new InMemoryIdempotencyStore({ maxEntries: 3, clock });
    const plugin = RetryReflectPlugin.create({ clock, toolEffects: { pay: "write" }, idempotency: { store } });
    const other = RetryReflectPlugin.create({ clock, toolEffects: { pay: "write" }, idempotency: { store } });
    const payments: string[] = [];
    const pay = (key: string, hold?: Promise<void>) => async () => {
      await hold;
      payments.push(key);
      return { receipt: key };
    };
    const held = gate();
    const k = plugin.execute({ toolName: "pay", args: { amount: 1, idempotency_key: "K" } }, pay("K", held.promise));
    await clock.advance(0);
    for (const key of ["A", "B", "C"]) {
      expect((await plugin.execute({ toolName: "pay", args: { amount: 1, idempotency_key: key } }, pay(key))).status).toBe("success");
    }
    // A second plugin on the same store sees K in flight and does not run it.
    const elsewhere = await other.execute({ toolName: "pay", args: { amount: 1, idempotency_key: "K" } }, pay("K"));
    expect(elsewhere.status === "reflect" && elsewhere.error.code).toBe("IN_PROGRESS");
    held.open();
    expect((await k).status).toBe("success");
    const retry = await plugin.execute({ toolName: "pay", args: { amount: 1, idempotency_key: "K" } }, pay("K"));
    expect(retry.status === "success" && retry.replayed).toBe(true);
    expect(payments.filter((key) => key === "K")).toEqual(["K"]);
  });

  it("a store full of in-flight locks refuses a new key with a recoverable IN_PROGRESS, without running it", async () => {
    const clock = createFakeClock();
    // Without `extend`: the hung writes below stop holding their keys when their lease runs out.
    const store = withoutExtend(new InMemoryIdempotencyStore({ maxEntries: 2, clock }));
    const plugin = RetryReflectPlugin.create({ clock, toolEffects: { pay: "write" }, idempotency: { store, leaseMs: 10_000 } });
    const held = gate();
    let runs = 0;
    const slow = async () => {
      runs++;
      await held.promise;
      return "ok";
    };
    const inFlight = [
      plugin.execute({ toolName: "pay", args: { idempotency_key: "a" } }, slow),
      plugin.execute({ toolName: "pay", args: { idempotency_key: "b" } }, slow),
    ];
    await clock.advance(0);
    const refused = await plugin.execute({ toolName: "pay", args: { idempotency_key: "c" }, scope: "other" }, slow);
    expect(refused.status).toBe("reflect");
    if (refused.status !== "reflect") return;
    expect(refused.error.toJSON()).toMatchObject({ error_code: "IN_PROGRESS", recoverable: true });
    expect(refused.error.retryAfterMs).toBeGreaterThan(0);
    expect(runs).toBe(2);
    held.open();
    await Promise.all(inFlight);
    // Room again: completed records make way for new locks.
    expect((await plugin.execute({ toolName: "pay", args: { idempotency_key: "c" }, scope: "third" }, () => "ok")).status).toBe("success");
    // A lock whose lease ran out makes room too.
    const hung = plugin.execute({ toolName: "pay", args: { idempotency_key: "d" }, scope: "4" }, () => new Promise(() => {}));
    const hung2 = plugin.execute({ toolName: "pay", args: { idempotency_key: "e" }, scope: "5" }, () => new Promise(() => {}));
    void hung;
    void hung2;
    await clock.advance(10_001);
    expect((await plugin.execute({ toolName: "pay", args: { idempotency_key: "f" }, scope: "6" }, () => "ok")).status).toBe("success");
  });

  it("10,000 concurrent same-key writes from two plugins with random failures and aborts: one side effect per completed key, no caller hanging", async () => {
    const clock = createFakeClock();
    const store = new InMemoryIdempotencyStore({ maxEntries: 50, clock });
    const options = {
      clock,
      toolEffects: { pay: "write" as const },
      idempotency: { store, leaseMs: 60_000 },
      circuitBreakerThreshold: 1_000_000,
      initialBackoffMs: 1,
      maxRetries: 5,
    };
    const plugins = [RetryReflectPlugin.create(options), RetryReflectPlugin.create(options)];
    let seed = 42;
    const random = () => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed / 2147483648;
    };
    const effects = new Map<string, number>();
    const keys = Array.from({ length: 100 }, (_, index) => `key-${index}`);
    const settled: Array<{ key: string; result: PromiseSettledResult<unknown> }> = [];
    const pending: Promise<void>[] = [];
    for (let index = 0; index < 10_000; index++) {
      const key = keys[index % keys.length] as string;
      const controller = new AbortController();
      const fails = random() < 0.3;
      const transient = random() < 0.5;
      const delay = Math.floor(random() * 20);
      if (random() < 0.1) void clock.sleep(Math.floor(random() * 20)).then(() => controller.abort(new Error("caller gave up")));
      const plugin = plugins[Math.floor(index / keys.length) % 2] as RetryReflectPlugin;
      const call = plugin.execute(
        { toolName: "pay", args: { amount: 7, idempotency_key: key }, scope: `run-${index}`, signal: controller.signal },
        async (_args, context) => {
          await clock.sleep(delay, context.signal);
          if (fails) throw transient ? Object.assign(new Error("HTTP 503"), { status: 503 }) : new Error("card declined");
          effects.set(key, (effects.get(key) ?? 0) + 1);
          return { receipt: key };
        },
      );
      pending.push(
        call.then(
          (value) => void settled.push({ key, result: { status: "fulfilled", value } }),
          (reason: unknown) => void settled.push({ key, result: { status: "rejected", reason } }),
        ),
      );
    }
    await clock.runAll(100_000);
    await Promise.all(pending);
    expect(settled).toHaveLength(10_000);
    for (const [key, count] of effects) expect([key, count]).toEqual([key, 1]);
    const completed = new Set(
      settled
        .filter((entry) => entry.result.status === "fulfilled" && (entry.result.value as { status: string }).status === "success")
        .map((entry) => entry.key),
    );
    for (const key of completed) expect(effects.get(key)).toBe(1);
    for (const entry of settled) {
      if (entry.result.status === "fulfilled" && (entry.result.value as { status: string }).status === "success") {
        expect((entry.result.value as { value: unknown }).value).toEqual({ receipt: entry.key });
      }
      if (entry.result.status === "rejected") expect(String(entry.result.reason)).toContain("caller gave up");
    }
  });
});

describe("bounded registries count reads and rejections as use", () => {
  it("maxCircuitBreakers 3: an open circuit that keeps rejecting calls is not evicted by new tools' failures", async () => {
    const clock = createFakeClock();
    // A 60 s open time, past the calls' patience: the calls are turned away (with the default, 1 s, they wait for the probe).
    const plugin = RetryReflectPlugin.create({
      clock,
      maxCircuitBreakers: 3,
      circuitBreakerThreshold: 1,
      circuitBreakerResetMs: 60_000,
      maxRetries: 0,
    });
    let brokenRuns = 0;
    const broken = () => {
      brokenRuns++;
      throw new Error("upstream exploded");
    };
    await plugin.execute({ toolName: "payments", args: {}, scope: "s0" }, broken);
    expect(plugin.circuitState("payments")).toBe("open");
    for (let index = 0; index < 20; index++) {
      const rejected = await plugin.execute({ toolName: "payments", args: {}, scope: `r${index}` }, broken);
      expect(rejected.status === "reflect" && rejected.error.code).toBe("CIRCUIT_OPEN");
      await plugin.execute({ toolName: `other-${index}`, args: {}, scope: `o${index}` }, () => {
        throw new Error("upstream exploded");
      });
    }
    expect(brokenRuns).toBe(1);
  });

  it("maxAttemptCounters 3: an exhausted scope that keeps being refused keeps its stop", async () => {
    const clock = createFakeClock();
    const plugin = RetryReflectPlugin.create({ clock, maxAttemptCounters: 3, maxRetries: 0, circuitBreakerThreshold: 1000 });
    let runs = 0;
    const first = await plugin.execute({ toolName: "search", args: {}, scope: "task" }, () => {
      runs++;
      throw new Error("upstream exploded");
    });
    expect(first.status === "failed" && first.reason).toBe("exhausted");
    for (let index = 0; index < 20; index++) {
      const refused = await plugin.execute({ toolName: "search", args: {}, scope: "task" }, () => {
        runs++;
        return "ok";
      });
      expect(refused.status === "failed" && refused.reason).toBe("exhausted");
      await plugin.execute({ toolName: `other-${index}`, args: {}, scope: "task" }, () => {
        throw new Error("Invalid input");
      });
    }
    expect(runs).toBe(1);
  });
});

describe("RETRIES_EXHAUSTED keeps the last failure as its cause", () => {
  const lastFailure = new Error("connect ECONNREFUSED 10.0.0.1:443");
  Object.assign(lastFailure, { code: "ECONNREFUSED" });

  function causes(error: unknown): unknown[] {
    const chain: unknown[] = [];
    for (let current = error; current !== undefined && chain.length < 10; current = (current as { cause?: unknown }).cause)
      chain.push(current);
    return chain;
  }

  // The tool keeps failing transiently: the stop comes with the give-up time (here 500 ms: the
  // failure of the in-place retry, 500 ms after the first).
  it("on the outcome, and on a later call stopped by the spent budget", async () => {
    const clock = createFakeClock();
    const plugin = RetryReflectPlugin.create({ clock, maxRetries: 1, giveUpMs: 500 });
    const outcome = plugin.execute({ toolName: "t", args: {}, scope: "s" }, () => {
      throw lastFailure;
    });
    await clock.runAll();
    const result = await outcome;
    expect(result.status === "failed" && result.error.code).toBe("RETRIES_EXHAUSTED");
    expect(causes(result.status === "failed" ? result.error : undefined)).toContain(lastFailure);
    const later = await plugin.execute({ toolName: "t", args: {}, scope: "s" }, () => "ok");
    expect(causes(later.status === "failed" ? later.error : undefined)).toContain(lastFailure);
  });

  it("on RetriesExhaustedError", async () => {
    const clock = createFakeClock();
    const plugin = RetryReflectPlugin.create({ clock, maxRetries: 0, giveUpMs: 500, onExhausted: "throw" });
    const error = await drive(
      clock,
      plugin
        .execute({ toolName: "t", args: {} }, () => {
          throw lastFailure;
        })
        .catch((thrown: unknown) => thrown),
    );
    expect(error).toBeInstanceOf(RetriesExhaustedError);
    expect(causes(error)).toContain(lastFailure);
  });
});

describe("an isolated circuit", () => {
  it("says it is isolated until reset, promising no time", async () => {
    const clock = createFakeClock();
    const plugin = RetryReflectPlugin.create({ clock });
    plugin.circuits.isolate("payments");
    const outcome = await plugin.execute({ toolName: "payments", args: {} }, () => "never");
    expect(outcome.status).toBe("failed");
    if (outcome.status !== "failed") return;
    expect(outcome.reason).toBe("circuit_open");
    expect(outcome.error.retryAfterMs).toBeUndefined();
    expect(outcome.message).not.toMatch(/may work again|about \d+ s/);
    expect(outcome.message).toContain("disabled");
    const json = JSON.parse(outcome.message.split("\n\n").at(-1) ?? "{}") as Record<string, unknown>;
    expect(json.retry_after_ms).toBeUndefined();
    expect(json).toMatchObject({ error_code: "CIRCUIT_OPEN", recoverable: false, details: { isolated: true } });
    plugin.circuits.reset("payments");
    expect((await plugin.execute({ toolName: "payments", args: {} }, () => "ok")).status).toBe("success");
  });
});
