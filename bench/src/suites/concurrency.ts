import { monitorEventLoopDelay } from "node:perf_hooks";
import { formatNs, formatRatio, round } from "../format.js";
import { median } from "../measure.js";
import { type CoreModule, PENDING } from "../ours.js";
import { cockatielRetryBreaker } from "../peers.js";
import type { Cell, SuiteResult } from "../report-types.js";

const LEVELS = [1, 100, 10_000] as const;
const MIN_MS = 150;
const ROUNDS = 3;
const OURS = "retry-reflect";
const MINIMAL_WRAPPER = "minimal async wrapper (one async frame and an outcome, no policy)";
/** The load the loop-delay target is judged at, and the most our p99 may be of the minimal wrapper's there (issue 52). */
const JUDGED_IN_FLIGHT = 10_000;
const LOOP_DELAY_MAX_RATIO = 1.25;

/** A tool that stays in flight until the next turn of the event loop, so that N calls overlap. */
const inFlightTool = (_args?: unknown) =>
  new Promise<number>((resolve) => {
    setImmediate(() => resolve(1));
  });

interface LevelResult {
  readonly contestant: string;
  readonly inFlight: number;
  readonly nsPerCall: number;
  readonly cpuNsPerCall: number;
  readonly eventLoopDelayP50Ms: number;
  readonly eventLoopDelayP99Ms: number;
  readonly eventLoopDelayMaxMs: number;
}

async function runLevel(contestant: string, inFlight: number, call: () => Promise<unknown>): Promise<LevelResult> {
  const batch = () => Promise.all(Array.from({ length: inFlight }, call));
  for (let warm = 0; warm < Math.max(3, 300 / inFlight); warm++) await batch();
  globalThis.gc?.();
  const histogram = monitorEventLoopDelay({ resolution: 1 });
  histogram.enable();
  const start = process.hrtime.bigint();
  const cpuStart = process.cpuUsage();
  let calls = 0;
  let batches = 0;
  while (Number(process.hrtime.bigint() - start) / 1e6 < MIN_MS || batches < 5) {
    await batch();
    calls += inFlight;
    batches++;
  }
  const elapsedNs = Number(process.hrtime.bigint() - start);
  const cpu = process.cpuUsage(cpuStart);
  histogram.disable();
  return {
    contestant,
    inFlight,
    nsPerCall: elapsedNs / calls,
    cpuNsPerCall: ((cpu.user + cpu.system) * 1000) / calls,
    eventLoopDelayP50Ms: histogram.percentile(50) / 1e6,
    eventLoopDelayP99Ms: histogram.percentile(99) / 1e6,
    eventLoopDelayMaxMs: histogram.max / 1e6,
  };
}

/** The median of each measure over a contestant's readings at one load (each column on its own). */
function medianReading(readings: readonly LevelResult[]): LevelResult {
  const first = readings[0]!;
  const column = (pick: (reading: LevelResult) => number) => median(readings.map(pick));
  return {
    contestant: first.contestant,
    inFlight: first.inFlight,
    nsPerCall: column((reading) => reading.nsPerCall),
    cpuNsPerCall: column((reading) => reading.cpuNsPerCall),
    eventLoopDelayP50Ms: column((reading) => reading.eventLoopDelayP50Ms),
    eventLoopDelayP99Ms: column((reading) => reading.eventLoopDelayP99Ms),
    eventLoopDelayMaxMs: column((reading) => reading.eventLoopDelayMaxMs),
  };
}

/** 6. Concurrency: 1, 100 and 10,000 calls in flight through one plugin. */
export async function concurrency(core: CoreModule | undefined): Promise<SuiteResult> {
  // Every contestant gets the same caller frame: `async () => { const result = await call(); check(result); return result; }`,
  // written out per contestant (not made by one shared helper, whose single call site would see every
  // contestant and go polymorphic), so that the rows differ only in what each library adds.
  const contestants: Array<readonly [string, () => Promise<unknown>]> = [
    [
      "floor: await tool()",
      async () => {
        const result = await inFlightTool({ city: "nyc" });
        if (result !== 1) throw new Error(`unexpected ${result}`);
        return result;
      },
    ],
  ];
  let sequence = 0;
  if (core !== undefined) {
    const plugin = core.RetryReflectPlugin.create({});
    contestants.push([
      OURS,
      async () => {
        const result = await plugin.execute(
          { toolName: "get_weather", args: { city: "nyc" }, callId: `call_${sequence++}`, scope: "run-1" },
          inFlightTool,
        );
        if (result.status !== "success") throw new Error(`unexpected ${result.status}`);
        return result;
      },
    ]);
  }
  // Context, not a target: the cheapest possible policy wrapper, one async frame and an outcome
  // object around the tool. At 10,000 in flight any such wrapper pays for keeping its frame alive.
  const minimalWrapper = async (call: { args: unknown; callId: string }) => {
    const value = await inFlightTool(call.args);
    return { status: "success", value, attempt: 1, replayed: false };
  };
  contestants.push([
    MINIMAL_WRAPPER,
    async () => {
      const result = await minimalWrapper({ args: { city: "nyc" }, callId: `call_${sequence++}` });
      if (result.status !== "success") throw new Error(`unexpected ${result.status}`);
      return result;
    },
  ]);
  const cockatiel = cockatielRetryBreaker();
  contestants.push([
    "cockatiel wrap(retry, circuitBreaker)",
    async () => {
      const result = await cockatiel.execute(() => inFlightTool({ city: "nyc" }));
      if (result !== 1) throw new Error(`unexpected ${result}`);
      return result;
    },
  ]);

  // Rounds interleave the contestants; each (load, contestant) reports the median of its readings, column by column.
  const readings = new Map<string, LevelResult[]>();
  for (let round = 0; round < ROUNDS; round++) {
    for (const inFlight of LEVELS) {
      for (const [name, call] of contestants) {
        const key = `${inFlight}/${name}`;
        const list = readings.get(key) ?? [];
        list.push(await runLevel(name, inFlight, call));
        readings.set(key, list);
      }
    }
  }
  const results = [...readings.values()].map(medianReading);

  const rows: Record<string, Cell>[] = [];
  for (const inFlight of LEVELS) {
    const floor = results.find((result) => result.inFlight === inFlight && result.contestant === contestants[0]![0])!;
    const ours = results.find((result) => result.inFlight === inFlight && result.contestant === OURS);
    for (const result of results.filter((candidate) => candidate.inFlight === inFlight)) {
      rows.push({
        "in flight": inFlight.toLocaleString("en-US"),
        contestant: result.contestant,
        "wall/call": formatNs(result.nsPerCall),
        "CPU/call": formatNs(result.cpuNsPerCall),
        "this / floor (CPU)": formatRatio(result.cpuNsPerCall / floor.cpuNsPerCall),
        "ours / this (CPU)": ours === undefined ? PENDING : formatRatio(ours.cpuNsPerCall / result.cpuNsPerCall),
        "loop delay p50": `${result.eventLoopDelayP50Ms.toFixed(2)} ms`,
        "loop delay p99": `${result.eventLoopDelayP99Ms.toFixed(2)} ms`,
        "loop delay max": `${result.eventLoopDelayMaxMs.toFixed(2)} ms`,
      });
    }
    if (ours === undefined) rows.push({ "in flight": inFlight.toLocaleString("en-US"), contestant: OURS, "wall/call": PENDING });
  }

  const oursResults = results.filter((result) => result.contestant === OURS);
  // Issue 52: at 10,000 in flight, our p99 loop delay within 1.25× a minimal async wrapper's (plus 1 ms of timer resolution).
  const oursAtMost = results.find((result) => result.contestant === OURS && result.inFlight === JUDGED_IN_FLIGHT);
  const minimalAtMost = results.find((result) => result.contestant === MINIMAL_WRAPPER && result.inFlight === JUDGED_IN_FLIGHT);
  const flat =
    oursAtMost !== undefined &&
    minimalAtMost !== undefined &&
    oursAtMost.eventLoopDelayP99Ms <= minimalAtMost.eventLoopDelayP99Ms * LOOP_DELAY_MAX_RATIO + 1;
  return {
    id: "concurrency",
    title: "6. Concurrency and event-loop delay",
    method:
      `N calls started together (Promise.all) through one plugin, each tool resolving on the next setImmediate, repeated for ≥ ${MIN_MS} ms ` +
      `per row, ${ROUNDS} interleaved rounds, the median reading of each column reported; every contestant is called through the same caller frame ` +
      "(`async () => { const result = await call(); check(result); return result; }`); event-loop delay from perf_hooks.monitorEventLoopDelay (resolution 1 ms) over the same window. " +
      "Starting N calls in one synchronous burst delays the loop for the floor too, so compare each row with the floor at the same N.",
    tables: [{ table: { columns: Object.keys(rows[0]!), rows } }],
    targets: [
      {
        name: "event-loop delay at 10,000 in flight",
        target: `p99 loop delay ≤ ${LOOP_DELAY_MAX_RATIO}× a minimal async wrapper's (+1 ms resolution)`,
        measured:
          oursAtMost === undefined || minimalAtMost === undefined
            ? PENDING
            : `ours ${oursAtMost.eventLoopDelayP99Ms.toFixed(2)} ms vs minimal wrapper ${minimalAtMost.eventLoopDelayP99Ms.toFixed(2)} ms ` +
              `(${formatRatio(oursAtMost.eventLoopDelayP99Ms / minimalAtMost.eventLoopDelayP99Ms)}); ours at each load: ` +
              oursResults
                .map((result) => `${result.inFlight.toLocaleString("en-US")}: ${result.eventLoopDelayP99Ms.toFixed(2)} ms`)
                .join("; "),
        met: oursAtMost === undefined || minimalAtMost === undefined ? null : flat,
      },
    ],
    notes: LEVELS.map((inFlight) => {
      const at = (name: string) => results.find((result) => result.inFlight === inFlight && result.contestant === name);
      const ours = at(OURS);
      const minimal = at(MINIMAL_WRAPPER);
      const floor = at(contestants[0]![0]);
      if (ours === undefined || minimal === undefined || floor === undefined) return "";
      return (
        `${inFlight.toLocaleString("en-US")} in flight: p99 loop delay ${ours.eventLoopDelayP99Ms.toFixed(2)} ms for retry-reflect, ` +
        `${minimal.eventLoopDelayP99Ms.toFixed(2)} ms for a minimal async wrapper with no policy at all, ${floor.eventLoopDelayP99Ms.toFixed(2)} ms for the bare tool; ` +
        `CPU per call ${formatRatio(ours.cpuNsPerCall / minimal.cpuNsPerCall)} the minimal wrapper's.`
      );
    }).filter((note) => note !== ""),
    data: {
      results: results.map((result) => ({ ...result, nsPerCall: round(result.nsPerCall), cpuNsPerCall: round(result.cpuNsPerCall) })),
    },
  };
}
