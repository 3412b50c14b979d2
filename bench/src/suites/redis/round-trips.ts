// Round trips to Redis per call: CONFIG RESETSTAT, sequential calls, then the EVALSHA + EVAL + WAIT
// the server counted, divided by the calls (every store operation is one script; with `replicas`,
// a WAIT follows a begin that took a lock and a complete).
import type { CoreModule } from "../../ours.js";
import { type Connection, scriptCalls } from "./connections.js";
import {
  type ClientKind,
  KINDS,
  type Plugin,
  REPLICATED,
  REPLICATED_LABEL,
  type RedisModule,
  ROUND_TRIP_CALLS,
  THRESHOLD,
} from "./parameters.js";
import { exploding, ok, storePlugin } from "./store-plugin.js";

export interface RoundTripRow {
  readonly operation: string;
  readonly expected: number;
  readonly perCall: Readonly<Record<ClientKind, number>>;
}

/**
 * Per client kind, the round trips per call of each operation, and anything unexpected (an EVAL, an
 * outcome). `replicated`: the server has a replica, and the rows with the `replicas` setting are measured.
 */
export async function roundTrips(
  core: CoreModule,
  redis: RedisModule,
  connections: readonly Connection[],
  admin: Connection,
  cleanup: Array<() => Promise<void>>,
  replicated: boolean,
): Promise<{ rows: RoundTripRow[]; unexpected: string[] }> {
  const perKind = new Map<ClientKind, number[]>();
  const unexpected: string[] = [];
  const all: Array<{
    operation: string;
    expected: number;
    /** Through the plugin whose stores wait for a replica. */
    replicas?: true;
    setup?: (plugin: Plugin) => Promise<void>;
    call: (plugin: Plugin, i: number) => Promise<unknown>;
  }> = [
    {
      operation: "healthy read call (closed circuit)",
      expected: 0,
      call: (plugin, i) => plugin.execute({ toolName: "search", args: { q: i }, scope: `rt-ok-${i}` }, ok),
    },
    {
      operation: "first call of a tool in this process (reads its circuit once: the fleet's state)",
      expected: 1,
      call: (plugin, i) => plugin.execute({ toolName: `flaky_${i}`, args: { q: i }, scope: `rt-first-${i}` }, ok),
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
    {
      operation: `healthy read call (closed circuit), ${REPLICATED_LABEL}`,
      expected: 0,
      replicas: true,
      call: (plugin, i) => plugin.execute({ toolName: "search", args: { q: i }, scope: `rt-rok-${i}` }, ok),
    },
    {
      operation: `guarded write, new key, ${REPLICATED_LABEL} (begin + WAIT + complete + WAIT)`,
      expected: 4,
      replicas: true,
      call: (plugin, i) =>
        plugin.execute(
          { toolName: "send_payment", args: { idempotency_key: `rt-rw-${i}`, amount: 5 }, scope: `rt-rw-${i}`, namespace: `rt-rw-${i}` },
          ok,
        ),
    },
    {
      operation: `replayed write, ${REPLICATED_LABEL} (begin answers; nothing to wait for)`,
      expected: 1,
      replicas: true,
      call: (plugin, i) =>
        plugin.execute(
          { toolName: "send_payment", args: { idempotency_key: `rt-rw-${i}`, amount: 5 }, scope: `rt-rr-${i}`, namespace: `rt-rw-${i}` },
          ok,
        ),
    },
  ];
  const operations = all.filter((operation) => replicated || operation.replicas !== true);
  for (const connection of connections) {
    const stores = redis.redisStores({ client: connection.client, prefix: `bench-rt-${connection.kind}:` });
    cleanup.push(() => stores.close());
    await stores.circuitBreaker.subscribed;
    const plugin = storePlugin(core, stores);
    const replicatedStores = replicated
      ? redis.redisStores({ client: connection.client, prefix: `bench-rtr-${connection.kind}:`, replicas: REPLICATED })
      : undefined;
    if (replicatedStores !== undefined) cleanup.push(() => replicatedStores.close());
    const replicatedPlugin = replicatedStores === undefined ? undefined : storePlugin(core, replicatedStores);
    if (replicatedPlugin !== undefined) {
      await replicatedPlugin.execute({ toolName: "search", args: {}, scope: "warm-r0" }, ok);
      await replicatedPlugin.execute({ toolName: "send_payment", args: { idempotency_key: "warm-r", amount: 5 }, scope: "warm-r1" }, ok);
    }
    // Warm up: each script once, so that the counts below are of cached scripts (EVALSHA), not of the first load (EVALSHA, NOSCRIPT, EVAL).
    await plugin.execute({ toolName: "search", args: {}, scope: "warm-0" }, ok); // its first call reads its circuit
    await plugin.execute({ toolName: "warm", args: {}, scope: "warm-1" }, exploding);
    await plugin.execute({ toolName: "warm", args: {}, scope: "warm-2" }, ok);
    await plugin.execute({ toolName: "send_payment", args: { idempotency_key: "warm", amount: 5 }, scope: "warm-3" }, ok);
    const counts: number[] = [];
    for (const { operation, replicas, setup, call } of operations) {
      const through = replicas === true ? (replicatedPlugin as Plugin) : plugin;
      await setup?.(through);
      await admin.command(["CONFIG", "RESETSTAT"]);
      const statuses = new Map<string, number>();
      for (let i = 0; i < ROUND_TRIP_CALLS; i++) {
        const outcome = await call(through, i);
        const status = (outcome as { status: string }).status;
        statuses.set(status, (statuses.get(status) ?? 0) + 1);
      }
      // The client's connection is first in, first out: after its PONG, every command the calls sent has been run.
      await connection.ping();
      const { evalsha, eval: evals, wait } = await scriptCalls(admin);
      counts.push((evalsha + evals + wait) / ROUND_TRIP_CALLS);
      if (evals > 0) unexpected.push(`${connection.kind}, "${operation}": ${evals} EVAL (a script not cached)`);
      const summary = [...statuses].map(([status, count]) => `${count} ${status}`).join(", ");
      const want = operation.startsWith("failing") ? "reflect" : operation.startsWith("call rejected") ? "failed" : "success";
      if (replicas === true && wait === 0 && operation.startsWith("guarded"))
        unexpected.push(`${connection.kind}, "${operation}": no WAIT reached the server`);
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
