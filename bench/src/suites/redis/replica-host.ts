// A child process hosting a few replicas of an agent service, for the dead-tool fleet. Run as
// `node --import tsx replica-host.ts` with an IPC channel (start-replica-host.ts forks it): the
// built packages, as the rest of the bench imports them. Each replica has its own client, its own
// store and its own plugin; they share the process's event loop. The messages are in
// replica-host-messages.ts.
import { type ExecuteOutcome, RetryReflectPlugin } from "@retry-reflect/core";
import type { RetryReflectObserver } from "@retry-reflect/core/events";
import { redisStores } from "@retry-reflect/redis";
import { type Connection, connectClient } from "./connections.js";
import type { HostReplies, HostReply, HostRequest, HostRequests, ReplicaAfter, ReplicaWaves } from "./replica-host-messages.js";

const TOOL = "flaky_upstream";

interface Replica {
  readonly connection: Connection;
  stores: ReturnType<typeof redisStores> | undefined;
  /** Set by `init`. */
  plugin: RetryReflectPlugin | undefined;
  opened: number[];
  storeErrors: number;
}

const now = () => Number(process.hrtime.bigint());
const label = (outcome: ExecuteOutcome<unknown>) =>
  outcome.status === "failed"
    ? `failed:${outcome.reason}`
    : outcome.status === "reflect"
      ? `reflect:${outcome.error.code}`
      : outcome.status;

let replicas: Replica[] = [];
let scopes = 0;

/** `k` concurrent calls, each in its own scope, to a tool that throws; counts the outcomes and when each call reached the tool. */
async function wave(replica: Replica, k: number, starts: number[], outcomes: Record<string, number>): Promise<void> {
  const plugin = pluginOf(replica);
  const tool = async (): Promise<never> => {
    starts.push(now());
    throw new Error("upstream exploded");
  };
  const results = await Promise.all(
    Array.from({ length: k }, () => plugin.execute({ toolName: TOOL, args: { q: "x" }, scope: `s${++scopes}` }, tool)),
  );
  for (const outcome of results) outcomes[label(outcome)] = (outcomes[label(outcome)] ?? 0) + 1;
}

function pluginOf(replica: Replica): RetryReflectPlugin {
  if (replica.plugin === undefined) throw new Error("no plugin: send `init` before `run` or `after`");
  return replica.plugin;
}

async function runReplica(replica: Replica, request: HostRequests["run"]): Promise<ReplicaWaves> {
  const plugin = pluginOf(replica);
  const began = now();
  const starts: number[] = [];
  const outcomes: Record<string, number> = {};
  let waves = 0;
  while (plugin.circuits.state(TOOL) !== "open" && waves < request.maxWaves) {
    waves++;
    await wave(replica, request.k, starts, outcomes);
  }
  const sawOpenAt = now();
  const open = plugin.circuits.state(TOOL) === "open";
  return {
    pid: process.pid,
    kind: replica.connection.kind,
    began,
    starts,
    waves,
    sawOpenAt,
    open,
    opened: replica.opened,
    storeErrors: replica.storeErrors,
    outcomes,
  };
}

async function initReplica(replica: Replica, request: HostRequests["init"]): Promise<void> {
  await replica.stores?.close();
  replica.stores = undefined;
  replica.opened = [];
  replica.storeErrors = 0;
  const observer: RetryReflectObserver = {
    onEvent(event) {
      if (event.type === "circuit_opened") replica.opened.push(now());
      else if (event.type === "store_error") replica.storeErrors++;
    },
  };
  if (request.mode === "redis") {
    replica.stores = redisStores({ client: replica.connection.client, prefix: request.prefix, commandTimeoutMs: request.commandTimeoutMs });
    await replica.stores.circuitBreaker.subscribed;
  }
  replica.plugin = RetryReflectPlugin.create({
    circuitBreakerThreshold: request.threshold,
    circuitBreakerResetMs: request.resetMs,
    observers: [observer],
    ...(replica.stores ? { circuitBreakerStore: replica.stores.circuitBreaker } : {}),
  });
}

const ops: { readonly [Op in keyof HostRequests]: (request: HostRequests[Op]) => Promise<HostReplies[Op]> } = {
  async connect({ url, kinds }) {
    const connections = await Promise.all(kinds.map((kind) => connectClient(kind, url)));
    replicas = connections.map((connection) => ({ connection, stores: undefined, plugin: undefined, opened: [], storeErrors: 0 }));
    return process.pid;
  },
  async init(request) {
    await Promise.all(replicas.map((replica) => initReplica(replica, request)));
    return true;
  },
  async run(request) {
    const wait = (request.at - now()) / 1e6;
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    return Promise.all(replicas.map((replica) => runReplica(replica, request)));
  },
  async after({ k }) {
    return Promise.all(
      replicas.map(async (replica): Promise<ReplicaAfter> => {
        const starts: number[] = [];
        const afterOutcomes: Record<string, number> = {};
        await wave(replica, k, starts, afterOutcomes);
        return { after: starts.length, afterOutcomes };
      }),
    );
  },
  async close() {
    await Promise.all(
      replicas.map(async (replica) => {
        await replica.stores?.close();
        await replica.connection.close();
      }),
    );
    replicas = [];
    setImmediate(() => process.disconnect());
    return true;
  },
};

function answer(request: HostRequest): Promise<unknown> {
  // Each request goes to the op of its name; the union of ops cannot be called with the union of requests.
  const op = ops[request.op] as (request: HostRequest) => Promise<unknown>;
  return op(request);
}

function send(reply: HostReply): void {
  process.send?.(reply);
}

process.on("message", (raw) => {
  const message = raw as HostRequest;
  Promise.resolve()
    .then(() => answer(message))
    .then(
      (result) => send({ id: message.id, result }),
      (error: unknown) => send({ id: message.id, error: error instanceof Error && error.stack ? error.stack : String(error) }),
    );
});
send({ id: 0, result: "ready" });
