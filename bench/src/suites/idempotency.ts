import { formatCount, formatNs, formatRatio, round } from "../format.js";
import { type Contestant, compare, type Timing } from "../measure.js";
import { type CoreModule, PENDING } from "../ours.js";
import type { Cell, SuiteResult, TargetResult } from "../report-types.js";

const PAIRS = 1_000_000;
const SAME_KEY_CALLS = 10_000;
const BUDGET_NS = 4e9;
const REPLAY_FLOOR = "floor: a Map lookup of the stored result";
const REPLAY_OURS = "retry-reflect plugin.execute, replay of a completed key";
const REPLAY_HOST = "retry-reflect runToolCall (every adapter's path), replay of a completed key (not judged)";
/** A replay through `plugin.execute` may cost at most this factor of a Map lookup. */
const REPLAY_MAX_RATIO = 8;

/** Keeps the floor's spread args reachable, so the engine cannot drop the copy the floor must pay for. */
let floorArgsSink: unknown;

/** Read once at the end, so that the sink is used (and the copies it took cannot be optimised away). */
export function floorSinkTaken(): boolean {
  return floorArgsSink !== undefined;
}

interface ReplayComparison {
  readonly floor: Timing;
  readonly ours: Timing;
  /** The same replay through `runToolCall`, as an adapter makes it: a host call object per call. */
  readonly host: Timing;
  /** How many times the tool ran over the whole comparison: 1 (the first call) when every later call replayed. */
  readonly executions: number;
}

/**
 * A write tool's replay: after one call completed idempotency key `k-1`, every further
 * `plugin.execute` with that key returns the stored result. The floor is the least a replay can
 * cost: a Map lookup of the stored value. Both build a fresh args object per call (`{ ...args }`),
 * so nothing can be cached by object identity, and both pay that copy.
 */
async function replayComparison(core: CoreModule): Promise<ReplayComparison> {
  const plugin = core.RetryReflectPlugin.create({ toolEffects: { send_email: "write" } });
  const args = { to: "ada@example.com", subject: "hi", idempotency_key: "k-1" };
  let executions = 0;
  const tool = async (_args: unknown) => {
    executions++;
    return { sent: true };
  };
  const execute = () => plugin.execute({ toolName: "send_email", args: { ...args }, scope: "run-1" }, tool);
  const first = await execute();
  if (first.status !== "success" || first.replayed) throw new Error(`the first call did not complete the key: ${first.status}`);
  const replay = await execute();
  if (replay.status !== "success" || !replay.replayed)
    throw new Error(`the measured call is not a replay: ${replay.status}${replay.status === "success" ? ", replayed false" : ""}`);

  // An adapter's call: a host call object made per call (its scope a string), run through the seam.
  // Its `run` is made once, as an adapter's method is: a closure made per call would be wrapped by
  // tsx's `__name` helper (a `defineProperty` per call), which the built packages do not do.
  const run = (callArgs: unknown) => tool(callArgs);
  const viaHost = () => core.runToolCall(plugin, { toolName: "send_email", args: { ...args }, scope: "run-1", run });
  const hostReplay = await viaHost();
  if (hostReplay.status !== "success" || !hostReplay.replayed) throw new Error(`the host call is not a replay: ${hostReplay.status}`);

  const stored = new Map<string, unknown>([[args.idempotency_key, first.value]]);
  const contestants: Contestant[] = [
    [
      REPLAY_FLOOR,
      async () => {
        const copy = { ...args };
        floorArgsSink = copy;
        return stored.get(copy.idempotency_key);
      },
    ],
    [REPLAY_OURS, execute],
    [REPLAY_HOST, viaHost],
  ];
  const [floor, ours, host] = await compare(contestants);
  const last = await execute();
  if (last.status !== "success" || !last.replayed) throw new Error("a replay stopped replaying during the measurement");
  return { floor: floor!, ours: ours!, host: host!, executions };
}

function replayTarget(replay: ReplayComparison | undefined): TargetResult {
  const name = "idempotent replay";
  const target = `ns/call ≤ ${REPLAY_MAX_RATIO}× a Map lookup's`;
  if (replay === undefined) return { name, target, measured: PENDING, met: null };
  const ratio = replay.ours.avgNs / replay.floor.avgNs;
  return {
    name,
    target,
    measured: `ours ${formatNs(replay.ours.avgNs)} vs Map lookup ${formatNs(replay.floor.avgNs)} (${formatRatio(ratio)})`,
    met: ratio <= REPLAY_MAX_RATIO && replay.executions === 1,
  };
}

/**
 * begin+complete pairs on fresh keys until all keys are used or the time budget runs out (eviction
 * in a Map-based LRU can be slow enough that 1,000,000 pairs would not fit the run's budget).
 */
async function pairsPerSecond(
  core: CoreModule,
  keys: readonly string[],
  value: unknown,
  options: { maxEntries?: number },
  store = new core.InMemoryIdempotencyStore(options),
): Promise<{ nsPerPair: number; pairs: number }> {
  for (let warm = 0; warm < 20_000; warm++) {
    const begun = await store.begin(`warm-${warm}`, "fp", 30_000);
    if (begun.status === "acquired") await store.complete(`warm-${warm}`, begun.token, value, 86_400_000);
  }
  store.clear();
  globalThis.gc?.();
  const start = process.hrtime.bigint();
  let pairs = 0;
  for (const key of keys) {
    const begun = await store.begin(key, "fp", 30_000);
    if (begun.status === "acquired") await store.complete(key, begun.token, value, 86_400_000);
    pairs++;
    if ((pairs & 1023) === 0 && Number(process.hrtime.bigint() - start) > BUDGET_NS) break;
  }
  return { nsPerPair: Number(process.hrtime.bigint() - start) / pairs, pairs };
}

/** 5. Idempotency: store throughput, and single flight of 10,000 concurrent calls with one key. */
export async function idempotency(core: CoreModule | undefined): Promise<SuiteResult> {
  if (core === undefined) {
    return {
      id: "idempotency",
      title: "5. Idempotency",
      method: "",
      tables: [{ table: { columns: ["measure", "value"], rows: [{ measure: "all", value: PENDING }] } }],
      targets: [
        replayTarget(undefined),
        { name: "10,000 concurrent same-key calls run the tool once", target: "exactly 1 execution", measured: PENDING, met: null },
      ],
      notes: [],
      data: {},
    };
  }
  // Measured first, before a million keys are allocated and left on the heap.
  const replay = await replayComparison(core);
  const replayRows: Record<string, Cell>[] = [replay.floor, replay.ours, replay.host].map((timing) => ({
    contestant: timing.name,
    "ns/call": formatNs(timing.avgNs),
    p50: formatNs(timing.p50Ns),
    "ours / this": formatRatio(replay.ours.avgNs / timing.avgNs),
  }));

  const rows: Record<string, Cell>[] = [];
  const keys = Array.from({ length: PAIRS }, (_, index) => `send_email\u0000key-${index}`);
  const value = { ok: true };

  // Store throughput: begin + complete on fresh keys, below the bound and at the bound (evicting).
  const below = await pairsPerSecond(core, keys, value, { maxEntries: PAIRS * 2 });
  rows.push({
    measure: "InMemoryIdempotencyStore begin+complete pairs/s, below its bound (no eviction)",
    value: formatCount(1e9 / below.nsPerPair),
    "per op": `${formatNs(below.nsPerPair)} (${formatCount(below.pairs)} pairs)`,
  });
  const store = new core.InMemoryIdempotencyStore({});
  const atBound = await pairsPerSecond(core, keys, value, {}, store);
  rows.push({
    measure: `InMemoryIdempotencyStore begin+complete pairs/s, at its default bound (${formatCount(store.maxEntries)} entries, evicting)`,
    value: formatCount(1e9 / atBound.nsPerPair),
    "per op": `${formatNs(atBound.nsPerPair)} (${formatCount(atBound.pairs)} pairs)`,
  });
  const pairNs = below.nsPerPair;

  // Replays: begin on a completed key.
  const replayKeys = keys.slice(Math.max(0, atBound.pairs - 50_000), atBound.pairs);
  const start = process.hrtime.bigint();
  let replays = 0;
  for (let round = 0; round < 10; round++) {
    for (const key of replayKeys) if ((await store.begin(key, "fp", 30_000)).status === "completed") replays++;
  }
  const replayNs = Number(process.hrtime.bigint() - start) / (replayKeys.length * 10);
  rows.push({
    measure: "InMemoryIdempotencyStore begin on a completed key (replay lookups/s)",
    value: formatCount(1e9 / replayNs),
    "per op": formatNs(replayNs),
  });

  // Single flight: 10,000 concurrent calls of a write tool with one key.
  const plugin = core.RetryReflectPlugin.create({ toolEffects: { send_email: "write" } });
  const runs: Array<{ executions: number; successes: number; replayed: number; ms: number }> = [];
  for (let round = 0; round < 5; round++) {
    let executions = 0;
    const args = { to: "ada@example.com", body: "hello", idempotency_key: `order-${round}` };
    const tool = async () => {
      executions++;
      await new Promise<void>((resolve) => setImmediate(resolve));
      return { sent: true };
    };
    const began = process.hrtime.bigint();
    const outcomes = await Promise.all(
      Array.from({ length: SAME_KEY_CALLS }, (_, index) =>
        // Many runs of one conversation (one namespace): a write is shared within a namespace only.
        plugin.execute({ toolName: "send_email", args, callId: `call_${index}`, scope: `run-${index}`, namespace: "conversation-1" }, tool),
      ),
    );
    const ms = Number(process.hrtime.bigint() - began) / 1e6;
    runs.push({
      executions,
      successes: outcomes.filter((outcome) => outcome.status === "success").length,
      replayed: outcomes.filter((outcome) => outcome.status === "success" && outcome.replayed).length,
      ms,
    });
  }
  const exactlyOnce = runs.every((run) => run.executions === 1 && run.successes === SAME_KEY_CALLS);
  const best = runs.reduce((fastest, run) => (run.ms < fastest.ms ? run : fastest));
  const first = runs[0]!;
  rows.push({
    measure: `${formatCount(SAME_KEY_CALLS)} concurrent same-key calls (5 rounds, new key each)`,
    value: `${runs.map((run) => run.executions).join(", ")} execution(s)`,
    "per op": `${formatNs((best.ms * 1e6) / SAME_KEY_CALLS)} per call (${best.ms.toFixed(1)} ms per round); ${formatCount(first.successes)} success, ${formatCount(first.replayed)} marked replayed`,
  });

  return {
    id: "idempotency",
    title: "5. Idempotency",
    method:
      `Up to ${formatCount(PAIRS)} begin+complete pairs on fresh keys (at most ${BUDGET_NS / 1e9} s each) through InMemoryIdempotencyStore, below its bound and at its default bound (evicting); ` +
      `then ${formatCount(SAME_KEY_CALLS)} plugin.execute calls of a write tool with one idempotency_key, started together, the tool held for one setImmediate. ` +
      'Replay: `plugin.execute` of a write tool (`toolEffects: { send_email: "write" }`) whose key one earlier call completed, against a Map lookup of the stored value; ' +
      "both build a fresh args object per call (`{ ...args }`); the same replay through `runToolCall` (the seam every adapter calls, a host call object per call) is shown, not judged; " +
      "process CPU time, 5 interleaved rounds of ≥ 120 ms, each contestant's median round reported.",
    tables: [
      {
        caption: "Replay of a completed key, one call at a time",
        table: { columns: ["contestant", "ns/call", "p50", "ours / this"], rows: replayRows },
      },
      { caption: "InMemoryIdempotencyStore and single flight", table: { columns: ["measure", "value", "per op"], rows } },
    ],
    targets: [
      replayTarget(replay),
      {
        name: "10,000 concurrent same-key calls run the tool once",
        target: "exactly 1 execution, every call a success",
        measured: runs.map((run) => `${run.executions} exec / ${formatCount(run.successes)} ok`).join("; "),
        met: exactlyOnce,
      },
    ],
    notes: [
      `Replay: the tool ran ${replay.executions} time(s) over the whole comparison (the first call only, when every later call replayed).`,
    ],
    data: {
      replay: { floor: replay.floor, ours: replay.ours, executions: replay.executions },
      pairsPerSecond: round(1e9 / pairNs, 0),
      pairsPerSecondAtBound: round(1e9 / atBound.nsPerPair, 0),
      pairsMeasured: { below: below.pairs, atBound: atBound.pairs },
      replayLookupsPerSecond: round(1e9 / replayNs, 0),
      replays,
      sameKey: runs.map((run) => ({ ...run, ms: round(run.ms, 2) })),
    },
  };
}
