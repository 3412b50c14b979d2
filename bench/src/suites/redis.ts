import { type ChildProcess, spawn } from "node:child_process";
import { createRequire } from "node:module";
import { loadavg } from "node:os";
import type { RetryReflectPlugin } from "@retry-reflect/core";
import { formatBytes, formatCount, formatNs, formatRatio, round } from "../format.js";
import { allocatedPerCall, type Contestant, compare, median, type Timing } from "../measure.js";
import { type CoreModule, PENDING } from "../ours.js";
import { startRedisServer } from "../redis-server.js";
import type { Cell, SuiteResult, TargetResult } from "../report-types.js";

const ID = "redis";
const TITLE = "8. Redis stores";
const NOT_MEASURED = "not measured";
const INSTALL_NOTE =
  "redis-server is not installed (nor named by `BENCH_REDIS_SERVER`), so nothing in this suite was measured. Install it (`apt-get install -y redis-server`, Redis 7.0 on Debian 12; it does not need to run: the suite starts its own server on a free loopback port and stops it at the end) and run the suite again.";

/** Consecutive failures that open a circuit, in the fleet and in the round-trip plugins. */
const THRESHOLD = 5;
const RESET_MS = 60_000;
const REPLICAS = 50;
/**
 * The replicas run in child processes, this many to a process (each replica its own client, store
 * and plugin): 50 processes would take ~20 s of CPU just to start on this 2-core machine (node-redis
 * alone loads in ~0.3 s), 10 take a fifth of it.
 */
const REPLICAS_PER_PROCESS = 5;
const PROCESSES = REPLICAS / REPLICAS_PER_PROCESS;
/** Concurrent calls per replica per wave. */
const WAVE_SIZES = [1, 2, 5] as const;
/** Runs of the shared-breaker fleet per wave size (the in-memory fleet is deterministic: one run). */
const FLEET_REPEATS = 3;
/** A replica stops after this many waves even if it never saw the circuit open (a safety net, not a limit expected to be reached). */
const MAX_WAVES = 400;
/** The fleet runs 50 replicas on 2 shared cores: the default 100 ms command limit would measure the scheduler, not the store. */
const FLEET_COMMAND_TIMEOUT_MS = 2_000;
const ROUND_TRIP_CALLS = 100;
const LATENCY_SAMPLES = 2_000;
const LATENCY_BLOCK = 250;
/** A healthy call through a plugin with the Redis breaker store may cost at most this factor of the in-memory plugin's. */
const SUCCESS_MAX_RATIO = 1.3;
/** Interleaved rounds of the healthy-call comparison: the per-round ratio swings on a shared machine, 7 give a steadier median. */
const SUCCESS_ROUNDS = 7;

const MEMORY = "retry-reflect plugin.execute, in-memory breaker (default)";
const redisContestant = (kind: ClientKind) => `retry-reflect plugin.execute, RedisCircuitBreakerStore (${kind})`;

type ClientKind = "node-redis" | "ioredis";
const KINDS: readonly ClientKind[] = ["node-redis", "ioredis"];
type RedisModule = typeof import("@retry-reflect/redis");
type Plugin = RetryReflectPlugin;
type Stores = ReturnType<RedisModule["redisStores"]>;

// ---------------------------------------------------------------------------------------------
// The server: our own redis-server on a free loopback port, no persistence, killed by PID
// (../redis-server.ts).

/** Names another server binary (a build of Redis elsewhere, `valkey-server`); when set, only it is tried. */
const BINARY_VARIABLE = "BENCH_REDIS_SERVER";

// ---------------------------------------------------------------------------------------------
// Clients

interface Connection {
  readonly kind: ClientKind;
  /** What the stores are given. */
  readonly client: unknown;
  ping(): Promise<unknown>;
  command(args: string[]): Promise<unknown>;
  close(): Promise<void>;
}

async function connectClient(kind: ClientKind, url: string): Promise<Connection> {
  if (kind === "node-redis") {
    const { createClient } = await import("redis");
    const client = createClient({
      url,
      disableOfflineQueue: true,
      socket: { reconnectStrategy: (retries: number) => Math.min(retries * 50, 1000) },
    });
    client.on("error", () => {});
    await client.connect();
    return {
      kind,
      client,
      ping: () => client.ping(),
      command: (args) => client.sendCommand(args),
      close: () => client.close(),
    };
  }
  const { Redis } = await import("ioredis");
  const client = new Redis(url, { enableOfflineQueue: false, maxRetriesPerRequest: 0, lazyConnect: true });
  client.on("error", () => {});
  await client.connect();
  return {
    kind,
    client,
    ping: () => client.ping(),
    command: ([name, ...args]) => client.call(name as string, ...args),
    close: async () => {
      await client.quit();
    },
  };
}

/**
 * Calls of EVALSHA and EVAL the server counted since the last CONFIG RESETSTAT (every script call
 * is one of them), and the server's mean time per EVALSHA (`usec_per_call`, the script's run on the server alone).
 */
async function scriptCalls(admin: Connection): Promise<{ evalsha: number; eval: number; evalshaServerUs: number }> {
  const info = String(await admin.command(["INFO", "commandstats"]));
  const field = (name: string, key: string) => Number(new RegExp(`cmdstat_${name}:[^\\r\\n]*?\\b${key}=([\\d.]+)`).exec(info)?.[1] ?? 0);
  return { evalsha: field("evalsha", "calls"), eval: field("eval", "calls"), evalshaServerUs: field("evalsha", "usec_per_call") };
}

// ---------------------------------------------------------------------------------------------
// 1. Round trips per call

interface RoundTripRow {
  readonly operation: string;
  readonly expected: number;
  readonly perCall: Readonly<Record<ClientKind, number>>;
}

const ok = async (_args?: unknown) => ({ ok: true });
const exploding = async (_args?: unknown): Promise<never> => {
  throw new Error("upstream exploded");
};

function roundTripPlugin(core: CoreModule, stores: Stores): Plugin {
  return core.RetryReflectPlugin.create({
    toolEffects: { send_payment: "write" },
    circuitBreakerThreshold: THRESHOLD,
    circuitBreakerResetMs: RESET_MS,
    idempotency: { store: stores.idempotency },
    circuitBreakerStore: stores.circuitBreaker,
  });
}

async function roundTrips(
  core: CoreModule,
  redis: RedisModule,
  connections: readonly Connection[],
  admin: Connection,
  cleanup: Array<() => Promise<void>>,
): Promise<{ rows: RoundTripRow[]; unexpected: string[] }> {
  const perKind = new Map<ClientKind, number[]>();
  const unexpected: string[] = [];
  const operations: Array<{
    operation: string;
    expected: number;
    setup?: (plugin: Plugin) => Promise<void>;
    call: (plugin: Plugin, i: number) => Promise<unknown>;
  }> = [
    {
      operation: "healthy read call (closed circuit)",
      expected: 0,
      call: (plugin, i) => plugin.execute({ toolName: "search", args: { q: i }, scope: `rt-ok-${i}` }, ok),
    },
    {
      operation: 'failing read call (`new Error("upstream exploded")`: one failure recorded)',
      expected: 1,
      call: (plugin, i) => plugin.execute({ toolName: `flaky_${i}`, args: { q: i }, scope: `rt-fail-${i}` }, exploding),
    },
    {
      operation: "healthy call of a tool that failed here before (resets the shared count)",
      expected: 1,
      call: (plugin, i) => plugin.execute({ toolName: `flaky_${i}`, args: { q: i }, scope: `rt-heal-${i}` }, ok),
    },
    {
      operation: "guarded write, new key (begin + complete)",
      expected: 2,
      call: (plugin, i) =>
        plugin.execute(
          { toolName: "send_payment", args: { idempotency_key: `rt-${i}`, amount: 5 }, scope: `rt-w-${i}`, namespace: `rt-${i}` },
          ok,
        ),
    },
    {
      operation: "replayed write (completed key: begin answers with the result)",
      expected: 1,
      call: (plugin, i) =>
        plugin.execute(
          { toolName: "send_payment", args: { idempotency_key: `rt-${i}`, amount: 5 }, scope: `rt-r-${i}`, namespace: `rt-${i}` },
          ok,
        ),
    },
    {
      operation: `call rejected by an open circuit (opened by ${THRESHOLD} failures)`,
      expected: 0,
      setup: async (plugin) => {
        for (let i = 0; i < THRESHOLD; i++) await plugin.execute({ toolName: "dead", args: {}, scope: `rt-dead-${i}` }, exploding);
        if (plugin.circuitState("dead") !== "open")
          throw new Error(`round trips: the circuit of "dead" is ${plugin.circuitState("dead")}, not open`);
      },
      call: (plugin, i) => plugin.execute({ toolName: "dead", args: {}, scope: `rt-open-${i}` }, ok),
    },
  ];
  for (const connection of connections) {
    const stores = redis.redisStores({ client: connection.client, prefix: `bench-rt-${connection.kind}:` });
    cleanup.push(() => stores.close());
    await stores.circuitBreaker.subscribed;
    const plugin = roundTripPlugin(core, stores);
    // Warm up: each script once, so that the counts below are of cached scripts (EVALSHA), not of the first load (EVALSHA, NOSCRIPT, EVAL).
    await plugin.execute({ toolName: "warm", args: {}, scope: "warm-1" }, exploding);
    await plugin.execute({ toolName: "warm", args: {}, scope: "warm-2" }, ok);
    await plugin.execute({ toolName: "send_payment", args: { idempotency_key: "warm", amount: 5 }, scope: "warm-3" }, ok);
    const counts: number[] = [];
    for (const { operation, setup, call } of operations) {
      await setup?.(plugin);
      await admin.command(["CONFIG", "RESETSTAT"]);
      const statuses = new Map<string, number>();
      for (let i = 0; i < ROUND_TRIP_CALLS; i++) {
        const outcome = await call(plugin, i);
        const status = (outcome as { status: string }).status;
        statuses.set(status, (statuses.get(status) ?? 0) + 1);
      }
      // The client's connection is first in, first out: after its PONG, every command the calls sent has been run.
      await connection.ping();
      const { evalsha, eval: evals } = await scriptCalls(admin);
      counts.push((evalsha + evals) / ROUND_TRIP_CALLS);
      if (evals > 0) unexpected.push(`${connection.kind}, "${operation}": ${evals} EVAL (a script not cached)`);
      const summary = [...statuses].map(([status, count]) => `${count} ${status}`).join(", ");
      const want = operation.startsWith("failing") ? "reflect" : operation.startsWith("call rejected") ? "failed" : "success";
      if (statuses.get(want) !== ROUND_TRIP_CALLS)
        unexpected.push(`${connection.kind}, "${operation}": outcomes ${summary} (expected ${want})`);
    }
    perKind.set(connection.kind, counts);
  }
  const rows = operations.map(({ operation, expected }, index) => ({
    operation,
    expected,
    perCall: Object.fromEntries(KINDS.map((kind) => [kind, perKind.get(kind)?.[index] ?? Number.NaN])) as Record<ClientKind, number>,
  }));
  return { rows, unexpected };
}

// ---------------------------------------------------------------------------------------------
// 2. Latency

interface LatencyRow {
  readonly kind: ClientKind;
  readonly operation: string;
  readonly p50Ns: number;
  readonly p99Ns: number;
  readonly meanNs: number;
  readonly samples: number;
  readonly failures: number;
}

function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] as number;
}

async function latencies(
  core: CoreModule,
  redis: RedisModule,
  connections: readonly Connection[],
  admin: Connection,
  cleanup: Array<() => Promise<void>>,
): Promise<{ rows: LatencyRow[]; evalshaServerUs: number }> {
  interface Probe {
    readonly kind: ClientKind;
    readonly operation: string;
    readonly run: (i: number) => Promise<boolean>;
    readonly samples: number[];
    failures: number;
  }
  const probes: Probe[] = [];
  for (const connection of connections) {
    const stores = redis.redisStores({ client: connection.client, prefix: `bench-lat-${connection.kind}:` });
    cleanup.push(() => stores.close());
    await stores.circuitBreaker.subscribed;
    const plugin = roundTripPlugin(core, stores);
    const kind = connection.kind;
    probes.push(
      {
        kind,
        operation: "PING (the client's round trip, for scale)",
        run: async () => (await connection.ping()) === "PONG",
        samples: [],
        failures: 0,
      },
      {
        kind,
        operation: "one script call: `idempotency.begin` on a new key",
        run: async (i) => (await stores.idempotency.begin(`lat-begin-${i}`, "fp", 30_000)).status === "acquired",
        samples: [],
        failures: 0,
      },
      {
        kind,
        operation: "guarded write through the plugin (begin + tool + complete)",
        run: async (i) => {
          const outcome = await plugin.execute(
            { toolName: "send_payment", args: { idempotency_key: `lat-w-${i}`, amount: 5 }, scope: `lat-${i}`, namespace: `lat-${i}` },
            ok,
          );
          return outcome.status === "success" && !outcome.replayed;
        },
        samples: [],
        failures: 0,
      },
      {
        kind,
        operation: "replayed write through the plugin (begin answers)",
        run: async (i) => {
          const outcome = await plugin.execute(
            { toolName: "send_payment", args: { idempotency_key: `lat-w-${i}`, amount: 5 }, scope: `lat-r-${i}`, namespace: `lat-${i}` },
            ok,
          );
          return outcome.status === "success" && outcome.replayed;
        },
        samples: [],
        failures: 0,
      },
    );
  }
  // Warm-up (scripts loaded, JIT), on keys of their own.
  for (const probe of probes) for (let i = 0; i < 200; i++) await probe.run(-1 - i);
  await admin.command(["CONFIG", "RESETSTAT"]);
  // Interleaved blocks: every probe gets a share of each quiet or busy moment of the machine.
  for (let offset = 0; offset < LATENCY_SAMPLES; offset += LATENCY_BLOCK) {
    for (const probe of probes) {
      for (let i = offset; i < offset + LATENCY_BLOCK; i++) {
        const start = process.hrtime.bigint();
        let fine = false;
        try {
          fine = await probe.run(i);
        } catch {
          fine = false;
        }
        probe.samples.push(Number(process.hrtime.bigint() - start));
        if (!fine) probe.failures++;
      }
    }
  }
  const { evalshaServerUs } = await scriptCalls(admin);
  const rows = probes.map((probe) => {
    const sorted = [...probe.samples].sort((a, b) => a - b);
    return {
      kind: probe.kind,
      operation: probe.operation,
      p50Ns: percentile(sorted, 50),
      p99Ns: percentile(sorted, 99),
      meanNs: sorted.reduce((sum, each) => sum + each, 0) / sorted.length,
      samples: sorted.length,
      failures: probe.failures,
    };
  });
  return { rows, evalshaServerUs };
}

// ---------------------------------------------------------------------------------------------
// 3. Success path: the Redis breaker store against the in-memory default

interface SuccessComparison {
  readonly timings: Timing[];
  readonly allocations: Map<string, number>;
  /** Per client kind: the median over rounds of (Redis store's round mean / in-memory plugin's round mean). */
  readonly ratios: Map<ClientKind, number>;
  readonly roundRatios: Map<ClientKind, number[]>;
  /** EVALSHA + EVAL the server ran while the healthy calls were measured. */
  readonly scriptsDuring: number;
}

async function successPath(
  core: CoreModule,
  redis: RedisModule,
  connections: readonly Connection[],
  admin: Connection,
  cleanup: Array<() => Promise<void>>,
): Promise<SuccessComparison> {
  const args = { city: "nyc" };
  const tool = async (_args?: unknown) => 1;
  const memory = core.RetryReflectPlugin.create({});
  const contestants: Contestant[] = [
    ["floor: await tool()", () => tool(args)],
    [MEMORY, () => memory.execute({ toolName: "get_weather", args, callId: "call_1", scope: "run-1" }, tool)],
  ];
  for (const connection of connections) {
    const stores = redis.redisStores({ client: connection.client, prefix: `bench-sp-${connection.kind}:` });
    cleanup.push(() => stores.close());
    await stores.circuitBreaker.subscribed;
    const plugin = core.RetryReflectPlugin.create({
      idempotency: { store: stores.idempotency },
      circuitBreakerStore: stores.circuitBreaker,
    });
    const first = await plugin.execute({ toolName: "get_weather", args, callId: "call_1", scope: "run-1" }, tool);
    if (first.status !== "success") throw new Error(`success path (${connection.kind}): the first call ended ${first.status}`);
    contestants.push([
      redisContestant(connection.kind),
      () => plugin.execute({ toolName: "get_weather", args, callId: "call_1", scope: "run-1" }, tool),
    ]);
  }
  await admin.command(["CONFIG", "RESETSTAT"]);
  const timings = await compare(contestants, { rounds: SUCCESS_ROUNDS });
  const allocations = new Map<string, number>();
  for (const [name, fn] of contestants) allocations.set(name, await allocatedPerCall(fn));
  for (const connection of connections) await connection.ping();
  const { evalsha, eval: evals } = await scriptCalls(admin);
  const memoryTiming = timings.find((timing) => timing.name === MEMORY)!;
  const ratios = new Map<ClientKind, number>();
  const roundRatios = new Map<ClientKind, number[]>();
  for (const connection of connections) {
    const timing = timings.find((candidate) => candidate.name === redisContestant(connection.kind))!;
    const perRound = timing.roundAvgNs.map((avg, round) => avg / (memoryTiming.roundAvgNs[round] as number));
    roundRatios.set(connection.kind, perRound);
    ratios.set(connection.kind, median(perRound));
  }
  return { timings, allocations, ratios, roundRatios, scriptsDuring: evalsha + evals };
}

// ---------------------------------------------------------------------------------------------
// 4. The dead tool called by 50 replicas: child processes, each hosting a few replicas (a plugin with its own client each)

/**
 * A child process hosting `REPLICAS_PER_PROCESS` replicas (CommonJS, run with `node -e`): the built
 * packages (`dist/*.cjs`, the same source as the ESM the rest of the bench imports) and the clients,
 * by absolute paths resolved in the bench. Each replica has its own client, its own store and its
 * own plugin; they share the process's event loop. Messages `{ id, op, ...args }` get one reply
 * `{ id, result }` or `{ id, error }`. Times are `process.hrtime` (CLOCK_MONOTONIC): comparable
 * across processes on one machine.
 */
const HOST_SOURCE = `"use strict";
const paths = JSON.parse(process.env.RETRY_REFLECT_BENCH_PATHS);
const { RetryReflectPlugin } = require(paths.core);
const { redisStores } = require(paths.stores);
const TOOL = "flaky_upstream";
const now = () => Number(process.hrtime.bigint());
const label = (o) => (o.status === "failed" ? "failed:" + o.reason : o.status === "reflect" ? "reflect:" + o.error.code : o.status);
let replicas = [];
let scopes = 0;
async function connect(url, kind) {
  if (kind === "ioredis") {
    const Redis = require(paths.ioredis);
    const client = new Redis(url, { enableOfflineQueue: false, maxRetriesPerRequest: 0, lazyConnect: true });
    client.on("error", () => {});
    await client.connect();
    return client;
  }
  const { createClient } = require(paths.redis);
  const client = createClient({ url, disableOfflineQueue: true });
  client.on("error", () => {});
  await client.connect();
  return client;
}
function wave(replica, k, starts, outcomes) {
  const tool = async () => {
    starts.push(now());
    throw new Error("upstream exploded");
  };
  return Promise.all(
    Array.from({ length: k }, () => replica.plugin.execute({ toolName: TOOL, args: { q: "x" }, scope: "s" + ++scopes }, tool)),
  ).then((results) => {
    for (const o of results) outcomes[label(o)] = (outcomes[label(o)] || 0) + 1;
  });
}
async function run(replica, m) {
  const began = now();
  const starts = [];
  const outcomes = {};
  let waves = 0;
  while (replica.plugin.circuits.state(TOOL) !== "open" && waves < m.maxWaves) {
    waves++;
    await wave(replica, m.k, starts, outcomes);
  }
  return { replica, began, starts, waves, sawOpenAt: now(), open: replica.plugin.circuits.state(TOOL) === "open", outcomes };
}
const ops = {
  async connect(m) {
    replicas = await Promise.all(m.kinds.map(async (kind) => ({ kind, client: await connect(m.url, kind) })));
    return process.pid;
  },
  async init(m) {
    await Promise.all(
      replicas.map(async (replica) => {
        if (replica.stores) await replica.stores.close();
        replica.stores = undefined;
        replica.opened = [];
        replica.storeErrors = 0;
        const observers = [{ onEvent(e) { if (e.type === "circuit_opened") replica.opened.push(now()); else if (e.type === "store_error") replica.storeErrors++; } }];
        if (m.mode === "redis") {
          replica.stores = redisStores({ client: replica.client, prefix: m.prefix, commandTimeoutMs: m.commandTimeoutMs });
          await replica.stores.circuitBreaker.subscribed;
        }
        replica.plugin = RetryReflectPlugin.create({
          circuitBreakerThreshold: m.threshold,
          circuitBreakerResetMs: m.resetMs,
          observers,
          ...(replica.stores ? { circuitBreakerStore: replica.stores.circuitBreaker } : {}),
        });
      }),
    );
    return true;
  },
  async run(m) {
    const wait = (m.at - now()) / 1e6;
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    const runs = await Promise.all(replicas.map((replica) => run(replica, m)));
    return runs.map(({ replica, ...result }) => ({ ...result, pid: process.pid, kind: replica.kind, opened: replica.opened, storeErrors: replica.storeErrors }));
  },
  /** One more wave per replica, once every replica of the fleet saw the circuit open: nothing may reach the tool. */
  async after(m) {
    return Promise.all(
      replicas.map(async (replica) => {
        const starts = [];
        const outcomes = {};
        await wave(replica, m.k, starts, outcomes);
        return { after: starts.length, afterOutcomes: outcomes };
      }),
    );
  },
  async close() {
    await Promise.all(
      replicas.map(async (replica) => {
        if (replica.stores) await replica.stores.close();
        await (replica.kind === "ioredis" ? replica.client.quit() : replica.client.close());
      }),
    );
    replicas = [];
    setImmediate(() => process.disconnect());
    return true;
  },
};
process.on("message", (m) => {
  const op = ops[m.op];
  Promise.resolve()
    .then(() => op(m))
    .then(
      (result) => process.send({ id: m.id, result }),
      (error) => process.send({ id: m.id, error: error && error.stack ? error.stack : String(error) }),
    );
});
process.send({ id: 0, result: "ready" });
`;

interface ReplicaRun {
  readonly pid: number;
  readonly kind: ClientKind;
  readonly began: number;
  readonly starts: number[];
  readonly waves: number;
  readonly sawOpenAt: number;
  readonly open: boolean;
  readonly opened: number[];
  readonly storeErrors: number;
  readonly outcomes: Record<string, number>;
  readonly after: number;
  readonly afterOutcomes: Record<string, number>;
}

/** A child process hosting replicas. */
interface Host {
  readonly pid: number;
  ask<T>(op: string, args?: Record<string, unknown>): Promise<T>;
  /** Asks it to close its replicas' stores and clients, waits for it to exit (SIGKILL by PID after 3 s). */
  end(): Promise<void>;
  /** SIGKILL by PID. */
  kill(): void;
}

async function startHost(paths: Record<string, string>): Promise<Host> {
  const child: ChildProcess = spawn(process.execPath, ["--no-warnings", "-e", HOST_SOURCE], {
    stdio: ["ignore", "ignore", "pipe", "ipc"],
    env: { ...process.env, RETRY_REFLECT_BENCH_PATHS: JSON.stringify(paths) },
  });
  let stderr = "";
  child.stderr?.on("data", (chunk: Buffer) => {
    stderr = (stderr + chunk.toString("utf8")).slice(-2_000);
  });
  const waiting = new Map<number, { resolve: (value: unknown) => void; reject: (error: Error) => void }>();
  let next = 1;
  let exited = false;
  const exit = new Promise<void>((resolve) =>
    child.on("exit", (code, signal) => {
      exited = true;
      for (const entry of waiting.values())
        entry.reject(new Error(`fleet process ${child.pid} exited (${signal ?? code}): ${stderr.trim()}`));
      waiting.clear();
      resolve();
    }),
  );
  child.on("error", () => {});
  child.on("message", (raw) => {
    const reply = raw as { id: number; result?: unknown; error?: string };
    const entry = waiting.get(reply.id);
    if (entry === undefined) return;
    waiting.delete(reply.id);
    if (reply.error !== undefined) entry.reject(new Error(`fleet process ${child.pid}: ${reply.error}`));
    else entry.resolve(reply.result);
  });
  await new Promise<unknown>((resolve, reject) => waiting.set(0, { resolve, reject }));
  const kill = () => {
    if (!exited && child.pid !== undefined) {
      try {
        process.kill(child.pid, "SIGKILL");
      } catch {
        // already gone
      }
    }
  };
  const ask = <T>(op: string, args: Record<string, unknown> = {}): Promise<T> => {
    if (exited) return Promise.reject(new Error(`fleet process ${child.pid} has exited: ${stderr.trim()}`));
    const id = next++;
    return new Promise<T>((resolve, reject) => {
      waiting.set(id, { resolve: resolve as (value: unknown) => void, reject });
      child.send({ id, op, ...args });
    });
  };
  return {
    pid: child.pid as number,
    ask,
    async end() {
      if (exited) return;
      const timer = setTimeout(kill, 3_000);
      try {
        await ask("close");
      } catch {
        kill();
      }
      await exit;
      clearTimeout(timer);
    },
    kill,
  };
}

interface FleetRun {
  readonly mode: "redis" | "memory";
  readonly k: number;
  readonly repeat: number;
  /** Calls that reached the tool before each replica saw the circuit open. */
  readonly calls: number;
  /** Of those, calls that started before the reply that opened the circuit arrived (at the replica whose failure opened it). */
  readonly startedBeforeOpen: number;
  /** Calls that started after that reply arrived, before their own replica had learned of it. */
  readonly startedAfterOpen: number;
  readonly bound: number;
  /** Replicas whose local view read open at the end. */
  readonly replicasOpen: number;
  /** Calls that reached the tool in one more wave per replica, after every replica saw it open. */
  readonly callsAfter: number;
  /** From the opening reply to the last replica seeing the circuit open (after its wave ended: an upper bound of the publish delay), ms. */
  readonly allOpenAfterMs: number;
  /** From the common start to the last replica seeing it open, ms. */
  readonly wallMs: number;
  readonly wavesMax: number;
  readonly storeErrors: number;
  readonly outcomes: Record<string, number>;
  readonly openers: number;
}

function summarise(mode: FleetRun["mode"], k: number, repeat: number, runs: readonly ReplicaRun[], at: number): FleetRun {
  const starts = runs.flatMap((run) => run.starts);
  const opened = runs.flatMap((run) => run.opened);
  const openedAt = mode === "redis" && opened.length > 0 ? Math.min(...opened) : Number.NaN;
  const startedBeforeOpen = Number.isFinite(openedAt) ? starts.filter((start) => start < openedAt).length : starts.length;
  const outcomes: Record<string, number> = {};
  for (const run of runs) for (const [label, count] of Object.entries(run.outcomes)) outcomes[label] = (outcomes[label] ?? 0) + count;
  const lastSaw = Math.max(...runs.map((run) => run.sawOpenAt));
  return {
    mode,
    k,
    repeat,
    calls: starts.length,
    startedBeforeOpen,
    startedAfterOpen: starts.length - startedBeforeOpen,
    bound: THRESHOLD + REPLICAS * k,
    replicasOpen: runs.filter((run) => run.open).length,
    callsAfter: runs.reduce((sum, run) => sum + run.after, 0),
    allOpenAfterMs: Number.isFinite(openedAt) ? (lastSaw - openedAt) / 1e6 : Number.NaN,
    wallMs: (lastSaw - at) / 1e6,
    wavesMax: Math.max(...runs.map((run) => run.waves)),
    storeErrors: runs.reduce((sum, run) => sum + run.storeErrors, 0),
    outcomes,
    openers: runs.filter((run) => run.opened.length > 0).length,
  };
}

async function deadToolFleet(url: string): Promise<{ runs: FleetRun[]; startMs: number; processes: number }> {
  const require = createRequire(import.meta.url);
  const paths = {
    core: require.resolve("@retry-reflect/core"),
    stores: require.resolve("@retry-reflect/redis"),
    redis: require.resolve("redis"),
    ioredis: require.resolve("ioredis"),
  };
  const began = Date.now();
  const settled = await Promise.allSettled(Array.from({ length: PROCESSES }, () => startHost(paths)));
  const hosts = settled.flatMap((each) => (each.status === "fulfilled" ? [each.value] : []));
  try {
    const failed = settled.find((each) => each.status === "rejected");
    if (failed !== undefined) throw new Error(`a fleet process did not start: ${String((failed as PromiseRejectedResult).reason)}`);
    // Half the replicas on node-redis, half on ioredis (alternating within each process).
    await Promise.all(
      hosts.map((host, h) =>
        host.ask("connect", {
          url,
          kinds: Array.from({ length: REPLICAS_PER_PROCESS }, (_, r) => KINDS[(h * REPLICAS_PER_PROCESS + r) % 2]),
        }),
      ),
    );
    const startMs = Date.now() - began;
    const runs: FleetRun[] = [];
    let prefixes = 0;
    for (const k of WAVE_SIZES) {
      const plan: Array<{ mode: FleetRun["mode"]; repeat: number }> = [{ mode: "memory", repeat: 1 }];
      for (let repeat = 1; repeat <= FLEET_REPEATS; repeat++) plan.push({ mode: "redis", repeat });
      for (const { mode, repeat } of plan) {
        const prefix = `bench-fleet-${process.pid}-${++prefixes}:`;
        await Promise.all(
          hosts.map((host) =>
            host.ask("init", { mode, prefix, threshold: THRESHOLD, resetMs: RESET_MS, commandTimeoutMs: FLEET_COMMAND_TIMEOUT_MS }),
          ),
        );
        // A common start, 200 ms ahead on the shared monotonic clock, so that every process has its message by then.
        const at = Number(process.hrtime.bigint()) + 200e6;
        const results = await Promise.all(
          hosts.map((host) => host.ask<Omit<ReplicaRun, "after" | "afterOutcomes">[]>("run", { at, k, maxWaves: MAX_WAVES })),
        );
        const after = await Promise.all(hosts.map((host) => host.ask<Pick<ReplicaRun, "after" | "afterOutcomes">[]>("after", { k })));
        const merged = results.flatMap((replicas, h) => replicas.map((result, r) => ({ ...result, ...after[h]![r]! })));
        runs.push(summarise(mode, k, repeat, merged, at));
      }
    }
    return { runs, startMs, processes: hosts.length };
  } finally {
    await Promise.all(hosts.map((host) => host.end().catch(() => host.kill())));
  }
}

// ---------------------------------------------------------------------------------------------

function pendingResult(method: string, notes: string[], measured: string): SuiteResult {
  const rows: Record<string, Cell>[] = [
    { measure: "round trips per call", value: measured },
    { measure: "latency of a script call and of a guarded write", value: measured },
    { measure: "healthy call with the Redis breaker store vs in memory", value: measured },
    { measure: `${REPLICAS} replicas calling a dead tool`, value: measured },
  ];
  return {
    id: ID,
    title: TITLE,
    method,
    tables: [{ table: { columns: ["measure", "value"], rows } }],
    targets: [
      {
        name: "Redis breaker store: healthy call",
        target: `≤ ${SUCCESS_MAX_RATIO}× the in-memory plugin's ns/call (no I/O on a closed circuit)`,
        measured,
        met: null,
      },
      {
        name: `Redis breaker store: ${REPLICAS} replicas, dead tool`,
        target: `calls reaching the tool ≤ threshold + calls already in flight when it opened (≤ ${REPLICAS} × K)`,
        measured,
        met: null,
      },
    ],
    notes,
    data: { measured: false },
  };
}

const METHOD =
  `Its own \`redis-server\` (started by the suite on a free loopback port, \`--save "" --appendonly no\`, in a temp dir; stopped by PID at the end), node-redis 5 and ioredis 5 clients (offline queues off), \`redisStores({ client, prefix })\` with the default \`commandTimeoutMs\` (100 ms) except in the fleet. ` +
  `Round trips: \`CONFIG RESETSTAT\`, ${ROUND_TRIP_CALLS} sequential calls, a PING on the client's connection, then EVALSHA + EVAL calls from \`INFO commandstats\` divided by the calls (scripts warmed first). ` +
  `Latency: wall clock per call, ${formatCount(LATENCY_SAMPLES)} sequential samples per row in interleaved blocks of ${LATENCY_BLOCK}. ` +
  `Healthy call: mitata with process CPU time as its clock, ${SUCCESS_ROUNDS} interleaved rounds of ≥ 120 ms, each contestant's median round; the ratio is the median over rounds of (Redis store's round / in-memory plugin's same round). ` +
  `Fleet: ${REPLICAS} replicas in ${PROCESSES} child processes of ${REPLICAS_PER_PROCESS} (each replica its own client, half node-redis and half ioredis, and its own plugin with a RedisCircuitBreakerStore on one shared prefix, or with the in-memory breaker), threshold ${THRESHOLD}, open time ${RESET_MS / 1000} s; from a common start each sends waves of K concurrent calls (each in its own scope) to a tool that throws \`new Error("upstream exploded")\` until its own view of the circuit reads open.`;

/** 8. Redis stores: round trips, latency, the healthy call with a shared breaker, and a fleet calling a dead tool. */
export async function redis(core: CoreModule | undefined): Promise<SuiteResult> {
  if (core === undefined) return pendingResult(METHOD, [], PENDING);
  const server = await startRedisServer(process.env[BINARY_VARIABLE] || undefined);
  if (server === undefined) return pendingResult(METHOD, [INSTALL_NOTE], `${NOT_MEASURED} (redis-server not installed)`);
  const redisModule: RedisModule = await import("@retry-reflect/redis");

  const cleanup: Array<() => Promise<void>> = [];
  cleanup.push(() => server.stop());
  try {
    const admin = await connectClient("node-redis", server.url);
    cleanup.push(() => admin.close());
    const connections: Connection[] = [];
    for (const kind of KINDS) {
      const connection = await connectClient(kind, server.url);
      cleanup.push(() => connection.close());
      connections.push(connection);
    }
    const loadAtStart = loadavg()[0]!;
    const seconds: Record<string, number> = {};
    const timed = async <T>(part: string, run: () => Promise<T>): Promise<T> => {
      const began = Date.now();
      try {
        return await run();
      } finally {
        seconds[part] = round((Date.now() - began) / 1000, 1);
      }
    };

    const trips = await timed("round trips", () => roundTrips(core, redisModule, connections, admin, cleanup));
    const { rows: latency, evalshaServerUs } = await timed("latency", () => latencies(core, redisModule, connections, admin, cleanup));
    // One client is enough here: a closed circuit never touches it (the script count below proves it).
    const success = await timed("healthy call", () =>
      successPath(
        core,
        redisModule,
        connections.filter((connection) => connection.kind === "node-redis"),
        admin,
        cleanup,
      ),
    );
    const loadBeforeFleet = loadavg()[0]!;
    const fleet = await timed("fleet", () => deadToolFleet(server.url));
    const fleetSeconds = seconds.fleet!;
    const loadAtEnd = loadavg()[0]!;

    // --- tables
    const tripRows: Record<string, Cell>[] = trips.rows.map((row) => ({
      operation: row.operation,
      expected: row.expected,
      "node-redis": round(row.perCall["node-redis"], 2),
      ioredis: round(row.perCall.ioredis, 2),
      "as expected": KINDS.every((kind) => row.perCall[kind] === row.expected) ? "yes" : "no",
    }));

    const latencyRows: Record<string, Cell>[] = latency.map((row) => ({
      client: row.kind,
      operation: row.operation,
      p50: formatNs(row.p50Ns),
      p99: formatNs(row.p99Ns),
      mean: formatNs(row.meanNs),
      samples: formatCount(row.samples),
      "failed or unexpected": row.failures,
    }));

    const memoryTiming = success.timings.find((timing) => timing.name === MEMORY)!;
    const floorTiming = success.timings[0]!;
    const successRows: Record<string, Cell>[] = success.timings.map((timing) => {
      const kind = KINDS.find((each) => timing.name === redisContestant(each));
      return {
        contestant: timing.name,
        "ns/call": formatNs(timing.avgNs),
        p50: formatNs(timing.p50Ns),
        "overhead over floor": timing === floorTiming ? "—" : formatNs(timing.avgNs - floorTiming.avgNs),
        "this / in-memory: median of per-round ratios":
          kind === undefined ? (timing === memoryTiming ? "1.00×" : "—") : formatRatio(success.ratios.get(kind)!),
        "this / in-memory: ratio of the median rounds": timing === floorTiming ? "—" : formatRatio(timing.avgNs / memoryTiming.avgNs),
        "heap allocated/call": formatBytes(success.allocations.get(timing.name) ?? Number.NaN),
      };
    });

    const fleetRows: Record<string, Cell>[] = [];
    for (const k of WAVE_SIZES) {
      const memoryRun = fleet.runs.find((run) => run.mode === "memory" && run.k === k)!;
      const redisRuns = fleet.runs.filter((run) => run.mode === "redis" && run.k === k);
      const middle = [...redisRuns].sort((a, b) => a.calls - b.calls)[redisRuns.length >> 1]!;
      fleetRows.push({
        K: k,
        breaker: "in memory, one per replica",
        "calls that reached the tool": `${memoryRun.calls}`,
        "started before the opening reply arrived / after": "—",
        "bound: threshold + replicas × K": "—",
        "most waves per replica": memoryRun.wavesMax,
        "replicas open / tool calls after": `${memoryRun.replicasOpen} / ${memoryRun.callsAfter}`,
        "last replica saw it open": "—",
      });
      fleetRows.push({
        K: k,
        breaker: `RedisCircuitBreakerStore, shared (median of ${redisRuns.length} runs; all runs)`,
        "calls that reached the tool": `${middle.calls} (${redisRuns.map((run) => run.calls).join(", ")})`,
        "started before the opening reply arrived / after": `${middle.startedBeforeOpen} / ${middle.startedAfterOpen} (after: ${redisRuns.map((run) => run.startedAfterOpen).join(", ")})`,
        "bound: threshold + replicas × K": `${middle.bound}`,
        "most waves per replica": redisRuns.map((run) => run.wavesMax).join(", "),
        "replicas open / tool calls after": `${redisRuns.map((run) => run.replicasOpen).join(", ")} / ${redisRuns.map((run) => run.callsAfter).join(", ")}`,
        "last replica saw it open": `${middle.allOpenAfterMs.toFixed(1)} ms after the opening reply (${redisRuns.map((run) => run.allOpenAfterMs.toFixed(1)).join(", ")})`,
      });
    }

    // --- targets
    const successKinds = [...success.ratios.keys()];
    const worstRatio = Math.max(...successKinds.map((kind) => success.ratios.get(kind)!));
    const perKind = successKinds
      .map((kind) => {
        const timing = success.timings.find((candidate) => candidate.name === redisContestant(kind))!;
        return `${kind} ${formatRatio(success.ratios.get(kind)!)} (median of ${SUCCESS_ROUNDS} per-round ratios; median rounds ${formatNs(timing.avgNs)} vs ${formatNs(memoryTiming.avgNs)}, ${formatRatio(timing.avgNs / memoryTiming.avgNs)})`;
      })
      .join(", ");
    const successTarget: TargetResult = {
      name: "Redis breaker store: healthy call",
      target: `≤ ${SUCCESS_MAX_RATIO}× the in-memory plugin's ns/call (no I/O on a closed circuit)`,
      measured: `${perKind}; ${success.scriptsDuring} script calls reached Redis while measuring`,
      met: worstRatio <= SUCCESS_MAX_RATIO && success.scriptsDuring === 0,
    };
    const redisRuns = fleet.runs.filter((run) => run.mode === "redis");
    const withinBound = redisRuns.every((run) => run.calls <= run.bound && run.callsAfter === 0 && run.replicasOpen === REPLICAS);
    const fleetMeasured = WAVE_SIZES.map((k) => {
      const runs = redisRuns.filter((run) => run.k === k);
      const memoryRun = fleet.runs.find((run) => run.mode === "memory" && run.k === k)!;
      const list = (pick: (run: FleetRun) => number) => runs.map(pick).join("/");
      const inFlight = list((run) => Math.max(0, run.startedBeforeOpen - THRESHOLD));
      const after = list((run) => run.startedAfterOpen);
      return `K=${k}: ${list((run) => run.calls)} calls (${THRESHOLD} + ${inFlight} in flight + ${after} started after the opening reply) ≤ ${THRESHOLD} + ${REPLICAS}×${k}; in memory ${memoryRun.calls}`;
    }).join("; ");
    const fleetTarget: TargetResult = {
      name: `Redis breaker store: ${REPLICAS} replicas, dead tool`,
      target: `calls reaching the tool ≤ threshold + calls already in flight when it opened (≤ ${REPLICAS} × K)`,
      measured: `${fleetMeasured} (${FLEET_REPEATS} runs each)`,
      met: withinBound,
    };

    const notes: string[] = [];
    if (trips.unexpected.length > 0) notes.push(`Unexpected in the round-trip counts: ${trips.unexpected.join("; ")}.`);
    notes.push(
      "Round trips: the failing call uses a tool of its own per call (each its first failure, so no circuit opens); the next row calls those same tools successfully: the first success after this replica recorded a failure of a tool tells Redis (a reset of the shared count), later successes do not. The replay row repeats the keys of the guarded-write row.",
      `Latency: sequential calls on an otherwise idle server over loopback, wall clock, on a 2-core machine shared with other work (1-minute load average ${loadAtStart.toFixed(2)} when the suite began, ${loadBeforeFleet.toFixed(2)} before the fleet, ${loadAtEnd.toFixed(2)} at its end, the fleet's own ${PROCESSES} processes included; redis-server and the bench compete for the same two cores): the p99 is mostly the scheduler, and the medians (p50) are the figures to compare. ` +
        `The server itself spent ${evalshaServerUs.toFixed(2)} µs per EVALSHA on average (\`usec_per_call\` over the latency rows' scripts: begin and complete): the rest of a script call is the two clients' work and the loopback round trip (compare the PING rows).`,
      `Healthy call: judged on the median of the per-round ratios (each round's Redis-store mean over the mean of the in-memory round run just before it, so that a slow stretch of the machine weighs on both sides of a ratio); the ratio of the two contestants' median rounds is shown beside it, and the two differ when the rounds swing, as they do here. Every round's ratio: ${successKinds
        .map(
          (kind) =>
            `${kind} ${success.roundRatios
              .get(kind)!
              .map((ratio) => formatRatio(ratio))
              .join(", ")}`,
        )
        .join("; ")}. ` +
        `The script calls that reached Redis while the healthy calls ran (EVALSHA + EVAL over the whole measurement, allocations included): ${success.scriptsDuring}. ` +
        "One client only (node-redis): on a closed circuit the store answers from its local view and never touches the client, whichever it is. " +
        "Measured after the round-trip and latency parts, so this process has already run failures, a circuit opening and writes through the same core and store code (as a process serving traffic has), which makes V8's code for the healthy call less specialised than in a fresh process: both plugins allocate more per call than on the success-path suite's fresh plugin.",
      `Fleet: ${fleet.processes} child processes (plain \`node -e\`, the packages' CommonJS builds) of ${REPLICAS_PER_PROCESS} replicas each (the replicas of one process share its event loop, each has its own connection and subscription), started and connected in ${(fleet.startMs / 1000).toFixed(1)} s; the fleet part took ${fleetSeconds.toFixed(1)} s. ` +
        "A wave's next one starts when all its calls have returned (a failure's outcome waits for the store's reply). The replica whose failure opened the circuit knows it from the script's reply; the others from the publish, or from the reply to a failure they record after it (`stale`, which carries the state). " +
        "`started before / after`: tool calls that started before / after the reply that opened the circuit arrived at the replica that opened it (timestamps on the machine's monotonic clock, `process.hrtime`, shared by the processes). " +
        `Calls after it are those of replicas that had not yet heard (a wave begun on a \`counted\` reply that arrived before the publish); each replica can run at most one wave (K calls) it should not have, so the total stays within threshold + replicas × K. ` +
        `With K ≥ threshold a single wave holds ${REPLICAS} × K calls in flight before any failure is recorded: sharing the breaker cannot stop calls already started, so the shared and the per-replica counts meet. ` +
        `\`tool calls after\`: one more wave per replica once every replica saw the circuit open (must be 0); \`last replica saw it open\`: measured when that replica's wave ended, an upper bound of how long it took to hear. ` +
        `Store errors in the fleet: ${redisRuns.reduce((sum, run) => sum + run.storeErrors, 0)} (command limit ${FLEET_COMMAND_TIMEOUT_MS} ms: ${REPLICAS} replicas share 2 cores). ${REPLICAS} replicas on 2 cores are a harsher schedule than ${REPLICAS} machines: a replica may wait milliseconds for the CPU between a reply and its next wave, and the common start is not simultaneous (processes wake one after another), so the calls of the first wave do not all overlap.`,
    );

    return {
      id: ID,
      title: TITLE,
      method: METHOD,
      tables: [
        {
          caption: "Round trips to Redis per call (EVALSHA + EVAL counted by the server)",
          table: { columns: ["operation", "expected", "node-redis", "ioredis", "as expected"], rows: tripRows },
        },
        {
          caption: "Latency per call, sequential, loopback (wall clock)",
          table: { columns: ["client", "operation", "p50", "p99", "mean", "samples", "failed or unexpected"], rows: latencyRows },
        },
        {
          caption: "Healthy call (no-op async tool): Redis breaker store vs the in-memory default, same run",
          table: { columns: Object.keys(successRows[0]!), rows: successRows },
        },
        {
          caption: `${REPLICAS} replicas calling a dead tool, threshold ${THRESHOLD}, waves of K concurrent calls per replica`,
          table: { columns: Object.keys(fleetRows[0]!), rows: fleetRows },
        },
      ],
      targets: [successTarget, fleetTarget],
      notes,
      data: {
        server: { version: server.version, port: server.port },
        loadAverage: { atStart: round(loadAtStart, 2), beforeFleet: round(loadBeforeFleet, 2), atEnd: round(loadAtEnd, 2) },
        roundTrips: trips.rows,
        roundTripIssues: trips.unexpected,
        latency: latency.map((row) => ({ ...row, p50Ns: round(row.p50Ns, 0), p99Ns: round(row.p99Ns, 0), meanNs: round(row.meanNs, 0) })),
        successPath: {
          timings: success.timings.map((timing) => ({
            ...timing,
            allocatedBytesPerCall: round(success.allocations.get(timing.name) ?? Number.NaN),
          })),
          ratios: Object.fromEntries(success.ratios),
          roundRatios: Object.fromEntries(success.roundRatios),
          scriptsDuring: success.scriptsDuring,
        },
        fleet: {
          replicas: REPLICAS,
          threshold: THRESHOLD,
          processes: fleet.processes,
          startMs: fleet.startMs,
          seconds: fleetSeconds,
          runs: fleet.runs,
        },
        evalshaServerUs: round(evalshaServerUs, 2),
        secondsPerPart: seconds,
      },
    };
  } finally {
    for (const close of cleanup.reverse()) await close().catch(() => undefined);
  }
}
