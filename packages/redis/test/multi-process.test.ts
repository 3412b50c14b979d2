import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { type RedisServer, startRedis } from "./helpers/redis-server.js";
import { type Replica, startReplica, startReplicas } from "./helpers/replicas.js";

// Replicas as separate processes (test/helpers/replica.ts), each with its own client and plugin
// over the Redis stores of one real redis-server. Open times and leases are judged by the Redis
// server's clock, which a test cannot fake: the few waits here are real and short (a few hundred
// milliseconds), and every other check is a count.
//
// The processes are started once for the file (8, the most a test uses) and reused: each test's
// `init` gives a replica a new client, new stores and a new plugin under a prefix of the test's own
// (the last test's closed, its events dropped), so no test sees another's keys, circuits or events.
// A replica a test kills is replaced before the next. Starting ~35 processes (one set per test,
// each loading tsx, the sources and a Redis client) was most of this file's time.

const redis = await startRedis();
const pool: Replica[] = [];
beforeAll(async () => {
  if (redis !== undefined) pool.push(...(await startReplicas(8)));
}, 60_000);
afterAll(async () => {
  await Promise.all(pool.map((replica) => replica.kill()));
  await redis?.stop();
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
let prefixes = 0;

describe.skipIf(redis === undefined)("many processes, one Redis", { timeout: 60_000 }, () => {
  const server = redis as RedisServer;
  let replicas: Replica[] = [];

  async function fleet(count: number, init: Record<string, unknown> = {}, client: "node-redis" | "ioredis" = "node-redis") {
    const dead = pool.flatMap((replica, i) => (replica.exited ? [i] : []));
    await Promise.all(dead.map(async (i) => (pool[i] = await startReplica())));
    replicas = pool.slice(0, count);
    const prefix = `mp${++prefixes}:`;
    await Promise.all(
      replicas.map((replica, i) => replica.ask("init", { url: server.url, prefix, client: i % 2 === 1 ? "ioredis" : client, ...init })),
    );
    return replicas;
  }

  afterEach(async () => {
    // Each ends what it started: its client, stores and plugin (the process stays for the next test).
    await Promise.all(replicas.filter((replica) => !replica.exited).map((replica) => replica.ask("close")));
    replicas = [];
  });

  it("4,000 concurrent same-key writes from 4 processes (both clients): the tool runs exactly once; a later round replays its result everywhere", async () => {
    const fleetOf4 = await fleet(4);
    const rounds = await Promise.all(
      fleetOf4.map((replica) =>
        replica.ask<{ runs: number; outcomes: Record<string, number>; values: string[] }>("writes", {
          // 1,000 a process, all in flight at once (each held 100 ms): 4 connections' scripts interleave on the server.
          count: 1000,
          key: "order-1",
          holdMs: 100,
        }),
      ),
    );
    expect(rounds.reduce((sum, round) => sum + round.runs, 0)).toBe(1);
    for (const round of rounds) {
      // The runner's process shares its success; the others are told it is in progress (the write did not run there).
      for (const label of Object.keys(round.outcomes)) expect(["success", "replayed", "reflect:IN_PROGRESS"]).toContain(label);
    }
    const again = await Promise.all(
      fleetOf4.map((replica) =>
        replica.ask<{ runs: number; outcomes: Record<string, number>; values: string[] }>("writes", { count: 10, key: "order-1" }),
      ),
    );
    expect(again.reduce((sum, round) => sum + round.runs, 0)).toBe(0);
    const values = new Set(again.flatMap((round) => round.values));
    expect(values.size).toBe(1);
    for (const round of again) expect(round.outcomes).toEqual({ replayed: 10 });
    // A failure of the read tool `search`: its circuit's key, beside the write's.
    expect((await (fleetOf4[0] as Replica).ask<{ runs: number }>("calls", { count: 1, result: "fail" })).runs).toBe(1);
    // Every key carries the fleet's prefix; the idempotency key and the tool names appear only hashed.
    const keys = (await server.command("KEYS", "*")).split("\r\n").filter((line) => line.includes(":"));
    expect(keys.some((key) => key.includes(":cb:{"))).toBe(true);
    expect(keys.some((key) => key.includes(":idem:{"))).toBe(true);
    for (const key of keys) expect(key).toMatch(/^mp\d+:(cb|idem):\{[0-9a-f]{40}\}$/);
    expect(keys.join("\n")).not.toContain("order-1");
    expect(keys.join("\n")).not.toContain("search");
  });

  it("4 processes share one retry budget: 200 failing calls at once get the fleet's 20 in-place retries, not 20 each (or 600)", async () => {
    // ratio 0, 2 per second over 10 s: 20 retries fleet-wide in the window; a breaker that stays closed.
    const fleetOf4 = await fleet(4, {
      retryBudget: { ratio: 0, minPerSecond: 2, windowMs: 10_000 },
      initialBackoffMs: 10,
      threshold: 10_000,
    });
    const rounds = await Promise.all(
      fleetOf4.map((replica) =>
        replica.ask<{ runs: number; outcomes: Record<string, number> }>("calls", { count: 50, result: "unavailable" }),
      ),
    );
    const runs = rounds.reduce((sum, round) => sum + round.runs, 0);
    expect(runs).toBe(200 + 20);
    // Every call ends reflected: its retry not afforded (the 20 retried ones too, on their second failure).
    for (const round of rounds) expect(round.outcomes).toEqual({ "reflect:RETRY_BUDGET_SPENT": 50 });
    const keys = (await server.command("KEYS", "*")).split("\r\n").filter((line) => line.includes(":rb:{"));
    expect(keys).toHaveLength(1);
    expect(keys[0]).toMatch(/^mp\d+:rb:\{[0-9a-f]{40}\}$/);
  });

  it("4,000 concurrent begins of one key from 4 processes, 5 keys: exactly one acquired per key", async () => {
    // 1,000 script calls queued at once on each connection: a limit for throughput, not for a hung server.
    const fleetOf4 = await fleet(4, { commandTimeoutMs: 10_000 });
    for (let k = 0; k < 5; k++) {
      const acquired = await Promise.all(fleetOf4.map((replica) => replica.ask<number>("begins", { count: 1000, key: `key-${k}` })));
      expect(acquired.reduce((sum, each) => sum + each, 0)).toBe(1);
    }
  });

  it("replays across processes, with the scripts flushed in between: a write made by one replica is returned by another without running", async () => {
    const [a, b] = await fleet(2);
    const first = await (a as Replica).ask<{ runs: number; values: string[] }>("writes", { count: 1, key: "refund-7" });
    expect(first.runs).toBe(1);
    await server.flushScripts(); // every replica's next EVALSHA gets NOSCRIPT, and falls back to EVAL
    const second = await (b as Replica).ask<{ runs: number; values: string[]; outcomes: Record<string, number> }>("writes", {
      count: 1,
      key: "refund-7",
    });
    expect(second.runs).toBe(0);
    expect(second.outcomes).toEqual({ replayed: 1 });
    expect(second.values).toEqual(first.values);
  });

  it("a SIGKILLed holder blocks its key no longer than its lease", async () => {
    const [a, b] = await fleet(2, { leaseMs: 400 });
    expect(await (a as Replica).ask("hang", { key: "transfer-9" })).toBe("holding");
    await (a as Replica).kill();
    const during = await (b as Replica).ask<{ runs: number; outcomes: Record<string, number> }>("writes", { count: 1, key: "transfer-9" });
    expect(during).toMatchObject({ runs: 0, outcomes: { "reflect:IN_PROGRESS": 1 } });
    await sleep(450);
    const after = await (b as Replica).ask<{ runs: number; outcomes: Record<string, number> }>("writes", { count: 1, key: "transfer-9" });
    expect(after).toMatchObject({ runs: 1, outcomes: { success: 1 } });
  });

  it("a write slower than its lease keeps its key (the lease is renewed while it runs): another process does not run it", async () => {
    const [a, b] = await fleet(2, { leaseMs: 300 });
    type Round = { runs: number; outcomes: Record<string, number> };
    const slow = (a as Replica).ask<Round>("writes", { count: 1, key: "report-3", holdMs: 900 });
    await sleep(600); // two leases later
    expect(await (b as Replica).ask<Round>("writes", { count: 1, key: "report-3" })).toMatchObject({
      runs: 0,
      outcomes: { "reflect:IN_PROGRESS": 1 },
    });
    expect(await slow).toMatchObject({ runs: 1, outcomes: { success: 1 } });
    expect(await (b as Replica).ask<Round>("writes", { count: 1, key: "report-3" })).toMatchObject({ runs: 0, outcomes: { replayed: 1 } });
  });

  it("the breaker opens fleet-wide at the threshold, lets one probe through fleet-wide, and a success closes it everywhere", async () => {
    const fleetOf4 = await fleet(4, { threshold: 5, resetMs: 1000 });
    const [r0, r1, r2, r3] = fleetOf4 as [Replica, Replica, Replica, Replica];
    // 5 failures spread over two replicas, one after another: the 5th opens the circuit.
    for (const replica of [r0, r1, r0, r1])
      expect((await replica.ask<{ runs: number }>("calls", { count: 1, result: "fail" })).runs).toBe(1);
    expect(await r2.ask("state", { tool: "search" })).toBe("closed");
    const fifth = await r0.ask<{ runs: number; outcomes: Record<string, number> }>("calls", { count: 1, result: "fail" });
    // The failure that opens it is the tool's own (reflected, "call again after the open time").
    expect(fifth).toMatchObject({ runs: 1, outcomes: { "reflect:TOOL_FAILED": 1 } });
    expect(await r0.ask("state", { tool: "search" })).toBe("open");
    // The others learn it from the publish, within milliseconds.
    const learned = await Promise.all(
      [r1, r2, r3].map((replica) => replica.ask<number>("waitState", { tool: "search", state: "open", timeoutMs: 1000 })),
    );
    for (const ms of learned) {
      expect(ms).toBeGreaterThanOrEqual(0);
      expect(ms).toBeLessThan(200);
    }
    const rejected = await Promise.all(
      fleetOf4.map((replica) => replica.ask<{ runs: number; outcomes: Record<string, number> }>("calls", { count: 10, result: "ok" })),
    );
    for (const round of rejected) expect(round).toMatchObject({ runs: 0, outcomes: { "reflect:CIRCUIT_OPEN": 10 } });

    await sleep(1050);
    // 40 calls at once across the fleet after the open time, the probe held for 600 ms (a call that
    // comes after the probe closed the circuit is rightly let through; a probe held past its lease,
    // `resetMs`, would lose it): exactly one runs, and succeeds.
    const probing = await Promise.all(
      fleetOf4.map((replica) =>
        replica.ask<{ runs: number; outcomes: Record<string, number> }>("calls", { count: 10, result: "ok", holdMs: 600 }),
      ),
    );
    expect(probing.reduce((sum, round) => sum + round.runs, 0)).toBe(1);
    // The 39 others are turned away without running (waitForRecovery off in these replicas).
    expect(probing.reduce((sum, round) => sum + (round.outcomes["reflect:CIRCUIT_OPEN"] ?? 0), 0)).toBe(39);
    const closedIn = await Promise.all(
      fleetOf4.map((replica) => replica.ask<number>("waitState", { tool: "search", state: "closed", timeoutMs: 1000 })),
    );
    for (const ms of closedIn) expect(ms).toBeGreaterThanOrEqual(0);
    const healthy = await Promise.all(fleetOf4.map((replica) => replica.ask<{ runs: number }>("calls", { count: 5, result: "ok" })));
    expect(healthy.reduce((sum, round) => sum + round.runs, 0)).toBe(20);
  });

  it("waiting for recovery across processes: calls on B that meet A's running probe wait for it (none runs, none is turned away), and all run once A's probe closes the circuit", async () => {
    type Round = { runs: number; outcomes: Record<string, number>; ms: number };
    type Event = { type: string; fields: Record<string, unknown> };
    // The plugin's default (waitForRecovery, patienceMs 15 s): the probe's lease (resetMs, 3 s) fits in the patience.
    const [a, b] = (await fleet(2, { threshold: 2, resetMs: 3_000, waitForRecovery: true })) as [Replica, Replica];
    for (let i = 0; i < 2; i++) await a.ask("calls", { count: 1, result: "fail" });
    expect(await b.ask<number>("waitState", { tool: "search", state: "open", timeoutMs: 1000 })).toBeGreaterThanOrEqual(0);
    await sleep(3_050);
    // A takes the probe, which answers after 1 s.
    const probe = a.ask<Round>("calls", { count: 1, result: "ok", holdMs: 1_000 });
    for (let i = 0; i < 200; i++) {
      if ((await a.ask<Event[]>("events")).some((event) => event.type === "circuit_half_opened")) break;
      await sleep(5);
    }
    // Redis tells B the probe is running (on its first use of the tool): its 5 calls wait for the probe's result.
    const waiting = b.ask<Round>("calls", { count: 5, result: "ok" });
    expect(await probe).toMatchObject({ runs: 1, outcomes: { success: 1 } });
    const round = await waiting;
    expect(round).toMatchObject({ runs: 5, outcomes: { success: 5 } });
    // They ran after the probe (held 1 s), at their next look once A's success closed the circuit (B hears the publish; it looks every second).
    expect(round.ms).toBeGreaterThan(500);
    expect(round.ms).toBeLessThan(3_000);
    const events = await b.ask<Event[]>("events");
    expect(events.filter((event) => event.type === "waiting_for_recovery")).toHaveLength(5);
    expect(events.some((event) => event.type === "call_rejected")).toBe(false);
    expect(await b.ask("state", { tool: "search" })).toBe("closed");
  });

  it("Redis stopped while 3 replicas work: reads go on, writes fail closed without running, nothing waits past the limit; Redis back: writes run again", async () => {
    const fleetOf3 = await fleet(3, { commandTimeoutMs: 200 });
    type Round = { runs: number; outcomes: Record<string, number>; ms: number };
    // Calls in flight when the server goes away: each ends (success, or a fail-closed refusal).
    const inFlight = fleetOf3.map((replica) =>
      replica.ask<Round>("writes", { count: 20, key: `pre-${replica.pid}`, distinct: true, holdMs: 50 }),
    );
    await sleep(20);
    await server.stop();
    try {
      for (const round of await Promise.all(inFlight)) {
        for (const label of Object.keys(round.outcomes)) expect(["success", "reflect:STORE_UNAVAILABLE"]).toContain(label);
      }
      const writes = await Promise.all(
        fleetOf3.map((replica) => replica.ask<Round>("writes", { count: 10, key: `down-${replica.pid}`, distinct: true })),
      );
      for (const round of writes) {
        expect(round).toMatchObject({ runs: 0, outcomes: { "reflect:STORE_UNAVAILABLE": 10 } });
        expect(round.ms).toBeLessThan(1000);
      }
      const reads = await Promise.all(fleetOf3.map((replica) => replica.ask<Round>("calls", { count: 10, result: "ok" })));
      for (const round of reads) expect(round).toMatchObject({ runs: 10, outcomes: { success: 10 } });
      const failing = await Promise.all(fleetOf3.map((replica) => replica.ask<Round>("calls", { count: 2, result: "fail" })));
      for (const round of failing) expect(round.outcomes).toEqual({ "reflect:TOOL_FAILED": 2 });
      const events = await (fleetOf3[0] as Replica).ask<Array<{ type: string; fields: Record<string, unknown> }>>("events");
      const operations = new Set(events.filter((event) => event.type === "store_error").map((event) => event.fields.operation));
      // `complete` too when a write in flight ran but could not store its result (its caller still got the success);
      // `acquire` when a tool's first use could not read its circuit (the local view decided).
      expect(operations.has("begin") && operations.has("record")).toBe(true);
      for (const operation of operations) expect(["begin", "record", "complete", "acquire"]).toContain(operation);
    } finally {
      await server.restart();
    }
    // The clients reconnect by themselves: within a few seconds every replica's writes run again.
    // One conversation (one scope) tries every 50 ms: the refusals while the client reconnects
    // (`STORE_UNAVAILABLE`, "call again later") spend no attempt, so it is never stopped `exhausted`.
    for (const replica of fleetOf3) {
      let round: Round | undefined;
      for (let i = 0; i < 100 && round?.runs !== 1; i++) {
        round = await replica.ask<Round>("writes", { count: 1, key: `back-${replica.pid}-${i}` });
        if (round.runs !== 1) await sleep(50);
      }
      expect(round).toMatchObject({ runs: 1, outcomes: { success: 1 } });
    }
  });

  it("a dead tool called by 8 replicas at once reaches the tool no more than threshold + the calls already in flight", async () => {
    const fleetOf8 = await fleet(8, { threshold: 5, resetMs: 60_000 });
    // Each replica sends waves of 4 concurrent calls: at most 8 × 4 calls can be in flight when the circuit opens.
    let runs = 0;
    for (let wave = 0; wave < 5; wave++) {
      const rounds = await Promise.all(fleetOf8.map((replica) => replica.ask<{ runs: number }>("calls", { count: 4, result: "fail" })));
      runs += rounds.reduce((sum, round) => sum + round.runs, 0);
    }
    expect(runs).toBeLessThanOrEqual(5 + 8 * 4);
    expect(runs).toBeLessThan(8 * 4 * 5); // without sharing, every call would run
  });
});
