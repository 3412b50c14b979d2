import { formatBytes, formatNs, formatRatio, round } from "../format.js";
import { auditHotPath, describeCounts, type HotPathCounts } from "../hot-path-audit.js";
import { allocatedPerCall, type Contestant, compare } from "../measure.js";
import { type CoreModule, PENDING } from "../ours.js";
import {
  cockatielRetryBreaker,
  cockatielRetryBreakerTimeout,
  opossumBreaker,
  P_RETRY_VARIANTS_NOTE,
  pRetryDefaultCall,
  pRetryFullCall,
} from "../peers.js";
import type { Cell, SuiteResult, TargetResult } from "../report-types.js";

const OURS = "retry-reflect plugin.execute";
const OURS_AFTER_FAILURE = "retry-reflect after one unrelated failure";
const OURS_OBSERVED = "retry-reflect with one no-op observer";
const COCKATIEL = "cockatiel wrap(retry, circuitBreaker)";
const OURS_NO_LIMIT = "retry-reflect, attemptTimeoutMs: 0 (no time limit)";
const COCKATIEL_TIMEOUT = "cockatiel wrap(retry, circuitBreaker, timeout(60 s))";
const SUCCESS_PATH_ROUNDS = 11;
/** After an unrelated tool failed once, our overhead may grow by at most this factor. */
const AFTER_FAILURE_MAX_RATIO = 1.3;
/** With one observer whose hooks do nothing, our overhead may grow by at most this factor. */
const OBSERVED_MAX_RATIO = 3;

/**
 * A plugin in which another tool (`other_tool`, another scope) failed once with a plain error, so
 * that the plugin holds state for a tool other than the one measured. Returns what that left.
 */
async function pluginAfterUnrelatedFailure(core: CoreModule) {
  const plugin = core.RetryReflectPlugin.create({});
  const outcome = await plugin.execute({ toolName: "other_tool", args: {}, scope: "elsewhere" }, () => {
    throw new Error("Invalid input");
  });
  if (outcome.status === "success") throw new Error("the unrelated failure did not fail");
  return { plugin, outcomeStatus: outcome.status, circuits: plugin.circuits.size };
}

/** A ratio target: `measured ≤ limit × reference`, pending while ours has not landed. */
function ratioTarget(
  name: string,
  target: string,
  describe: (ratio: number) => string,
  value: number | undefined,
  reference: number,
  limit: number,
): TargetResult {
  if (value === undefined) return { name, target, measured: PENDING, met: null };
  const ratio = value / reference;
  return { name, target, measured: describe(ratio), met: ratio <= limit };
}

/** 1. Success path: a no-op async tool through each layer. */
export async function successPath(core: CoreModule | undefined): Promise<SuiteResult> {
  const args = { city: "nyc" };
  const tool = async (_args?: unknown) => 1;
  const cockatiel = cockatielRetryBreaker();
  const cockatielTimeout = cockatielRetryBreakerTimeout();
  const opossum = opossumBreaker(tool);
  const opossumNoPercentiles = opossumBreaker(tool, { rollingPercentilesEnabled: false });
  const notes: string[] = [];

  const contestants: Contestant[] = [["floor: await tool()", () => tool(args)]];
  if (core !== undefined) {
    const plugin = core.RetryReflectPlugin.create({});
    contestants.push([OURS, () => plugin.execute({ toolName: "get_weather", args, callId: "call_1", scope: "run-1" }, tool)]);
    // Our default has a 60 s time limit per attempt; this row has none, like cockatiel's plain row.
    const noLimit = core.RetryReflectPlugin.create({ attemptTimeoutMs: 0 });
    contestants.push([OURS_NO_LIMIT, () => noLimit.execute({ toolName: "get_weather", args, callId: "call_1", scope: "run-1" }, tool)]);
    const afterFailure = await pluginAfterUnrelatedFailure(core);
    contestants.push([
      OURS_AFTER_FAILURE,
      () => afterFailure.plugin.execute({ toolName: "get_weather", args, callId: "call_1", scope: "run-1" }, tool),
    ]);
    notes.push(
      `"${OURS_AFTER_FAILURE}": a separate plugin in which \`other_tool\` failed once (a plain \`new Error("Invalid input")\`, scope "elsewhere") before measuring; ` +
        `that call's outcome was \`${afterFailure.outcomeStatus}\` and it left ${afterFailure.circuits} circuit-breaker entr${afterFailure.circuits === 1 ? "y" : "ies"} (\`plugin.circuits.size\`; its attempt counters are not visible through the public API).`,
    );
    const observer = {
      onEvent: () => {},
      onCallStart: () => {},
      runInContext: <T>(_call: unknown, run: () => T): T => run(),
      onCallEnd: () => {},
    };
    const observed = core.RetryReflectPlugin.create({ observers: [observer] });
    contestants.push([OURS_OBSERVED, () => observed.execute({ toolName: "get_weather", args, callId: "call_1", scope: "run-1" }, tool)]);
    notes.push(
      `"${OURS_OBSERVED}": \`observers: [observer]\` where the observer has all four hooks (\`onEvent\`, \`onCallStart\`, \`runInContext: (_call, run) => run()\`, \`onCallEnd\`) and they do nothing.`,
    );
  }
  contestants.push(
    [COCKATIEL, () => cockatiel.execute(() => tool(args))],
    [COCKATIEL_TIMEOUT, () => cockatielTimeout.execute(() => tool(args))],
    ["opossum fire (timeout off)", () => opossum.fire()],
    ["opossum fire (timeout off, rollingPercentilesEnabled: false)", () => opossumNoPercentiles.fire()],
    ["p-retry (every option given)", () => pRetryFullCall(() => tool(args))],
    ["p-retry (no options)", () => pRetryDefaultCall(() => tool(args))],
  );

  // Eleven rounds: on a shared machine one round of a contestant can cost twice another; the median of 11 holds still.
  const timings = await compare(contestants, { rounds: SUCCESS_PATH_ROUNDS });
  const floor = timings[0]!.avgNs;
  const ours = timings.find((timing) => timing.name === OURS);
  const oursOverhead = ours === undefined ? Number.NaN : ours.avgNs - floor;
  const overheadOf = (name: string) => {
    const timing = timings.find((candidate) => candidate.name === name);
    return timing === undefined ? undefined : timing.avgNs - floor;
  };

  const allocations = new Map<string, number>();
  const audits = new Map<string, HotPathCounts>();
  for (const [name, fn] of contestants) {
    allocations.set(name, await allocatedPerCall(fn));
    audits.set(name, await auditHotPath(fn));
  }
  opossum.shutdown();
  opossumNoPercentiles.shutdown();

  const rows = timings.map((timing) => {
    const overhead = timing.avgNs - floor;
    const isFloor = timing === timings[0];
    const row: Record<string, Cell> = {
      contestant: timing.name,
      "ns/call": formatNs(timing.avgNs),
      p50: formatNs(timing.p50Ns),
      "overhead over floor": isFloor ? "—" : formatNs(overhead),
      "ours / this (total)": ours === undefined ? PENDING : formatRatio(ours.avgNs / timing.avgNs),
      "ours / this (overhead)": ours === undefined ? PENDING : isFloor ? "—" : formatRatio(oursOverhead / overhead),
      "heap allocated/call": formatBytes(allocations.get(timing.name) ?? Number.NaN),
      "timers, AbortControllers, listeners": describeCounts(audits.get(timing.name)!),
    };
    return row;
  });
  if (ours === undefined)
    rows.splice(
      1,
      0,
      { contestant: OURS, "ns/call": PENDING },
      { contestant: OURS_AFTER_FAILURE, "ns/call": PENDING },
      { contestant: OURS_OBSERVED, "ns/call": PENDING },
    );

  const cockatielTiming = timings.find((timing) => timing.name === COCKATIEL)!;
  const cockatielOverhead = cockatielTiming.avgNs - floor;
  const oursAudit = audits.get(OURS);
  // Part 4: one attempt has one timer (its limit) and one signal (one AbortController); nothing else.
  const oneTimerOneSignal =
    oursAudit !== undefined &&
    oursAudit.setTimeout <= 1 &&
    oursAudit.abortController <= 1 &&
    oursAudit.setInterval === 0 &&
    oursAudit.setImmediate === 0;
  return {
    id: "success-path",
    title: "1. Success path (no-op async tool)",
    method:
      `mitata with process CPU time as its clock, contestants interleaved over ${SUCCESS_PATH_ROUNDS} rounds of ≥ 120 ms each, each contestant's median round reported (by mean ns/call); a call is awaited before the next. ` +
      "Overhead = contestant − floor. Heap allocated/call: heapUsed delta over 500 sequential calls, median of 25 batches. " +
      "Timers/AbortControllers/listeners: counted through patched globals over 1,000 calls.",
    tables: [{ table: { columns: Object.keys(rows[0]!), rows } }],
    targets: [
      {
        name: "success-path overhead",
        target: "≤ ½ of cockatiel retry+breaker overhead",
        measured:
          ours === undefined
            ? PENDING
            : `ours ${formatNs(oursOverhead)} vs cockatiel ${formatNs(cockatielOverhead)} (${formatRatio(oursOverhead / cockatielOverhead)})`,
        met: ours === undefined ? null : oursOverhead <= cockatielOverhead / 2,
      },
      {
        name: "success-path overhead, like for like (both with a 60 s attempt limit)",
        target: "≤ ½ of cockatiel retry+breaker+timeout overhead",
        measured:
          ours === undefined || overheadOf(COCKATIEL_TIMEOUT) === undefined
            ? PENDING
            : `ours ${formatNs(oursOverhead)} vs cockatiel ${formatNs(overheadOf(COCKATIEL_TIMEOUT)!)} (${formatRatio(oursOverhead / overheadOf(COCKATIEL_TIMEOUT)!)}); without a limit: ours ${formatNs(overheadOf(OURS_NO_LIMIT) ?? Number.NaN)} vs cockatiel ${formatNs(cockatielOverhead)} (${formatRatio((overheadOf(OURS_NO_LIMIT) ?? Number.NaN) / cockatielOverhead)})`,
        met: ours === undefined || overheadOf(COCKATIEL_TIMEOUT) === undefined ? null : oursOverhead <= overheadOf(COCKATIEL_TIMEOUT)! / 2,
      },
      {
        name: "one timer and one signal per attempt (DESIGN.md Part 4)",
        target: "≤ 1 setTimeout and ≤ 1 AbortController per call, no interval or immediate",
        measured: oursAudit === undefined ? PENDING : describeCounts(oursAudit),
        met: oursAudit === undefined ? null : oneTimerOneSignal,
      },
      ratioTarget(
        "after an unrelated failure (core)",
        `overhead ≤ ${AFTER_FAILURE_MAX_RATIO}× the pristine plugin's`,
        (ratio) => `${formatNs(overheadOf(OURS_AFTER_FAILURE)!)} vs pristine ${formatNs(oursOverhead)} (${formatRatio(ratio)})`,
        overheadOf(OURS_AFTER_FAILURE),
        oursOverhead,
        AFTER_FAILURE_MAX_RATIO,
      ),
      ratioTarget(
        "one no-op observer",
        `overhead ≤ ${OBSERVED_MAX_RATIO}× the unobserved plugin's`,
        (ratio) => `${formatNs(overheadOf(OURS_OBSERVED)!)} vs unobserved ${formatNs(oursOverhead)} (${formatRatio(ratio)})`,
        overheadOf(OURS_OBSERVED),
        oursOverhead,
        OBSERVED_MAX_RATIO,
      ),
    ],
    notes: [
      ...notes,
      `Our default has a time limit per attempt (60 s); "${OURS_NO_LIMIT}" is the same plugin without one, beside cockatiel's plain row, and "${COCKATIEL_TIMEOUT}" is cockatiel with the same limit (\`timeout(60_000, TimeoutStrategy.Aggressive)\` inside the retry): compare like with like. The target is judged on the defaults against cockatiel's plain row, as before.`,
      "opossum is shown with its defaults (timeout off, as everywhere here) and with `rollingPercentilesEnabled: false`, with which it no longer concatenates and sorts its window's latencies (for their mean and percentiles) whenever it reads its rolling statistics.",
      P_RETRY_VARIANTS_NOTE,
    ],
    data: {
      timings: timings.map((timing) => ({
        ...timing,
        overheadNs: round(timing.avgNs - floor),
        allocatedBytesPerCall: round(allocations.get(timing.name) ?? Number.NaN),
        hotPath: audits.get(timing.name),
      })),
    },
  };
}
