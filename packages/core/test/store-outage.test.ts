import { describe, expect, it } from "vitest";
import type { RetryReflectEvent } from "../src/events.js";
import { type RetryReflectOptions, RetryReflectPlugin } from "../src/index.js";
import { CircuitBreaker } from "../src/primitives.js";
import type {
  CircuitAdmission,
  CircuitBreakerStore,
  CircuitPermit,
  CircuitResult,
  CircuitStoreSettings,
  CircuitTransition,
} from "../src/stores.js";
import { createFakeClock, drive, type FakeClock } from "../src/testing.js";

// The local view stands in (DESIGN Part 3, "Redis in production"): while the shared store cannot
// answer, the plugin's local breaker opens, half-opens and closes the circuit on its own. The fake
// store below behaves like the Redis one where it matters: its "server" is an in-memory breaker,
// a closed circuit and a success with no failure known are answered with no I/O, everything else
// is I/O, which fails as told: rejects, throws, or hangs until its own command timeout (on the
// fake clock) and then rejects.

type Mode = "up" | "reject" | "throw" | "hang";
const COMMAND_TIMEOUT_MS = 100;

class OutageStore implements CircuitBreakerStore {
  mode: Mode = "up";
  /** How `record` fails, when it differs from `mode`. */
  recordMode: Mode | undefined;
  io = 0;
  private last: CircuitTransition | undefined;
  private readonly failed = new Set<string>();
  readonly server: CircuitBreaker;

  constructor(private readonly clock: FakeClock) {
    this.server = new CircuitBreaker({ threshold: 3, resetMs: 10_000, clock, onTransition: (transition) => (this.last = transition) });
  }

  isClosed(key: string): boolean {
    return this.server.isClosed(key);
  }
  peek(key: string): number | undefined {
    return this.server.peek(key);
  }
  state(key: string) {
    return this.server.state(key);
  }

  acquire(key: string, _settings: CircuitStoreSettings): Promise<CircuitAdmission> {
    if (this.server.isClosed(key)) return Promise.resolve({ admitted: true, permit: { probe: 0 } });
    return this.io_(this.mode, () => ({ ...this.server.acquire(key), transition: this.last }));
  }

  record(
    key: string,
    permit: CircuitPermit,
    result: CircuitResult,
    _settings: CircuitStoreSettings,
  ): Promise<CircuitTransition | undefined> {
    if (result === "success" && permit.probe === 0 && this.server.isClosed(key) && !this.failed.has(key)) return Promise.resolve(undefined);
    return this.io_(this.recordMode ?? this.mode, () => {
      // Failures known here: the next success of the key must be told (as the Redis store does).
      if (result !== "neutral") this.failed[result === "failure" ? "add" : "delete"](key);
      if (result === "success") this.server.onSuccess(key, permit);
      else if (result === "failure") this.server.onFailure(key, permit);
      else this.server.onNeutral(key, permit);
      return this.last;
    });
  }

  async isolate(key: string): Promise<void> {
    this.server.isolate(key);
  }
  async reset(key?: string): Promise<void> {
    this.server.reset(key);
  }

  /** One round trip: answered now (after a tick), or failed as the mode says. */
  private io_<T>(mode: Mode, answer: () => T): Promise<T> {
    this.io++;
    this.last = undefined;
    if (mode === "throw") throw new Error("store down (throw)");
    if (mode === "reject") return Promise.reject(new Error("store down (reject)"));
    if (mode === "hang") {
      return this.clock.sleep(COMMAND_TIMEOUT_MS).then(() => {
        throw new Error("store command timed out");
      });
    }
    return Promise.resolve().then(answer);
  }
}

/**
 * A plugin over an `OutageStore`. Calls that meet the open circuit are turned away at once
 * (`waitForRecovery: false`) unless `options` say otherwise: most tests here look at which calls
 * the stand-in turns away and which it lets through.
 */
function setup(options: RetryReflectOptions = {}) {
  const clock = createFakeClock();
  const store = new OutageStore(clock);
  const events: RetryReflectEvent[] = [];
  const plugin = RetryReflectPlugin.create({
    clock,
    circuitBreakerStore: store,
    circuitBreakerThreshold: 3,
    circuitBreakerResetMs: 10_000,
    waitForRecovery: false,
    observers: [{ onEvent: (event) => events.push(event) }],
    ...options,
  });
  let scopes = 0;
  let runs = 0;
  const call = (result: "ok" | "fail") =>
    plugin.execute({ toolName: "search", args: {}, scope: `s${++scopes}` }, async () => {
      runs++;
      if (result === "fail") throw new Error("upstream exploded");
      return "ok";
    });
  const count = (type: string) => events.filter((event) => event.type === type).length;
  return { clock, store, plugin, events, count, runs: () => runs, call: (result: "ok" | "fail") => drive(clock, call(result)) };
}

/** Opens the circuit through the stand-in: three failures the store cannot record. */
async function openLocally(mode: Mode) {
  const context = setup();
  context.store.mode = mode;
  for (let i = 0; i < 3; i++) await context.call("fail");
  return context;
}

describe("the local view stands in while the circuit breaker store cannot answer", () => {
  for (const mode of ["reject", "throw", "hang"] as const) {
    it(`store that ${mode}s: 20 calls of a dead tool run it 3 times; circuit_opened once, store_error per lost record; rejected with retry_after, no store I/O`, async () => {
      const { store, call, runs, count, events, plugin, clock } = setup();
      store.mode = mode;
      const outcomes = [];
      for (let i = 0; i < 20; i++) outcomes.push(await call("fail"));
      expect(runs()).toBe(3);
      expect(count("circuit_opened")).toBe(1);
      expect(events.find((event) => event.type === "circuit_opened")?.fields).toMatchObject({ tool_name: "search", failures: 3 });
      const errors = events.filter((event) => event.type === "store_error").map((event) => event.fields.operation);
      expect(errors).toEqual(["record", "record", "record"]);
      // The third failure opened it: the model is told at once, as with an in-memory breaker, to call again after the open time.
      expect(outcomes[2]).toMatchObject({ status: "reflect", error: { code: "TOOL_FAILED", retryAfterMs: 10_000 } });
      for (const outcome of outcomes.slice(3)) {
        expect(outcome).toMatchObject({
          status: "reflect",
          error: { code: "CIRCUIT_OPEN", recoverable: true, retryAfterMs: expect.any(Number) },
        });
      }
      expect(store.io).toBe(3);
      expect(plugin.circuits.state("search")).toBe("open");
      // A hung store cost the three failures its command timeout each, and nothing after.
      expect(clock.now()).toBe(mode === "hang" ? 3 * COMMAND_TIMEOUT_MS : 0);
    });
  }

  it("after the open time, with the store still down: one probe among 10 calls in flight; its success closes the circuit", async () => {
    const { clock, call, runs, count, plugin } = await openLocally("reject");
    await clock.advance(10_000);
    const before = runs();
    const outcomes = await Promise.all(Array.from({ length: 10 }, () => call("ok")));
    expect(runs()).toBe(before + 1);
    expect(outcomes.filter((outcome) => outcome.status === "success")).toHaveLength(1);
    expect(outcomes.filter((outcome) => outcome.status === "reflect" && outcome.error.code === "CIRCUIT_OPEN")).toHaveLength(9);
    expect([count("circuit_half_opened"), count("circuit_closed")]).toEqual([1, 1]);
    expect(plugin.circuits.state("search")).toBe("closed");
    expect((await call("ok")).status).toBe("success");
  });

  it("waiting for recovery with the store still down: calls that meet the open circuit wait, one is the probe, the rest run after its success", async () => {
    const { clock, store, plugin, count } = setup({ waitForRecovery: true });
    store.mode = "reject";
    for (let i = 0; i < 3; i++) {
      await drive(
        clock,
        plugin.execute({ toolName: "search", args: {}, scope: `opener-${i}` }, () => {
          throw new Error("upstream exploded");
        }),
      );
    }
    expect(plugin.circuits.state("search")).toBe("open");
    await clock.advance(8_000);
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let ran = 0;
    const calls = Array.from({ length: 10 }, (_, index) =>
      plugin.execute({ toolName: "search", args: {}, scope: `w${index}` }, async () => {
        if (++ran === 1) await held;
        return "ok";
      }),
    );
    await clock.advance(0);
    // 2 s until the circuit lets its probe through: within the calls' patience; then they wait for the probe's result.
    expect(count("waiting_for_recovery")).toBe(10);
    await clock.advance(2_000);
    expect(ran).toBe(1); // the local view lets one probe through
    await clock.advance(2_000);
    expect(ran).toBe(1);
    release();
    const outcomes = await Promise.all(calls.map((call) => drive(clock, call)));
    expect(outcomes.map((outcome) => outcome.status)).toEqual(Array(10).fill("success"));
    expect(ran).toBe(10);
    expect([count("circuit_half_opened"), count("circuit_closed")]).toEqual([1, 1]);
    expect(plugin.circuits.state("search")).toBe("closed");
  });

  it("a failed probe with the store still down opens the circuit again for the open time", async () => {
    const { clock, call, runs, count, plugin } = await openLocally("hang");
    await clock.advance(10_000);
    expect(await call("fail")).toMatchObject({ status: "reflect", error: { code: "TOOL_FAILED", retryAfterMs: 10_000 } });
    expect(count("circuit_opened")).toBe(2);
    const before = runs();
    await clock.advance(9_000);
    expect(await call("ok")).toMatchObject({ status: "reflect", error: { code: "CIRCUIT_OPEN", retryAfterMs: 1_000 } });
    expect(runs()).toBe(before);
    expect(plugin.circuits.state("search")).toBe("open");
  });

  it("the store answers again: the local circuit stays open until its reset, asking the store nothing", async () => {
    const { clock, store, call, runs } = await openLocally("reject");
    store.mode = "up";
    const io = store.io;
    await clock.advance(5_000);
    for (let i = 0; i < 5; i++) expect(await call("ok")).toMatchObject({ status: "reflect", error: { code: "CIRCUIT_OPEN" } });
    expect(runs()).toBe(3);
    expect(store.io).toBe(io);
  });

  it("after the reset, the fleet's state is read: the store counts the failures again and opens the circuit", async () => {
    const { clock, store, call, count } = await openLocally("reject");
    store.mode = "up";
    await clock.advance(10_000);
    // The probe's failure is heard by the store (its count 1): the fleet's closed circuit rules again.
    expect((await call("fail")).status).toBe("reflect");
    expect((await call("fail")).status).toBe("reflect");
    expect(await call("fail")).toMatchObject({ status: "reflect", error: { code: "TOOL_FAILED", retryAfterMs: 10_000 } });
    expect(store.server.state("search")).toBe("open");
    expect(count("circuit_opened")).toBe(2); // the stand-in's, then the fleet's
  });

  it("after the reset, a circuit the fleet holds open (isolated elsewhere) rejects the call: the store decides", async () => {
    const { clock, store, call, runs, plugin } = await openLocally("throw");
    store.mode = "up";
    store.server.isolate("search"); // another replica isolated it meanwhile
    await clock.advance(10_000);
    expect(await call("ok")).toMatchObject({ status: "failed", reason: "circuit_open" });
    expect(runs()).toBe(3);
    expect(plugin.circuits.isIsolated("search")).toBe(true);
    expect(plugin.circuits.retryAfterMs("search")).toBe(Number.POSITIVE_INFINITY);
  });

  it("the fleet's probe fails and the store cannot hear it: the local circuit opens at once", async () => {
    const { clock, store, call, runs, count } = setup();
    for (let i = 0; i < 3; i++) await call("fail"); // opened fleet-wide, through the store
    await clock.advance(10_000);
    // The store gives the fleet's probe (acquire answers), then cannot record its failure.
    store.recordMode = "reject";
    expect(await call("fail")).toMatchObject({ status: "reflect", error: { code: "TOOL_FAILED", retryAfterMs: 10_000 } });
    expect(store.server.state("search")).toBe("half-open"); // the store never heard
    const before = runs();
    expect(await call("ok")).toMatchObject({ status: "reflect", error: { code: "CIRCUIT_OPEN" } });
    expect(runs()).toBe(before);
    expect(count("circuit_opened")).toBe(2);
  });

  it("50 failures in flight at once while the store hangs: each counted, the circuit opens exactly once", async () => {
    const { clock, store, count, plugin } = setup();
    store.mode = "hang";
    let scopes = 0;
    let ran = 0;
    const calls = Array.from({ length: 50 }, () =>
      plugin.execute({ toolName: "search", args: {}, scope: `p${++scopes}` }, async () => {
        ran++;
        throw new Error("upstream exploded");
      }),
    );
    await clock.advance(COMMAND_TIMEOUT_MS); // every record hangs at once, then times out
    const outcomes = await Promise.all(calls);
    expect(ran).toBe(50);
    expect(store.io).toBe(50);
    // The failures that found the circuit open are told to call again after its open time.
    expect(outcomes.filter((outcome) => outcome.status === "reflect" && outcome.error.retryAfterMs === 10_000).length).toBeGreaterThan(0);
    expect(count("circuit_opened")).toBe(1);
    expect(count("store_error")).toBe(50);
    expect(plugin.circuits.state("search")).toBe("open");
  });

  it("a success while the store is down forgets the failures counted locally (as in memory)", async () => {
    const { store, call, runs, count } = setup();
    store.mode = "reject";
    await call("fail");
    await call("fail");
    await call("ok");
    await call("fail");
    await call("fail");
    expect(count("circuit_opened")).toBe(0);
    expect(runs()).toBe(5);
  });
});
