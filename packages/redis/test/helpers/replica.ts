// One replica of an agent service, run as a child process by the multi-process tests
// (`fork(..., { execArgv: ["--import", "tsx"] })`): a plugin over the Redis stores, driven by
// messages from the parent. Each message `{ id, op, ...args }` gets one reply `{ id, result }` or
// `{ id, error }`. Side effects are counted here and reported back.
import { type ExecuteOutcome, RetryReflectPlugin } from "@retry-reflect/core";
import type { RetryReflectEvent } from "@retry-reflect/core/events";
import { redisStores } from "../../src/index.js";

interface Init {
  url: string;
  client: "node-redis" | "ioredis";
  prefix: string;
  /** `circuitBreakerThreshold`. @default 5 (the plugin's own default is 10) */
  threshold?: number;
  /** `circuitBreakerResetMs`. @default 60_000 */
  resetMs?: number;
  leaseMs?: number;
  /** @default 2000: a limit for a loaded CI machine (2 cores, test files in parallel), not for a hung server */
  commandTimeoutMs?: number;
  /** The client as packages/redis/README.md builds it (connect not awaited), and init does not wait for `stores.ready`: Redis may be down. */
  readme?: boolean;
  /** A Redis Cluster's nodes (test/helpers/redis-cluster.ts): the replica uses `client`'s cluster client, `url` is unused. */
  cluster?: { rootNodes: Array<{ url: string }>; startupNodes: Array<{ host: string; port: number }> };
  /** The stores' `replicas` option (WAIT for replication). */
  replicas?: { count: number; timeoutMs: number };
  /** The plugin's `retryBudget` (shared through the breaker store). @default none (`retryBudget: false`) */
  retryBudget?: { ratio?: number; minPerSecond?: number; windowMs?: number };
  /**
   * The plugin's `waitForRecovery`. @default false: these tests count the calls a replica turns
   * away at an open circuit without running the tool (the temporary `CIRCUIT_OPEN` text); `true`
   * makes a call whose circuit is due within its patience wait for the fleet's probe instead.
   */
  waitForRecovery?: boolean;
  /** The plugin's `initialBackoffMs` (real time here). @default 500 */
  initialBackoffMs?: number;
  /** A failure-rate breaker (`circuitBreakerFailureRate`, `circuitBreakerMinimumCalls`, `circuitBreakerWindowMs`). @default none: the consecutive count */
  failureRate?: { rate: number; minimumCalls?: number; windowMs?: number };
}

type Message = { id: number; op: string } & Record<string, unknown>;

let plugin: RetryReflectPlugin | undefined;
let stores: ReturnType<typeof redisStores> | undefined;
/** Ends the client of the last `init` (a replica a test file reuses gets a new client, stores and plugin per test). */
let closeClient: (() => void) | undefined;
const events: RetryReflectEvent[] = [];
let searches = 0;
let scopes = 0;
const never = new Promise<never>(() => {});

function summary(outcomes: ExecuteOutcome<unknown>[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const outcome of outcomes) {
    const label =
      outcome.status === "failed"
        ? `failed:${outcome.reason}`
        : outcome.status === "reflect"
          ? `reflect:${outcome.error.code}`
          : outcome.replayed
            ? "replayed"
            : "success";
    counts[label] = (counts[label] ?? 0) + 1;
  }
  return counts;
}

// Each client library is imported when a replica first uses it, not both at start: a replica uses
// one, and loading the other took ~0.3-0.9 s of CPU in each of the ~30 replicas the tests start.
async function connect(init: Init): Promise<unknown> {
  if (init.readme === true) return readmeClient(init);
  if (init.cluster !== undefined) return clusterClient(init, init.cluster);
  if (init.client === "ioredis") {
    const { default: Redis } = await import("ioredis");
    const client = new Redis(init.url, { enableOfflineQueue: false, maxRetriesPerRequest: 0, lazyConnect: true });
    client.on("error", () => {});
    await client.connect();
    return client;
  }
  const { createClient } = await import("redis");
  const client = createClient({ url: init.url, disableOfflineQueue: true, socket: { reconnectStrategy: () => 50 } });
  client.on("error", () => {});
  await client.connect();
  return client;
}

/** Each library's cluster client (offline queue off for ioredis, as in cluster.test.ts). */
async function clusterClient(init: Init, cluster: NonNullable<Init["cluster"]>): Promise<unknown> {
  if (init.client === "ioredis") {
    const { default: Redis } = await import("ioredis");
    const client = new Redis.Cluster(cluster.startupNodes, { lazyConnect: true, enableOfflineQueue: false });
    client.on("error", () => {});
    await client.connect();
    return client;
  }
  const { createCluster } = await import("redis");
  const client = createCluster({ rootNodes: cluster.rootNodes });
  client.on("error", () => {});
  await client.connect();
  return client;
}

/** As the README's two setups build the client (its `console.error` left out: the tests stop Redis on purpose). */
async function readmeClient(init: Init): Promise<unknown> {
  const { url } = init;
  if (init.client === "ioredis") {
    const { Redis } = await import("ioredis");
    const client = new Redis(url, { enableOfflineQueue: false, maxRetriesPerRequest: 0 });
    client.on("error", () => {});
    return client;
  }
  const { createClient } = await import("redis");
  const client = createClient({ url, disableOfflineQueue: true, socket: { reconnectStrategy: (retries) => Math.min(retries * 50, 1000) } });
  client.on("error", () => {});
  client.connect().catch(() => {});
  return client;
}

const ops: Record<string, (message: Message) => Promise<unknown>> = {
  async init(message) {
    const init = message as unknown as Init;
    // A second `init` in one process starts over: the last one's stores and client closed, its events dropped.
    await ops.close?.(message);
    const client = await connect(init);
    closeClient = () => {
      const open = client as { disconnect?: () => void; destroy?: () => void; isOpen?: boolean; status?: string };
      // ioredis (and its Cluster) has `status` and `disconnect()`; node-redis `isOpen` and `destroy()`.
      if (open.status !== undefined) open.disconnect?.();
      else if (open.isOpen !== false) open.destroy?.();
    };
    stores = redisStores({ client, prefix: init.prefix, commandTimeoutMs: init.commandTimeoutMs ?? 2000, replicas: init.replicas });
    if (init.readme !== true) await stores.circuitBreaker.subscribed;
    plugin = RetryReflectPlugin.create({
      toolEffects: { pay: "write" },
      maxRetries: 3,
      circuitBreakerThreshold: init.threshold ?? 5,
      circuitBreakerResetMs: init.resetMs ?? 60_000,
      waitForRecovery: init.waitForRecovery ?? false,
      retryBudget: init.retryBudget ?? false,
      ...(init.initialBackoffMs === undefined ? {} : { initialBackoffMs: init.initialBackoffMs }),
      ...(init.failureRate === undefined
        ? {}
        : {
            circuitBreakerFailureRate: init.failureRate.rate,
            circuitBreakerMinimumCalls: init.failureRate.minimumCalls,
            circuitBreakerWindowMs: init.failureRate.windowMs,
          }),
      idempotency: { store: stores.idempotency, leaseMs: init.leaseMs ?? 30_000 },
      circuitBreakerStore: stores.circuitBreaker,
      observers: [{ onEvent: (event) => events.push(event) }],
    });
    return process.pid;
  },
  /** Closes the last `init`'s stores and client, and drops its events (nothing to do before the first). */
  async close() {
    const last = { stores, closeClient };
    stores = undefined;
    plugin = undefined;
    closeClient = undefined;
    events.length = 0;
    await last.stores?.close().catch(() => {});
    try {
      last.closeClient?.();
    } catch {
      // already closed
    }
    return "closed";
  },
  /**
   * One write per key (each key its own conversation), `inFlight` at a time: how often the tool ran
   * here for each key, and the outcomes (as failover.test.ts counts them).
   */
  async payEach(message) {
    const keys = message.keys as string[];
    const runs: Record<string, number> = {};
    const outcomes: ExecuteOutcome<unknown>[] = [];
    let next = 0;
    const worker = async () => {
      while (next < keys.length) {
        const key = keys[next++] as string;
        outcomes.push(
          await (plugin as RetryReflectPlugin).execute(
            { toolName: "pay", args: { idempotency_key: key, order: key }, scope: key },
            async () => {
              runs[key] = (runs[key] ?? 0) + 1;
              return { paid: key };
            },
          ),
        );
      }
    };
    await Promise.all(Array.from({ length: message.inFlight as number }, worker));
    return { runs, outcomes: summary(outcomes) };
  },
  /** `count` concurrent writes with one key: how often the tool ran here, and the outcomes. */
  async writes(message) {
    const count = message.count as number;
    const key = message.key as string;
    let runs = 0; // this request's own runs: several `writes` may be in flight in one replica
    const started = performance.now();
    const outcomes = await Promise.all(
      Array.from({ length: count }, (_, i) =>
        (plugin as RetryReflectPlugin).execute(
          {
            toolName: "pay",
            args: { idempotency_key: message.distinct ? `${key}-${i}` : key, amount: 5 },
            // Distinct writes stand for distinct agent runs (each its own retry budget).
            scope: message.distinct ? `w${++scopes}` : undefined,
          },
          async () => {
            runs++;
            await new Promise((resolve) => setTimeout(resolve, (message.holdMs as number | undefined) ?? 5));
            return { paid: key, by: process.pid };
          },
        ),
      ),
    );
    const values = new Set(outcomes.map((outcome) => (outcome.status === "success" ? JSON.stringify(outcome.value) : outcome.status)));
    return { runs, outcomes: summary(outcomes), values: [...values], ms: performance.now() - started };
  },
  /** `count` concurrent raw `begin`s of one key on the store: how many acquired it. */
  async begins(message) {
    const store = (stores as NonNullable<typeof stores>).idempotency;
    const answers = await Promise.all(
      Array.from({ length: message.count as number }, () => store.begin(message.key as string, "fp", 30_000)),
    );
    return answers.filter((answer) => answer.status === "acquired").length;
  },
  /** Starts a write that never ends, and answers once its tool is running (the parent then kills this process). */
  async hang(message) {
    let started!: () => void;
    const running = new Promise<void>((resolve) => (started = resolve));
    void (plugin as RetryReflectPlugin).execute({ toolName: "pay", args: { idempotency_key: message.key as string, amount: 5 } }, () => {
      started();
      return never;
    });
    await running;
    return "holding";
  },
  /** `count` concurrent calls of a read tool, each in a scope of its own, that succeed or fail (`fail`, or `unavailable`: a 503); `holdMs` keeps them running. */
  async calls(message) {
    const before = searches;
    const started = performance.now();
    const outcomes = await Promise.all(
      Array.from({ length: message.count as number }, () =>
        (plugin as RetryReflectPlugin).execute({ toolName: "search", args: {}, scope: `s${++scopes}` }, async () => {
          searches++;
          if (message.holdMs !== undefined) await new Promise((resolve) => setTimeout(resolve, message.holdMs as number));
          if (message.result === "fail") throw new Error("upstream exploded");
          if (message.result === "unavailable") throw Object.assign(new Error("503 Service Unavailable"), { status: 503 });
          return "ok";
        }),
      ),
    );
    return { runs: searches - before, outcomes: summary(outcomes), ms: performance.now() - started };
  },
  /** Waits for `stores.ready` (at most `timeoutMs`): the ms it took, or -1. */
  async ready(message) {
    const started = performance.now();
    const timeout = new Promise<number>((resolve) => setTimeout(() => resolve(-1), message.timeoutMs as number));
    return Promise.race([(stores as NonNullable<typeof stores>).ready.then(() => performance.now() - started), timeout]);
  },
  async state(message) {
    return (plugin as RetryReflectPlugin).circuits.state(message.tool as string);
  },
  /** Waits (polling the local view, no I/O) until the circuit reads `state`; the time it took, or -1 after `timeoutMs`. */
  async waitState(message) {
    const started = performance.now();
    while (performance.now() - started < (message.timeoutMs as number)) {
      if ((plugin as RetryReflectPlugin).circuits.state(message.tool as string) === message.state) return performance.now() - started;
      await new Promise((resolve) => setTimeout(resolve, 0.5));
    }
    return -1;
  },
  async events() {
    return events.map((event) => ({ type: event.type, fields: event.fields }));
  },
};

process.on("message", (raw) => {
  const message = raw as Message;
  const op = ops[message.op];
  if (op === undefined) {
    process.send?.({ id: message.id, error: `unknown op ${message.op}` });
    return;
  }
  op(message).then(
    (result) => process.send?.({ id: message.id, result }),
    (error: unknown) => process.send?.({ id: message.id, error: error instanceof Error ? error.stack : String(error) }),
  );
});
process.send?.({ id: 0, result: "ready" });
