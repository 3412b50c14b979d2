import { measure } from "mitata";

/** One contestant's per-call timing, in nanoseconds. */
export interface Timing {
  readonly name: string;
  /** Mean per call (mitata's trimmed average), median round. */
  readonly avgNs: number;
  /** Median per call, median round. */
  readonly p50Ns: number;
  /** 99th percentile per call (of batched samples), median round. */
  readonly p99Ns: number;
  /** Calls measured in the median round. */
  readonly calls: number;
  /** Mean per call of every round, in the order they ran: the spread the median was taken from. */
  readonly roundAvgNs: readonly number[];
}

export type Contestant = readonly [name: string, fn: () => unknown];

/**
 * Process CPU time (user + system) in nanoseconds. The benchmark machines are shared: wall time
 * counts the time other processes hold the CPU, CPU time does not. It does count this process's
 * GC helper threads, which are a real cost of the code measured.
 */
export function cpuNow(): number {
  const usage = process.cpuUsage();
  return (usage.user + usage.system) * 1000;
}

export interface CompareOptions {
  /** Rounds; contestants are interleaved, and each reports its median round (by mean). @default 5 */
  readonly rounds?: number;
  /** Minimum time per contestant per round, in ms (of the chosen clock). @default 120 */
  readonly minCpuMs?: number;
  /**
   * `"cpu"`: process CPU time, robust on a shared machine. `"wall"`: elapsed time, for paths that
   * wait (a timer is latency, not CPU). @default "cpu"
   */
  readonly clock?: "cpu" | "wall";
}

/** A round's timing without the spread of every round, which is added once all rounds ran. */
type RoundTiming = Omit<Timing, "roundAvgNs">;

/**
 * The median round by mean ns/call: the middle one for an odd count, the slower of the two middle
 * ones for an even count (a real round, so its p50/p99 belong to the same measurement).
 */
function medianRound(name: string, rounds: readonly RoundTiming[]): Timing {
  if (rounds.length === 0) throw new Error(`${name}: no round measured`);
  const sorted = [...rounds].sort((a, b) => a.avgNs - b.avgNs);
  const middle = sorted[sorted.length >> 1] as RoundTiming;
  return { ...middle, roundAvgNs: rounds.map((round) => round.avgNs) };
}

/**
 * mitata times one call first and, when it took over 500 µs (its `warmup_threshold`), measures
 * every call on its own instead of in batches of 4,096: each sample then counts the clock's own
 * cost (`process.cpuUsage()` is a system call, about 1–4 µs here). A fast contestant whose first
 * call in a round is slow (the first call after `gc()` can take milliseconds: finalizing the last
 * round's garbage) was reported at several µs per call (the MCP adapter at 4.1 µs for a 0.3 µs
 * call). With no threshold, every contestant takes the warm-up samples, and it is batched when one
 * of them takes at most 65 µs (`batch_threshold`): the same rule for all, decided on warm calls.
 */
const BATCHING = { warmup_threshold: Number.POSITIVE_INFINITY } as const;

/**
 * Measures every contestant in the same process, interleaved over many short rounds so that JIT
 * warm-up, GC pressure and other processes on a shared machine do not favour whoever runs at a quiet
 * moment. Each reports its median round (by mean): the best round would flatter whoever got the one
 * quiet moment, the median is what a typical round costs, for every contestant alike.
 */
export async function compare(contestants: readonly Contestant[], options: CompareOptions = {}): Promise<Timing[]> {
  const rounds = options.rounds ?? 5;
  const minCpuNs = (options.minCpuMs ?? 120) * 1e6;
  const measured = new Map<string, RoundTiming[]>(contestants.map(([name]) => [name, []]));
  for (let round = 0; round < rounds; round++) {
    for (const [name, fn] of contestants) {
      globalThis.gc?.();
      const stats = await measure(
        fn,
        options.clock === "wall" ? { ...BATCHING, min_cpu_time: minCpuNs } : { ...BATCHING, min_cpu_time: minCpuNs, now: cpuNow },
      );
      measured.get(name)!.push({ name, avgNs: stats.avg, p50Ns: stats.p50, p99Ns: stats.p99, calls: stats.ticks });
    }
  }
  return contestants.map(([name]) => medianRound(name, measured.get(name)!));
}

/**
 * For a contestant whose cost per call grows with the calls it has seen: a fixed number of
 * sequential calls on a fresh instance per round (wall clock), median round reported.
 */
export async function fixedCalls(name: string, fresh: () => () => unknown, calls: number, rounds = 3): Promise<Timing> {
  const measured: RoundTiming[] = [];
  for (let round = 0; round < rounds; round++) {
    const fn = fresh();
    globalThis.gc?.();
    const start = process.hrtime.bigint();
    for (let call = 0; call < calls; call++) await fn();
    const avgNs = Number(process.hrtime.bigint() - start) / calls;
    measured.push({ name, avgNs, p50Ns: Number.NaN, p99Ns: Number.NaN, calls });
  }
  return medianRound(name, measured);
}

/** Bytes that remain on the heap after a full collection. Needs `--expose-gc`. */
export function settledHeap(): number {
  const gc = globalThis.gc;
  if (gc === undefined) throw new Error("run node with --expose-gc");
  gc();
  gc();
  return process.memoryUsage().heapUsed;
}

/**
 * Heap bytes allocated per call: calls `fn` sequentially `batch` times between two heap readings
 * (no GC in between, unless a scavenge happens, which the median over `batches` filters out).
 */
export async function allocatedPerCall(fn: () => unknown, batch = 500, batches = 25): Promise<number> {
  for (let warm = 0; warm < batch * 4; warm++) await fn();
  const perCall: number[] = [];
  for (let b = 0; b < batches; b++) {
    settledHeap();
    const before = process.memoryUsage().heapUsed;
    for (let call = 0; call < batch; call++) await fn();
    const after = process.memoryUsage().heapUsed;
    if (after >= before) perCall.push((after - before) / batch);
  }
  return median(perCall);
}

export function median(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  return sorted.length % 2 === 1 ? (sorted[middle] as number) : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
}
