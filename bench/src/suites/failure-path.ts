import { leastFailurePath } from "../contract-floor.js";
import { formatBytes, formatNs, formatRatio, round } from "../format.js";
import { allocatedPerCall, type Contestant, compare, fixedCalls, type Timing } from "../measure.js";
import { type CoreModule, PENDING } from "../ours.js";
import { cockatielRetryBreaker, type Opossum, opossumBreaker, P_RETRY_VARIANTS_NOTE, pRetryFullCall } from "../peers.js";
import type { Cell, SuiteResult, TargetResult } from "../report-types.js";

const OURS = "retry-reflect (in-place retry, backoff 0)";
const COCKATIEL = "cockatiel wrap(retry, circuitBreaker), ConstantBackoff(0)";
const P_RETRY = "p-retry (every option given)";
const CONTRACT_LEAST = "the contract's least, hand-written (a reference, not a library; not judged)";
const OPOSSUM = "opossum fire + one hand-written retry (fresh breaker, first 2,000 calls)";
const OPOSSUM_NO_PERCENTILES = "opossum fire + one hand-written retry, rollingPercentilesEnabled: false (fresh breaker, first 2,000 calls)";
const OPOSSUM_CALLS = 2_000;
/** Our failure path may cost at most this factor of p-retry's (every option given), per logical call (issue 52). */
const VS_P_RETRY_MAX_RATIO = 1.5;

/** A tool that fails on every odd call and succeeds on every even one: one logical call = fail + success. */
function flakyTool(error: Error): () => Promise<number> {
  let calls = 0;
  return async () => {
    if ((calls++ & 1) === 0) throw error;
    return 1;
  };
}

function networkError(): Error {
  const error = new Error("connect ECONNRESET 127.0.0.1:443") as Error & { code: string };
  error.code = "ECONNRESET";
  return error;
}

/** "failure path vs p-retry": ours ≤ 1.5× p-retry (every option given) per logical call; the overhead ratio is shown too. */
function vsPRetry(ours: Timing | undefined, pRetry: Timing, floor: number, least: Timing | undefined): TargetResult {
  const name = "failure path vs p-retry";
  const target = `ns/call ≤ ${VS_P_RETRY_MAX_RATIO.toFixed(1)}× p-retry's (every option given)`;
  if (ours === undefined) return { name, target, measured: PENDING, met: null };
  const ratio = ours.avgNs / pRetry.avgNs;
  const overheadRatio = (ours.avgNs - floor) / (pRetry.avgNs - floor);
  return {
    name,
    target,
    measured:
      `ours ${formatNs(ours.avgNs)} vs p-retry ${formatNs(pRetry.avgNs)} (${formatRatio(ratio)}); ` +
      `overhead over floor ${formatNs(ours.avgNs - floor)} vs ${formatNs(pRetry.avgNs - floor)} (${formatRatio(overheadRatio)})` +
      (least === undefined
        ? ""
        : `; the contract's least, hand-written: ${formatNs(least.avgNs)} (${formatRatio(least.avgNs / pRetry.avgNs)})`),
    met: ratio <= VS_P_RETRY_MAX_RATIO,
  };
}

/** 3. Failure path: the tool fails once (a network error), the retry succeeds. */
export async function failurePath(core: CoreModule | undefined): Promise<SuiteResult> {
  const notes: string[] = [];
  const floorTool = flakyTool(networkError());
  const contestants: Contestant[] = [
    [
      "floor: try { await tool() } catch { await tool() }",
      async () => {
        try {
          return await floorTool();
        } catch {
          return await floorTool();
        }
      },
    ],
  ];

  if (core !== undefined) {
    // No retry budget, as the peers have none: at 5 % of calls (the default) it would turn most of
    // a microbenchmark's in-place retries into waits at the gate (issue 51's default for fleets).
    const plugin = core.RetryReflectPlugin.create({ initialBackoffMs: 0, retryBudget: false });
    const oursTool = flakyTool(networkError());
    const check = await plugin.execute({ toolName: "get_weather", args: {}, scope: "run-1" }, oursTool);
    if (check.status !== "success" || check.attempt !== 2) {
      throw new Error(`ours did not retry in place: ${check.status} attempt ${check.attempt}`);
    }
    contestants.push([OURS, () => plugin.execute({ toolName: "get_weather", args: {}, callId: "call_1", scope: "run-1" }, oursTool)]);
  }

  const cockatiel = cockatielRetryBreaker();
  const cockatielTool = flakyTool(networkError());
  const pRetryTool = flakyTool(networkError());
  contestants.push([COCKATIEL, () => cockatiel.execute(() => cockatielTool())], [P_RETRY, () => pRetryFullCall(pRetryTool)]);
  if (core !== undefined) {
    const least = leastFailurePath(core.classifyError, flakyTool(networkError()));
    const check = await least();
    if (check.status !== "success" || check.attempt !== 2) throw new Error(`the contract's least did not retry in place: ${check.status}`);
    contestants.push([CONTRACT_LEAST, least]);
    notes.push(
      `"${CONTRACT_LEAST}": what the contract asks of this call, and nothing else, as one async loop (bench/src/contract-floor.ts): each attempt watched for the default limit (a watch list and a promise the tool or the limit settles), ` +
        "the error classified by the library's own `classifyError`, its message cleaned through a memo, a plain error of the structured fields, the failure counted by the breaker and in the tool's row with the time, the decision, the row cleared on the success, and the outcome. " +
        "It shows what the goal leaves for everything else: our options, observers, scopes, the idempotency guard's checks and the shared core path.",
    );
  }
  const timings = await compare(contestants, { clock: "wall" });
  // opossum recomputes its rolling statistics on every failure (it concatenates and sorts every latency
  // of its 10 s window), so its cost per call grows with the calls it has seen: measured on a fresh
  // breaker per round, over a fixed number of calls.
  const opossumBreakers: Opossum<[], number>[] = [];
  const freshOpossum = (options: Opossum.Options) => () => {
    // Alternating failures are 50 % errors: opossum's default 50 % threshold (and its first failure, 100 %) would open it.
    const breaker = opossumBreaker(flakyTool(networkError()), { errorThresholdPercentage: 75, volumeThreshold: 10, ...options });
    opossumBreakers.push(breaker);
    return async () => {
      try {
        return await breaker.fire();
      } catch {
        return await breaker.fire();
      }
    };
  };
  timings.push(await fixedCalls(OPOSSUM, freshOpossum({}), OPOSSUM_CALLS));
  timings.push(await fixedCalls(OPOSSUM_NO_PERCENTILES, freshOpossum({ rollingPercentilesEnabled: false }), OPOSSUM_CALLS));
  const floor = timings[0]!.avgNs;
  const ours = timings.find((timing) => timing.name === OURS);
  const allocations = new Map<string, number>();
  for (const [name, fn] of contestants) {
    if (name === COCKATIEL) continue; // its 1 ms setTimeout per retry makes a 500-call batch too slow; measured as n/a
    allocations.set(name, await allocatedPerCall(fn, 200, 15));
  }
  for (const breaker of opossumBreakers) breaker.shutdown();
  notes.push(
    "cockatiel sleeps with `setTimeout(backoff)` even when the backoff is 0, so each of its retries waits one timer tick (≈1 ms in Node); that is its real cost at backoff 0, not a harness artefact.",
    "opossum has no retry of its own: its rows are the breaker plus one hand-written retry, and its error threshold is raised to 75 % (volume threshold 10) so that alternating failures do not open it.",
    `opossum recomputes its rolling statistics on every failure (concatenating and sorting every latency recorded in its 10 s window), so its cost per call grows with the call rate: its rows are the first ${OPOSSUM_CALLS.toLocaleString("en-US")} calls of a fresh breaker (median of 3 rounds), with its defaults and with \`rollingPercentilesEnabled: false\` (no sorting of latencies for percentiles). Measured continuously for seconds, as the other rows are, it reached several milliseconds per call (4.7 ms in one run).`,
    P_RETRY_VARIANTS_NOTE,
    "p-retry with no options object is not shown here: its default backoff is 1 s.",
  );

  const rows: Record<string, Cell>[] = timings.map((timing, index) => ({
    contestant: timing.name,
    "ns/call": formatNs(timing.avgNs),
    p50: formatNs(timing.p50Ns),
    "overhead over floor": index === 0 ? "—" : formatNs(timing.avgNs - floor),
    "ours / this": ours === undefined ? PENDING : formatRatio(ours.avgNs / timing.avgNs),
    "heap allocated/call": allocations.has(timing.name) ? formatBytes(allocations.get(timing.name)!) : "n/a",
  }));
  if (ours === undefined) rows.splice(1, 0, { contestant: OURS, "ns/call": PENDING });

  return {
    id: "failure-path",
    title: "3. Failure path (fails once, then succeeds; backoff 0)",
    method:
      "One logical call = a thrown network error (code ECONNRESET), then a success. The floor is a hand-written " +
      "try/catch retry. Wall-clock time (a backoff timer is latency, not CPU), 5 interleaved rounds of ≥ 120 ms each, each contestant's median round reported (by mean ns/call).",
    tables: [{ table: { columns: Object.keys(rows[0]!), rows } }],
    targets: [
      vsPRetry(
        ours,
        timings.find((timing) => timing.name === P_RETRY)!,
        floor,
        timings.find((timing) => timing.name === CONTRACT_LEAST),
      ),
    ],
    notes,
    data: {
      timings: timings.map((timing) => ({
        ...timing,
        overheadNs: round(timing.avgNs - floor),
        allocatedBytesPerCall: allocations.has(timing.name) ? round(allocations.get(timing.name)!) : null,
      })),
    },
  };
}
