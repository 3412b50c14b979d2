import { formatBytes, formatNs, formatRatio, round } from "../format.js";
import { auditHotPath, describeCounts, type HotPathCounts } from "../hot-path-audit.js";
import { allocatedPerCall, compare, type Contestant } from "../measure.js";
import { PENDING, type CoreModule } from "../ours.js";
import { cockatielRetryBreaker, opossumBreaker, pRetryCall, pRetryDefaultCall } from "../peers.js";
import type { Cell, SuiteResult } from "../report-types.js";

const OURS = "retry-reflect plugin.execute";
const COCKATIEL = "cockatiel wrap(retry, circuitBreaker)";

/** 1. Success path: a no-op async tool through each layer. */
export async function successPath(core: CoreModule | undefined): Promise<SuiteResult> {
  const args = { city: "nyc" };
  const tool = async (_args?: unknown) => 1;
  const cockatiel = cockatielRetryBreaker();
  const opossum = opossumBreaker(tool);

  const contestants: Contestant[] = [["floor: await tool()", () => tool(args)]];
  if (core !== undefined) {
    const plugin = core.RetryReflectPlugin.create({});
    contestants.push([OURS, () => plugin.execute({ toolName: "get_weather", args, callId: "call_1", scope: "run-1" }, tool)]);
  }
  contestants.push(
    [COCKATIEL, () => cockatiel.execute(() => tool(args))],
    ["opossum fire (timeout off)", () => opossum.fire()],
    ["p-retry (retries 3, minTimeout 0)", () => pRetryCall(() => tool(args))],
    ["p-retry (no options)", () => pRetryDefaultCall(() => tool(args))],
  );

  const timings = await compare(contestants);
  const floor = timings[0]!.avgNs;
  const ours = timings.find((timing) => timing.name === OURS);
  const oursOverhead = ours === undefined ? Number.NaN : ours.avgNs - floor;

  const allocations = new Map<string, number>();
  const audits = new Map<string, HotPathCounts>();
  for (const [name, fn] of contestants) {
    allocations.set(name, await allocatedPerCall(fn));
    audits.set(name, await auditHotPath(fn));
  }
  opossum.shutdown();

  const rows = timings.map((timing) => {
    const overhead = timing.avgNs - floor;
    const isFloor = timing === timings[0];
    const row: Record<string, Cell> = {
      contestant: timing.name,
      "ns/call": formatNs(timing.avgNs),
      p50: formatNs(timing.p50Ns),
      "overhead over floor": isFloor ? "—" : formatNs(overhead),
      "ours / this (total)": ours === undefined ? PENDING : isFloor ? formatRatio(ours.avgNs / timing.avgNs) : formatRatio(ours.avgNs / timing.avgNs),
      "ours / this (overhead)": ours === undefined ? PENDING : isFloor ? "—" : formatRatio(oursOverhead / overhead),
      "heap allocated/call": formatBytes(allocations.get(timing.name) ?? Number.NaN),
      "timers, AbortControllers, listeners": describeCounts(audits.get(timing.name)!),
    };
    return row;
  });
  if (ours === undefined) rows.splice(1, 0, { contestant: OURS, "ns/call": PENDING });

  const cockatielTiming = timings.find((timing) => timing.name === COCKATIEL)!;
  const cockatielOverhead = cockatielTiming.avgNs - floor;
  const oursAudit = audits.get(OURS);
  const noTimers = oursAudit !== undefined && Object.values(oursAudit).every((value) => value === 0);
  return {
    id: "success-path",
    title: "1. Success path (no-op async tool)",
    method:
      "mitata with process CPU time as its clock, contestants interleaved over 5 rounds of ≥ 120 ms each (best round kept); a call is awaited before the next. " +
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
        name: "no timer / AbortController / listener on the success path",
        target: "0 per call",
        measured: oursAudit === undefined ? PENDING : describeCounts(oursAudit),
        met: oursAudit === undefined ? null : noTimers,
      },
    ],
    notes: [
      "p-retry's success path costs several times more with an options object (`{ retries, minTimeout, factor }`) than with none, reproducibly on Node 20 (the time is self time inside `pRetry`); both rows are shown so the comparison is fair to it.",
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
