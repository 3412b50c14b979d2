import { measure } from "mitata";

/** One contestant's per-call timing, in nanoseconds. */
export interface Timing {
  readonly name: string;
  /** Mean per call (mitata's trimmed average), best round. */
  readonly avgNs: number;
  /** Median per call, best round. */
  readonly p50Ns: number;
  /** 99th percentile per call (of batched samples), best round. */
  readonly p99Ns: number;
  /** Calls measured in the best round. */
  readonly calls: number;
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
  /** Rounds; contestants are interleaved, and each keeps its best (lowest mean) round. @default 5 */
  readonly rounds?: number;
  /** Minimum time per contestant per round, in ms (of the chosen clock). @default 120 */
  readonly minCpuMs?: number;
  /**
   * `"cpu"`: process CPU time, robust on a shared machine. `"wall"`: elapsed time, for paths that
   * wait (a timer is latency, not CPU). @default "cpu"
   */
  readonly clock?: "cpu" | "wall";
}

/**
 * Measures every contestant in the same process, interleaved over many short rounds so that JIT
 * warm-up, GC pressure and other processes on a shared machine do not favour whoever runs at a quiet
 * moment. Each keeps its best round (lowest mean): noise only ever adds time.
 */
export async function compare(contestants: readonly Contestant[], options: CompareOptions = {}): Promise<Timing[]> {
  const rounds = options.rounds ?? 5;
  const minCpuNs = (options.minCpuMs ?? 120) * 1e6;
  const best = new Map<string, Timing>();
  for (let round = 0; round < rounds; round++) {
    for (const [name, fn] of contestants) {
      globalThis.gc?.();
      const stats = await measure(fn, options.clock === "wall" ? { min_cpu_time: minCpuNs } : { min_cpu_time: minCpuNs, now: cpuNow });
      const timing: Timing = { name, avgNs: stats.avg, p50Ns: stats.p50, p99Ns: stats.p99, calls: stats.ticks };
      const previous = best.get(name);
      if (previous === undefined || timing.avgNs < previous.avgNs) best.set(name, timing);
    }
  }
  return contestants.map(([name]) => best.get(name) as Timing);
}

/**
 * For a contestant whose cost per call grows with the calls it has seen: a fixed number of
 * sequential calls on a fresh instance per round (wall clock), best round kept.
 */
export async function fixedCalls(name: string, fresh: () => () => unknown, calls: number, rounds = 3): Promise<Timing> {
  let best: Timing | undefined;
  for (let round = 0; round < rounds; round++) {
    const fn = fresh();
    globalThis.gc?.();
    const start = process.hrtime.bigint();
    for (let call = 0; call < calls; call++) await fn();
    const avgNs = Number(process.hrtime.bigint() - start) / calls;
    if (best === undefined || avgNs < best.avgNs) best = { name, avgNs, p50Ns: Number.NaN, p99Ns: Number.NaN, calls };
  }
  return best as Timing;
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
