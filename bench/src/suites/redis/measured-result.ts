// The suite's result from its measurements: the four tables, the two targets, the notes and the data.
import { formatBytes, formatCount, formatNs, formatRatio, round } from "../../format.js";
import type { RedisServer } from "../../redis-server.js";
import type { Cell, SuiteResult, TargetResult } from "../../report-types.js";
import type { FleetRun } from "./dead-tool-fleet.js";
import type { HealthyCallComparison } from "./healthy-call.js";
import type { LatencyRow } from "./latency.js";
import { METHOD } from "./method.js";
import {
  FLEET_COMMAND_TIMEOUT_MS,
  FLEET_REPEATS,
  FLEET_TARGET,
  ID,
  KINDS,
  MEMORY,
  PROCESSES,
  REPLICAS,
  REPLICAS_PER_PROCESS,
  REPLICATED_LABEL,
  redisContestant,
  SUCCESS_MAX_RATIO,
  SUCCESS_ROUNDS,
  SUCCESS_TARGET,
  THRESHOLD,
  TITLE,
  WAVE_SIZES,
} from "./parameters.js";
import type { RoundTripRow } from "./round-trips.js";

/** What the suite's four parts measured, and the machine's load around them. */
export interface RedisMeasurements {
  readonly server: RedisServer;
  /** A replica of the server was running (the rows with `replicas` were measured). */
  readonly replicated: boolean;
  readonly trips: { readonly rows: RoundTripRow[]; readonly unexpected: string[] };
  readonly latency: LatencyRow[];
  readonly evalshaServerUs: number;
  readonly success: HealthyCallComparison;
  readonly fleet: { readonly runs: FleetRun[]; readonly startMs: number; readonly processes: number };
  /** Seconds each part took. */
  readonly seconds: Record<string, number>;
  /** The 1-minute load average when the suite began, before the fleet and at the end. */
  readonly loadAtStart: number;
  readonly loadBeforeFleet: number;
  readonly loadAtEnd: number;
}

/** The report's part for this suite: tables, targets (met or missed), notes, and the unrounded data. */
export function measuredResult(measurements: RedisMeasurements): SuiteResult {
  const { server, replicated, trips, latency, evalshaServerUs, success, fleet, seconds, loadAtStart, loadBeforeFleet, loadAtEnd } =
    measurements;
  const fleetSeconds = seconds.fleet ?? Number.NaN;
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
    ...SUCCESS_TARGET,
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
    ...FLEET_TARGET,
    measured: `${fleetMeasured} (${FLEET_REPEATS} runs each)`,
    met: withinBound,
  };

  const notes: string[] = [];
  if (trips.unexpected.length > 0) notes.push(`Unexpected in the round-trip counts: ${trips.unexpected.join("; ")}.`);
  notes.push(
    replicated
      ? `Replicated rows: a second redis-server of the same kind, \`REPLICAOF\` the suite's server over loopback (linked before the rows ran), and stores made with \`${REPLICATED_LABEL}\` on the same clients: a begin that takes a lock and a complete each wait for the replica (WAIT); a replay and a healthy call wait for nothing. The replicated write's p50 over the plain guarded write's, same client, same run: ${KINDS.map(
          (kind) => {
            const of = (prefix: string) => latency.find((row) => row.kind === kind && row.operation.startsWith(prefix));
            const plain = of("guarded write through the plugin (");
            const waiting = of("guarded write through the plugin, replicas");
            return plain === undefined || waiting === undefined
              ? `${kind} —`
              : `${kind} ${formatRatio(waiting.p50Ns / plain.p50Ns)} (${formatNs(waiting.p50Ns)} vs ${formatNs(plain.p50Ns)})`;
          },
        ).join(", ")}.`
      : "Replicated rows: not measured (a replica of the suite's server did not start or link within 10 s).",
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
    `Fleet: ${fleet.processes} child processes (\`node --import tsx\` running \`replica-host.ts\`, the packages' builds as the rest of the bench imports them) of ${REPLICAS_PER_PROCESS} replicas each (the replicas of one process share its event loop, each has its own connection and subscription), started and connected in ${(fleet.startMs / 1000).toFixed(1)} s; the fleet part took ${fleetSeconds.toFixed(1)} s. ` +
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
        caption: "Round trips to Redis per call (EVALSHA + EVAL + WAIT counted by the server)",
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
      server: { version: server.version, port: server.port, replicated },
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
}
