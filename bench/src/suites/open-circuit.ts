import { formatBytes, formatNs, formatRatio, round } from "../format.js";
import { allocatedPerCall, type Contestant, compare } from "../measure.js";
import { type CoreModule, PENDING } from "../ours.js";
import { BrokenCircuitError, cockatielBreaker, cockatielRetryBreaker, opossumBreaker } from "../peers.js";
import type { Cell, SuiteResult } from "../report-types.js";

const COCKATIEL_COMPOSED = "cockatiel wrap(retry, circuitBreaker)";
/** Our rejection may cost at most this factor of cockatiel's (issue 52). */
const OPEN_CIRCUIT_MAX_RATIO = 0.25;

const OURS = "retry-reflect (returns a reflect outcome: CIRCUIT_OPEN, temporary)";
const RESET_MS = 1e9;

/** 2. Open-circuit rejection: how fast a broken tool is refused. */
export async function openCircuit(core: CoreModule | undefined): Promise<SuiteResult> {
  const tool = async () => 1;
  const failing = async () => {
    throw new Error("ECONNRESET: socket hang up");
  };
  const contestants: Contestant[] = [];
  const notes: string[] = [];

  if (core !== undefined) {
    const plugin = core.RetryReflectPlugin.create({
      circuitBreakerThreshold: 1,
      circuitBreakerResetMs: RESET_MS,
      initialBackoffMs: 0,
    });
    // Trip it in one agent run; measure later runs (scopes) hitting the open circuit.
    await plugin.execute({ toolName: "broken_api", args: {}, callId: "call_0", scope: "run-0" }, failing);
    const probe = await plugin.execute({ toolName: "broken_api", args: {}, callId: "call_1", scope: "run-1" }, tool);
    // An open circuit is told as temporary (issue 51): a reflect outcome with CIRCUIT_OPEN, the tool not run.
    if (plugin.circuitState("broken_api") !== "open" || probe.status !== "reflect" || probe.error.code !== "CIRCUIT_OPEN") {
      throw new Error(
        `ours did not open: state ${plugin.circuitState("broken_api")}, outcome ${probe.status} ${probe.status === "reflect" ? probe.error.code : ""}`,
      );
    }
    // Each measured call is another agent run meeting the open circuit: a run told to wait waits
    // before its own next call (issue 51), so one run calling again at once would measure that wait.
    let run = 1;
    contestants.push([OURS, () => plugin.execute({ toolName: "broken_api", args: {}, callId: "call_1", scope: `run-${++run}` }, tool)]);
  }

  const cockatiel = cockatielBreaker({ threshold: 1, halfOpenAfter: RESET_MS });
  await cockatiel.execute(failing).catch(() => undefined);
  const composed = cockatielRetryBreaker({ threshold: 1, halfOpenAfter: RESET_MS });
  await composed.execute(failing).catch(() => undefined);
  for (const policy of [cockatiel, composed]) {
    const rejected = await policy.execute(tool).then(
      () => false,
      (error: unknown) => error instanceof BrokenCircuitError,
    );
    if (!rejected) throw new Error("cockatiel circuit did not open");
  }
  const opossum = opossumBreaker(tool);
  const opossumNoPercentiles = opossumBreaker(tool, { rollingPercentilesEnabled: false });
  for (const breaker of [opossum, opossumNoPercentiles]) {
    breaker.open();
    const rejected = await breaker.fire().then(
      () => false,
      () => true,
    );
    if (!rejected) throw new Error("opossum circuit did not open");
  }

  const swallow = () => undefined;
  contestants.push(
    ["cockatiel circuitBreaker (throws BrokenCircuitError)", () => cockatiel.execute(tool).catch(swallow)],
    [COCKATIEL_COMPOSED, () => composed.execute(tool).catch(swallow)],
    ["opossum fire (rejects EOPENBREAKER)", () => opossum.fire().catch(swallow)],
    ["opossum fire, rollingPercentilesEnabled: false (rejects EOPENBREAKER)", () => opossumNoPercentiles.fire().catch(swallow)],
  );

  const timings = await compare(contestants);
  const ours = timings.find((timing) => timing.name === OURS);
  const cockatielTiming = timings.find((timing) => timing.name === COCKATIEL_COMPOSED);
  const allocations = new Map<string, number>();
  for (const [name, fn] of contestants) allocations.set(name, await allocatedPerCall(fn));
  opossum.shutdown();
  opossumNoPercentiles.shutdown();

  const rows: Record<string, Cell>[] = timings.map((timing) => ({
    contestant: timing.name,
    "ns/call": formatNs(timing.avgNs),
    p50: formatNs(timing.p50Ns),
    "ours / this": ours === undefined ? PENDING : formatRatio(ours.avgNs / timing.avgNs),
    "heap allocated/call": formatBytes(allocations.get(timing.name) ?? Number.NaN),
  }));
  if (ours === undefined) rows.unshift({ contestant: OURS, "ns/call": PENDING });

  return {
    id: "open-circuit",
    title: "2. Open-circuit rejection",
    method:
      "Each breaker is opened first (one failure with threshold 1, or opossum's open()), then a no-op call is made " +
      "through it and awaited; the peers' rejections are caught. mitata with process CPU time as its clock, 5 interleaved rounds of ≥ 120 ms each, each contestant's median round reported (by mean ns/call). " +
      "opossum is shown with its defaults and with `rollingPercentilesEnabled: false`.",
    tables: [{ table: { columns: Object.keys(rows.find((row) => Object.keys(row).length > 2) ?? rows[0]!), rows } }],
    targets: [
      {
        name: "open-circuit rejection",
        target: `≤ ${OPEN_CIRCUIT_MAX_RATIO}× cockatiel wrap(retry, circuitBreaker)'s rejection, a returned outcome`,
        measured:
          ours === undefined || cockatielTiming === undefined
            ? PENDING
            : `ours ${formatNs(ours.avgNs)} vs cockatiel ${formatNs(cockatielTiming.avgNs)} per call (${formatRatio(ours.avgNs / cockatielTiming.avgNs)})`,
        met: ours === undefined || cockatielTiming === undefined ? null : ours.avgNs <= OPEN_CIRCUIT_MAX_RATIO * cockatielTiming.avgNs,
      },
    ],
    notes,
    data: {
      timings: timings.map((timing) => ({ ...timing, allocatedBytesPerCall: round(allocations.get(timing.name) ?? Number.NaN) })),
    },
  };
}
