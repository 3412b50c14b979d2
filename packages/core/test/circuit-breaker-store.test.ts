import { describe, expect, it } from "vitest";
import type { RetryReflectEvent } from "../src/events.js";
import { InMemoryIdempotencyStore, InvalidOptionError, type RetryReflectOptions, RetryReflectPlugin } from "../src/index.js";
import { CircuitBreaker } from "../src/primitives.js";
import type {
  BudgetShare,
  BudgetShareReply,
  CircuitAdmission,
  CircuitBreakerStore,
  CircuitPermit,
  CircuitResult,
  CircuitStoreSettings,
  CircuitTransition,
} from "../src/stores.js";
import { createFakeClock, drive, type FakeClock } from "../src/testing.js";
import { withoutExtend } from "./helpers/stores.js";

// `circuitBreakerStore`: the plugin over a shared store whose `acquire`/`record` answer with promises.
// A fake "remote" store keeps the state in an in-memory breaker (the "server"), answers at once
// while the circuit is closed and nothing needs telling, and otherwise after a tick (its "I/O",
// counted). Faults are injected by making its methods throw or reject.

class FakeRemoteStore implements CircuitBreakerStore {
  io = 0;
  settingsSeen: CircuitStoreSettings[] = [];
  fail: { acquire?: "throw" | "reject"; record?: "throw" | "reject" } = {};
  private last: CircuitTransition | undefined;
  private readonly servers = new Map<string, CircuitBreaker>();

  constructor(private readonly clock: FakeClock) {}

  /** One server breaker per settings (a real store passes them with each script call). */
  private server(settings: CircuitStoreSettings): CircuitBreaker {
    const id = JSON.stringify(settings);
    let server = this.servers.get(id);
    if (server === undefined) {
      server = new CircuitBreaker({ ...settings, clock: this.clock, onTransition: (transition) => (this.last = transition) });
      this.servers.set(id, server);
    }
    return server;
  }

  private any(key: string): CircuitBreaker | undefined {
    for (const server of this.servers.values()) if (!server.isClosed(key)) return server;
    return undefined;
  }

  isClosed(key: string): boolean {
    return this.any(key) === undefined;
  }
  peek(key: string): number | undefined {
    return this.any(key)?.peek(key);
  }
  state(key: string) {
    return this.any(key)?.state(key) ?? "closed";
  }

  acquire(key: string, settings: CircuitStoreSettings): Promise<CircuitAdmission> {
    this.settingsSeen.push(settings);
    const server = this.server(settings);
    if (this.fail.acquire === "throw") throw new Error("store down (acquire)");
    if (server.isClosed(key)) return Promise.resolve({ admitted: true, permit: { probe: 0 } });
    this.io++;
    if (this.fail.acquire === "reject") return Promise.reject(new Error("store down (acquire)"));
    return Promise.resolve().then(() => {
      this.last = undefined;
      const decision = server.acquire(key);
      return { ...decision, transition: this.last };
    });
  }

  record(
    key: string,
    permit: CircuitPermit,
    result: CircuitResult,
    settings: CircuitStoreSettings,
  ): Promise<CircuitTransition | undefined> {
    const server = this.server(settings);
    // A success on a circuit with nothing to forget needs no I/O.
    if (result === "success" && permit.probe === 0 && server.peek(key) === undefined && server.isClosed(key) && !this.failed.has(key))
      return Promise.resolve(undefined);
    if (this.fail.record === "throw") throw new Error("store down (record)");
    this.io++;
    if (this.fail.record === "reject") return Promise.reject(new Error("store down (record)"));
    return Promise.resolve().then(() => {
      this.last = undefined;
      if (result === "success") {
        server.onSuccess(key, permit);
        this.failed.delete(key);
      } else if (result === "failure") {
        server.onFailure(key, permit);
        this.failed.add(key);
      } else server.onNeutral(key, permit);
      return this.last;
    });
  }
  private readonly failed = new Set<string>();

  isolate(key: string): Promise<void> {
    this.io++;
    return Promise.resolve().then(() => this.server(DEFAULT_SETTINGS).isolate(key));
  }
  reset(key?: string): Promise<void> {
    this.io++;
    return Promise.resolve().then(() => {
      for (const server of this.servers.values()) server.reset(key);
    });
  }
  get size(): number {
    let size = 0;
    for (const server of this.servers.values()) size += server.size;
    return size;
  }
}

/** A FakeRemoteStore that also shares windows of counts (`shareBudget`, as the Redis store's BUDGET script: per bucket, summed). */
class SharingStore extends FakeRemoteStore {
  shares = 0;
  sharing: "ok" | "reject" = "ok";
  private readonly windows = new Map<string, Map<number, [number, number]>>();

  constructor(private readonly now: FakeClock) {
    super(now);
  }

  async shareBudget(key: string, share: BudgetShare): Promise<BudgetShareReply> {
    this.shares++;
    await Promise.resolve();
    if (this.sharing === "reject") throw new Error("store down (share)");
    const bucket = Math.floor((this.now.now() * 10) / share.windowMs);
    const window = this.windows.get(key) ?? new Map<number, [number, number]>();
    this.windows.set(key, window);
    for (let at = 0; at < share.counts.length; at += 3) {
      const [age, first, second] = share.counts.slice(at, at + 3) as [number, number, number];
      const counts = window.get(bucket - age) ?? [0, 0];
      window.set(bucket - age, [counts[0] + first, counts[1] + second]);
    }
    for (const index of window.keys()) if (index <= bucket - 10) window.delete(index);
    return { taken: false, buckets: [...window].flatMap(([index, [first, second]]) => [bucket - index, first, second]) };
  }
}

const DEFAULT_SETTINGS: CircuitStoreSettings = { threshold: 5, resetMs: 60_000, maxResetMs: undefined };

function setup(options: RetryReflectOptions = {}) {
  const clock = createFakeClock();
  const store = new FakeRemoteStore(clock);
  const events: RetryReflectEvent[] = [];
  const plugin = RetryReflectPlugin.create({
    clock,
    circuitBreakerStore: store,
    observers: [{ onEvent: (event) => events.push(event) }],
    ...options,
  });
  let scopes = 0;
  let runs = 0;
  const call = (toolName: string, result: "ok" | "fail") =>
    plugin.execute({ toolName, args: {}, scope: `run-${++scopes}` }, async () => {
      runs++;
      if (result === "fail") throw new Error("upstream exploded");
      return "ok";
    });
  const types = () => events.map((event) => event.type);
  return { clock, store, plugin, events, call, types, runs: () => runs };
}

describe("circuitBreakerStore: the plugin over a shared, async store", () => {
  it("asks the store nothing on the healthy path: 1,000 successes, no I/O", async () => {
    const { store, call } = setup();
    for (let i = 0; i < 1000; i++) expect((await call("search", "ok")).status).toBe("success");
    expect(store.io).toBe(0);
  });

  it("opens at the threshold through the store's answer, emits circuit_opened once, and rejects the next call without running it", async () => {
    const { store, call, events, runs, plugin } = setup({ circuitBreakerThreshold: 5, circuitBreakerResetMs: 60_000 });
    for (let i = 0; i < 4; i++) expect((await call("search", "fail")).status).toBe("reflect");
    // The store's answer to the 5th says it opened the circuit: the model is told the tool is down for the open time.
    expect(await call("search", "fail")).toMatchObject({
      status: "reflect",
      error: { code: "TOOL_FAILED", recoverable: true, retryAfterMs: 60_000 },
    });
    const opened = events.filter((event) => event.type === "circuit_opened");
    expect(opened).toHaveLength(1);
    expect(opened[0]?.fields).toMatchObject({ tool_name: "search", failures: 5, reset_ms: 60_000 });
    const before = runs();
    // 60 s open, past the call's patience: turned away at once, as temporary.
    const rejected = await call("search", "ok");
    expect(rejected).toMatchObject({ status: "reflect", error: { code: "CIRCUIT_OPEN", recoverable: true, retryAfterMs: 60_000 } });
    expect(runs()).toBe(before);
    expect(plugin.circuits.state("search")).toBe("open");
    expect(store.io).toBe(5); // one record per failure; the rejection came from the local view
  });

  it("lets one probe through after the open time; its success closes the circuit (circuit_half_opened, circuit_closed)", async () => {
    const { clock, call, types, plugin } = setup({ circuitBreakerThreshold: 1, circuitBreakerResetMs: 1000 });
    await call("search", "fail");
    expect(plugin.circuits.state("search")).toBe("open");
    await clock.advance(1000);
    expect((await call("search", "ok")).status).toBe("success");
    expect(types()).toEqual(expect.arrayContaining(["circuit_opened", "circuit_half_opened", "circuit_closed"]));
    expect(plugin.circuits.state("search")).toBe("closed");
  });

  it("a store that rejects on acquire: store_error (operation acquire), and the call goes on from the local view", async () => {
    const { clock, store, call, events, runs } = setup({ circuitBreakerThreshold: 1, circuitBreakerResetMs: 1000 });
    await call("search", "fail");
    await clock.advance(1000); // the local view no longer holds it open: the store is asked, and fails
    store.fail.acquire = "reject";
    const before = runs();
    expect((await call("search", "ok")).status).toBe("success");
    expect(runs()).toBe(before + 1);
    const errors = events.filter((event) => event.type === "store_error");
    expect(errors.map((event) => event.fields)).toEqual([
      expect.objectContaining({ tool_name: "search", operation: "acquire", error: expect.stringContaining("store down") }),
    ]);
  });

  it("a store that throws on acquire while the local view holds the circuit open: the call is rejected, not run", async () => {
    // Fail fast (no wait for recovery): the rejection itself is what is looked at.
    const { clock, store, call, events, runs } = setup({ circuitBreakerThreshold: 1, circuitBreakerResetMs: 1000, waitForRecovery: false });
    await call("search", "fail");
    await clock.advance(500);
    store.fail.acquire = "throw";
    const before = runs();
    // The admission check reads the local view first: rejected without asking the store.
    expect(await call("search", "ok")).toMatchObject({ status: "reflect", error: { code: "CIRCUIT_OPEN", retryAfterMs: 500 } });
    expect(runs()).toBe(before);
    expect(events.some((event) => event.type === "store_error")).toBe(false);
  });

  it("waits for recovery fleet-wide: two processes' calls meet the open circuit, one probe among them, all run once it succeeds", async () => {
    const clock = createFakeClock();
    const store = new FakeRemoteStore(clock);
    const options = { clock, circuitBreakerStore: store, circuitBreakerThreshold: 1, circuitBreakerResetMs: 5_000 };
    const eventsOf: RetryReflectEvent[][] = [[], []];
    const [a, b] = eventsOf.map((events) =>
      RetryReflectPlugin.create({ ...options, observers: [{ onEvent: (event) => events.push(event) }] }),
    ) as [RetryReflectPlugin, RetryReflectPlugin];
    await a.execute({ toolName: "search", args: {}, scope: "opener" }, () => {
      throw new Error("upstream exploded");
    });
    expect(store.state("search")).toBe("open");
    // The probe is held until released; each process's call records when it ran.
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const ran: string[] = [];
    const tool = (name: string) => async () => {
      ran.push(name);
      if (ran.length === 1) await held;
      return name;
    };
    // B has never seen the circuit: the store's answer turns it away; A's local view does.
    const callB = b.execute({ toolName: "search", args: {}, scope: "run-b" }, tool("b"));
    const callA = a.execute({ toolName: "search", args: {}, scope: "run-a" }, tool("a"));
    await clock.advance(0);
    for (const events of eventsOf) {
      expect(events.filter((event) => event.type === "waiting_for_recovery").map((event) => event.fields)).toEqual([
        { tool_name: "search", wait_ms: 5_000 },
      ]);
    }
    await clock.advance(5_000);
    expect(ran).toHaveLength(1); // one probe, fleet-wide
    await clock.advance(3_000);
    expect(ran).toHaveLength(1); // the other waits for the probe's result
    release();
    const outcomes = await Promise.all([drive(clock, callA), drive(clock, callB)]);
    expect(outcomes).toMatchObject([
      { status: "success", value: "a" },
      { status: "success", value: "b" },
    ]);
    expect(ran).toHaveLength(2);
    expect(store.state("search")).toBe("closed");
  });

  for (const mode of ["throw", "reject"] as const) {
    it(`a store that ${mode}s on record: store_error (operation record), the outcome unchanged, nothing rejects`, async () => {
      const { store, call, events } = setup();
      store.fail.record = mode;
      const outcome = await call("search", "fail");
      expect(outcome.status).toBe("reflect");
      const errors = events.filter((event) => event.type === "store_error").map((event) => event.fields);
      expect(errors).toEqual([expect.objectContaining({ operation: "record", tool_name: "search" })]);
    });
  }

  it("passes each tool's own breaker settings with every store call", async () => {
    const { store, call, clock } = setup({
      circuitBreakerThreshold: 1,
      circuitBreakerResetMs: 1000,
      tools: { slow_api: { circuitBreakerResetMs: 5000, circuitBreakerMaxResetMs: 20_000 } },
    });
    await call("slow_api", "fail");
    await call("search", "fail");
    await clock.advance(5000);
    await call("slow_api", "ok");
    await call("search", "ok");
    expect(store.settingsSeen).toEqual(
      expect.arrayContaining([
        { threshold: 1, resetMs: 5000, maxResetMs: 20_000 },
        { threshold: 1, resetMs: 1000, maxResetMs: undefined },
      ]),
    );
  });

  it("plugin.circuits: isolate and reset return the store's promise; state reads the local view; restore refuses store-held circuits", async () => {
    const { plugin, call } = setup();
    const isolated = plugin.circuits.isolate("search");
    expect(isolated).toBeInstanceOf(Promise);
    await isolated;
    expect(plugin.circuits.state("search")).toBe("open");
    expect(plugin.circuits.isIsolated("search")).toBe(true);
    expect(await call("search", "ok")).toMatchObject({ status: "failed", reason: "circuit_open" });
    await plugin.circuits.reset("search");
    expect(plugin.circuits.state("search")).toBe("closed");
    expect(plugin.circuits.snapshot()).toEqual({ version: 1, breakers: {} });
    expect(() =>
      plugin.circuits.restore({ version: 1, breakers: { search: { state: "open", failures: 5, remainingMs: 1000 } } } as never),
    ).toThrow(TypeError);
  });

  it("parallel failures in flight at once each record in the store: the circuit opens exactly once", async () => {
    const { call, events } = setup();
    const outcomes = await Promise.all(Array.from({ length: 20 }, () => call("search", "fail")));
    expect(outcomes.every((outcome) => outcome.status === "reflect" || outcome.status === "failed")).toBe(true);
    expect(events.filter((event) => event.type === "circuit_opened")).toHaveLength(1);
  });
});

describe("circuitBreakerStore: options", () => {
  it("rejects a value without the store's methods, naming the option", () => {
    expect(() => RetryReflectPlugin.create({ circuitBreakerStore: {} as never })).toThrow(InvalidOptionError);
    expect(() => RetryReflectPlugin.create({ circuitBreakerStore: {} as never })).toThrow(/circuitBreakerStore/);
  });

  it("takes a failure-rate breaker with a store, at plugin level and per tool", () => {
    const store = new FakeRemoteStore(createFakeClock());
    expect(() => RetryReflectPlugin.create({ circuitBreakerStore: store, circuitBreakerFailureRate: 0.5 })).not.toThrow();
    expect(() =>
      RetryReflectPlugin.create({ circuitBreakerStore: store, tools: { search: { circuitBreakerFailureRate: 0.5 } } }),
    ).not.toThrow();
  });
});

// A failure-rate breaker over a store: each process judges the rate on its own calls, in memory;
// the failure that brings its window to the rate opens the fleet's circuit in the store. Two
// plugins over one store stand for two processes.
describe("circuitBreakerStore with circuitBreakerFailureRate", () => {
  // Calls meeting the open circuit are turned away at once (no wait for recovery): these tests look
  // at who is turned away and who probes; waiting over a store is tested above.
  const RATE: RetryReflectOptions = {
    waitForRecovery: false,
    circuitBreakerFailureRate: 0.5,
    circuitBreakerMinimumCalls: 10,
    circuitBreakerWindowMs: 10_000,
    circuitBreakerResetMs: 1000,
  };

  function processOn(store: FakeRemoteStore, clock: FakeClock, options: RetryReflectOptions = {}) {
    const events: RetryReflectEvent[] = [];
    const plugin = RetryReflectPlugin.create({
      clock,
      circuitBreakerStore: store,
      observers: [{ onEvent: (event) => events.push(event) }],
      ...RATE,
      ...options,
    });
    let runs = 0;
    let scopes = 0;
    const call = (result: "ok" | "fail", toolName = "search") =>
      plugin.execute({ toolName, args: {}, scope: `run-${++scopes}` }, async () => {
        runs++;
        if (result === "fail") throw new Error("upstream exploded");
        return "ok";
      });
    const opened = () => events.filter((event) => event.type === "circuit_opened").map((event) => event.fields);
    return { plugin, events, call, opened, runs: () => runs };
  }

  it("asks the store nothing while the rate stays under the threshold: 1,000 calls, one in three failing, no I/O", async () => {
    const clock = createFakeClock();
    const store = new FakeRemoteStore(clock);
    const { call, opened } = processOn(store, clock);
    for (let i = 0; i < 1000; i++) await call(i % 3 === 0 ? "fail" : "ok");
    expect(store.io).toBe(0);
    expect(opened()).toEqual([]);
  });

  it("the failure that brings the window to the rate opens the fleet's circuit: one record, circuit_opened with the window's failures", async () => {
    const clock = createFakeClock();
    const store = new FakeRemoteStore(clock);
    const { call, opened, plugin } = processOn(store, clock);
    for (let i = 0; i < 5; i++) expect((await call("ok")).status).toBe("success");
    for (let i = 0; i < 4; i++) await call("fail");
    expect(store.io).toBe(0); // 4 failures in 9 calls: under the minimum, nothing told
    expect(await call("fail")).toMatchObject({ status: "reflect", error: { code: "TOOL_FAILED", retryAfterMs: 1000 } });
    expect(store.io).toBe(1);
    expect(opened()).toEqual([expect.objectContaining({ tool_name: "search", failures: 5, reset_ms: 1000 })]);
    expect(store.state("search")).toBe("open");
    expect(plugin.circuits.state("search")).toBe("open");
  });

  it("one process's opening rejects the other's calls without running them; one probe fleet-wide; its success closes the circuit for both", async () => {
    const clock = createFakeClock();
    const store = new FakeRemoteStore(clock);
    const a = processOn(store, clock);
    const b = processOn(store, clock);
    for (let i = 0; i < 10; i++) await a.call("fail");
    expect(a.opened()).toHaveLength(1);
    expect(await b.call("ok")).toMatchObject({ status: "reflect", error: { code: "CIRCUIT_OPEN" } });
    expect(b.runs()).toBe(0);
    await clock.advance(1000);
    const [first, second] = await Promise.all([a.call("ok"), b.call("ok")]);
    expect([first.status, second.status].sort()).toEqual(["reflect", "success"]); // one probe; the other call rejected while it runs
    expect([first, second].find((outcome) => outcome.status === "reflect")).toMatchObject({ error: { code: "CIRCUIT_OPEN" } });
    expect(store.state("search")).toBe("closed");
    expect((await a.call("ok")).status).toBe("success");
    expect((await b.call("ok")).status).toBe("success");
  });

  it("a process told of the fleet's opening drops its window: its older failures do not re-open the circuit after it closes", async () => {
    const clock = createFakeClock();
    const store = new FakeRemoteStore(clock);
    const a = processOn(store, clock);
    const b = processOn(store, clock);
    for (let i = 0; i < 9; i++) await b.call("fail"); // 9 failures: under the minimum of 10 calls
    for (let i = 0; i < 10; i++) await a.call("fail");
    expect(await b.call("ok")).toMatchObject({ status: "reflect", error: { code: "CIRCUIT_OPEN" } }); // B learns of the opening
    await clock.advance(1000);
    expect((await a.call("ok")).status).toBe("success"); // the probe closes the circuit
    const io = store.io;
    // B's 10th call in the window would reach the rate (10 of 10) had it kept the 9 failures.
    expect((await b.call("fail")).status).toBe("reflect");
    expect(store.io).toBe(io);
    expect(store.state("search")).toBe("closed");
    expect(b.opened()).toEqual([]);
  });

  it("failures in flight when the circuit opens are stale: they reach neither the window nor the store", async () => {
    const clock = createFakeClock();
    const store = new FakeRemoteStore(clock);
    const a = processOn(store, clock, { circuitBreakerMinimumCalls: 5 });
    const outcomes = await Promise.all(Array.from({ length: 20 }, () => a.call("fail")));
    expect(outcomes).toHaveLength(20);
    expect(a.opened()).toHaveLength(1);
    expect(store.io).toBe(1);
  });

  it("a store that rejects the opening: store_error (record), and the stand-in opens the circuit here with the window's failures", async () => {
    const clock = createFakeClock();
    const store = new FakeRemoteStore(clock);
    const a = processOn(store, clock);
    store.fail.record = "reject";
    for (let i = 0; i < 10; i++) await a.call("fail");
    expect(a.events.filter((event) => event.type === "store_error").map((event) => event.fields)).toEqual([
      expect.objectContaining({ operation: "record", tool_name: "search" }),
    ]);
    expect(a.opened()).toEqual([expect.objectContaining({ failures: 10 })]);
    const runs = a.runs();
    expect(await a.call("ok")).toMatchObject({ status: "reflect", error: { code: "CIRCUIT_OPEN" } });
    expect(a.runs()).toBe(runs);
    expect(store.state("search")).toBe("closed"); // the store never heard of it
  });

  it("with shareBudget the window is the fleet's: one process's 10 failures in a row among the fleet's successes open nothing; the fleet's failures do", async () => {
    const clock = createFakeClock();
    const store = new SharingStore(clock);
    const a = processOn(store, clock);
    const b = processOn(store, clock);
    await b.call("fail"); // B's first failure: its counts go to the fleet at once
    for (let i = 0; i < 29; i++) await b.call("ok");
    await clock.advance(1000);
    await b.call("ok"); // a second on: B's 29 successes since go too
    for (let i = 0; i < 10; i++) await a.call("fail"); // 10 of 10 here; 11 of 41 fleet-wide
    expect(a.opened()).toEqual([]);
    expect(store.state("search")).toBe("closed");
    let opened = 0;
    for (let i = 0; i < 30 && store.isClosed("search"); i++) {
      await b.call("fail");
      opened = i + 1;
    }
    expect(store.state("search")).toBe("open");
    expect(opened).toBeLessThan(30); // the fleet reached 0.5 before B alone would have (30 failures of 60 calls)
    expect(b.opened()).toEqual([expect.objectContaining({ tool_name: "search", failures: expect.any(Number) })]);
    const [fields] = b.opened();
    expect((fields?.failures as number) >= 20).toBe(true);
    expect(await a.call("ok")).toMatchObject({ status: "reflect", error: { code: "CIRCUIT_OPEN" } });
  });

  it("with shareBudget, a healthy tool shares nothing; after an opening and the probe's close, two failures open nothing", async () => {
    const clock = createFakeClock();
    const store = new SharingStore(clock);
    const a = processOn(store, clock);
    for (let i = 0; i < 100; i++) await a.call("ok", "lookup");
    expect(store.shares).toBe(0);
    for (let i = 0; i < 10; i++) await a.call("fail");
    expect(store.state("search")).toBe("open");
    await clock.advance(1000);
    expect((await a.call("ok")).status).toBe("success"); // the probe closes it
    for (let i = 0; i < 9; i++) {
      await a.call("ok");
      await clock.advance(100);
    }
    await clock.advance(1000);
    expect((await a.call("fail")).status).toBe("reflect");
    expect((await a.call("fail")).status).toBe("reflect");
    expect(store.state("search")).toBe("closed");
  });

  it("with shareBudget rejecting: store_error (record), and the rate is judged on this process's calls", async () => {
    const clock = createFakeClock();
    const store = new SharingStore(clock);
    store.sharing = "reject";
    const a = processOn(store, clock);
    for (let i = 0; i < 10; i++) await a.call("fail");
    expect(a.events.some((event) => event.type === "store_error" && event.fields.operation === "record")).toBe(true);
    expect(store.state("search")).toBe("open");
  });

  it("per tool: only the tool with a rate judges one; the others keep the consecutive count", async () => {
    const clock = createFakeClock();
    const store = new FakeRemoteStore(clock);
    const a = processOn(store, clock, {
      circuitBreakerFailureRate: undefined,
      circuitBreakerThreshold: 3,
      tools: { search: { circuitBreakerFailureRate: 0.5 } },
    });
    for (let i = 0; i < 3; i++) await a.call("fail", "lookup");
    expect(store.state("lookup")).toBe("open");
    for (let i = 0; i < 9; i++) await a.call("fail");
    expect(store.state("search")).toBe("closed");
    await a.call("fail");
    expect(store.state("search")).toBe("open");
  });
});

describe("idempotency: a lost lease", () => {
  it("a write that outlives its lease (a store without extend): success for the caller, store_error (complete), nothing stored for replay", async () => {
    const clock = createFakeClock();
    const store = withoutExtend(new InMemoryIdempotencyStore({ clock }));
    const events: RetryReflectEvent[] = [];
    const plugin = RetryReflectPlugin.create({
      clock,
      toolEffects: { pay: "write" },
      idempotency: { store, leaseMs: 100 },
      observers: [{ onEvent: (event) => events.push(event) }],
    });
    let runs = 0;
    const pay = () =>
      plugin.execute({ toolName: "pay", args: { idempotency_key: "k1", amount: 5 } }, async () => {
        runs++;
        await clock.sleep(200);
        return "paid";
      });
    const first = pay();
    await clock.advance(200);
    expect(await first).toMatchObject({ status: "success", value: "paid" });
    expect(events.filter((event) => event.type === "store_error").map((event) => event.fields)).toEqual([
      expect.objectContaining({ operation: "complete", error: expect.stringContaining("lease") }),
    ]);
    const second = pay();
    await clock.advance(200);
    expect(await second).toMatchObject({ status: "success", replayed: false });
    expect(runs).toBe(2);
  });

  it("InMemoryIdempotencyStore: tokens increase; complete and release say whether the token still held the key", async () => {
    const clock = createFakeClock();
    const store = new InMemoryIdempotencyStore({ clock });
    const a = await store.begin("k", "fp", 100);
    expect(a.status).toBe("acquired");
    const tokenA = (a as { token: string }).token;
    await clock.advance(50);
    expect((await store.begin("k", "fp", 100)).status).toBe("in_progress");
    await clock.advance(50);
    expect(await store.complete("k", tokenA, "v", 1000)).toBe(false); // its lease ran out
    const b = await store.begin("k", "fp", 100);
    const tokenB = (b as { token: string }).token;
    expect(Number(tokenB)).toBeGreaterThan(Number(tokenA));
    expect(await store.release("k", tokenA)).toBe(false);
    expect(await store.complete("k", tokenB, "v", 1000)).toBe(true);
    expect(await store.begin("k", "fp", 100)).toMatchObject({ status: "completed", value: "v" });
  });

  it("a store with extend: the lease of a write slower than it is renewed while it runs, so another process does not run it", async () => {
    const clock = createFakeClock();
    const inner = new InMemoryIdempotencyStore({ clock });
    const renewed: number[] = [];
    // The in-memory store has no extend; a shared one does. This one renews by taking the lock again.
    const store = {
      begin: inner.begin.bind(inner),
      complete: inner.complete.bind(inner),
      release: inner.release.bind(inner),
      extend: async (key: string, token: string, leaseMs: number) => {
        renewed.push(clock.now());
        const lock = (inner as unknown as { locks: Map<string, { leaseUntil: number; token: string }> }).locks.get(key);
        if (lock?.token !== token) return false;
        lock.leaseUntil = clock.now() + leaseMs;
        return true;
      },
    };
    const options = { clock, toolEffects: { pay: "write" as const }, idempotency: { store, leaseMs: 1000 } };
    const processA = RetryReflectPlugin.create(options);
    const processB = RetryReflectPlugin.create(options);
    let runs = 0;
    const pay = (plugin: RetryReflectPlugin, ms: number) =>
      plugin.execute({ toolName: "pay", args: { idempotency_key: "slow-1" } }, async () => {
        runs++;
        await clock.sleep(ms);
        return "paid";
      });
    const slow = pay(processA, 3000);
    await clock.advance(2500); // past two leases: renewed at 500, 1000, 1500, 2000, 2500
    expect(await pay(processB, 0)).toMatchObject({ status: "reflect", error: { code: "IN_PROGRESS" } });
    await clock.advance(500);
    expect(await slow).toMatchObject({ status: "success", value: "paid" });
    expect(renewed.length).toBeGreaterThanOrEqual(4);
    const count = renewed.length;
    await clock.advance(5000);
    expect(renewed.length).toBe(count); // stopped when the write ended
    expect(await pay(processB, 0)).toMatchObject({ status: "success", replayed: true });
    expect(runs).toBe(1);
  });
});
