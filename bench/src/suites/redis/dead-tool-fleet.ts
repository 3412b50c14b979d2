// The dead tool called by 50 replicas: child processes, each hosting a few replicas (a plugin with
// its own client each), in waves of K concurrent calls until every replica sees the circuit open;
// with a shared RedisCircuitBreakerStore, and with an in-memory breaker per replica.
import {
  type ClientKind,
  FLEET_COMMAND_TIMEOUT_MS,
  FLEET_REPEATS,
  KINDS,
  MAX_WAVES,
  PROCESSES,
  REPLICAS,
  REPLICAS_PER_PROCESS,
  RESET_MS,
  THRESHOLD,
  WAVE_SIZES,
} from "./parameters.js";
import type { FleetMode, ReplicaAfter, ReplicaWaves } from "./replica-host-messages.js";
import { startReplicaHost } from "./start-replica-host.js";

export interface FleetRun {
  readonly mode: FleetMode;
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

function summarise(mode: FleetMode, k: number, repeat: number, runs: readonly (ReplicaWaves & ReplicaAfter)[], at: number): FleetRun {
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

/**
 * `PROCESSES` replica hosts of `REPLICAS_PER_PROCESS` replicas, then for each K one run with an
 * in-memory breaker per replica and `FLEET_REPEATS` with a shared Redis breaker store (a new prefix each).
 */
export async function deadToolFleet(url: string): Promise<{ runs: FleetRun[]; startMs: number; processes: number }> {
  const began = Date.now();
  const settled = await Promise.allSettled(Array.from({ length: PROCESSES }, () => startReplicaHost()));
  const hosts = settled.flatMap((each) => (each.status === "fulfilled" ? [each.value] : []));
  try {
    const failed = settled.find((each) => each.status === "rejected");
    if (failed !== undefined) throw new Error(`a fleet process did not start: ${String((failed as PromiseRejectedResult).reason)}`);
    // Half the replicas on node-redis, half on ioredis (alternating within each process).
    await Promise.all(
      hosts.map((host, h) =>
        host.ask("connect", {
          url,
          kinds: Array.from({ length: REPLICAS_PER_PROCESS }, (_, r) => KINDS[(h * REPLICAS_PER_PROCESS + r) % KINDS.length] as ClientKind),
        }),
      ),
    );
    const startMs = Date.now() - began;
    const runs: FleetRun[] = [];
    let prefixes = 0;
    for (const k of WAVE_SIZES) {
      const plan: Array<{ mode: FleetMode; repeat: number }> = [{ mode: "memory", repeat: 1 }];
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
        const results = await Promise.all(hosts.map((host) => host.ask("run", { at, k, maxWaves: MAX_WAVES })));
        const after = await Promise.all(hosts.map((host) => host.ask("after", { k })));
        const merged = results.flatMap((replicas, h) => replicas.map((result, r) => ({ ...result, ...after[h]![r]! })));
        runs.push(summarise(mode, k, repeat, merged, at));
      }
    }
    return { runs, startMs, processes: hosts.length };
  } finally {
    await Promise.all(hosts.map((host) => host.end().catch(() => host.kill())));
  }
}
