// Virtual time for agent episodes: a clock that moves only when everything in flight waits on it,
// and a driver that runs one episode to its end (or to its deadline) without waiting for real time.
//
// LangChain's `toolRetryMiddleware` sleeps with the global `setTimeout` and jitters with
// `Math.random`; so while an episode runs, `setTimeout(fn, ms > 0)` is routed to the episode's
// clock and `Math.random` to its seeded generator. Episodes run one at a time, so this is safe.
// Zero-delay timeouts stay real: LangGraph schedules its own steps with them.
import type { Clock } from "@retry-reflect/core";

// Not the FakeClock of @retry-reflect/core/testing: that one flushes microtasks around every sleep
// it fires (convenient in a test), which made the whole grid 34 % slower (414 s vs 310 s, the same
// numbers); this driver does its own yielding and only needs the next due time.

interface Sleeper {
  readonly at: number;
  readonly seq: number;
  readonly fire: () => void;
  /** Aborted before it was due: left in the heap, skipped when it comes to the top. */
  cancelled: boolean;
}

/** Whether `a` is due before `b`: the earlier time, then the earlier sleep. */
const before = (a: Sleeper, b: Sleeper) => a.at < b.at || (a.at === b.at && a.seq < b.seq);

/**
 * The sleeps pending, in a binary heap by (time due, order of the sleep): a fleet of 1,000 agents
 * keeps thousands pending (each agent's deadline, each tool call's time limit), and the driver asks
 * for the next one on every turn. A cancelled sleep stays in the heap, marked, until it reaches the
 * top.
 */
export class VirtualClock implements Clock {
  private time = 0;
  private seq = 0;
  private readonly heap: Sleeper[] = [];
  private live = 0;

  now = (): number => this.time;

  sleep = (ms: number, signal?: AbortSignal): Promise<void> => {
    if (signal?.aborted) return Promise.reject(signal.reason);
    if (!(ms > 0)) return Promise.resolve();
    return new Promise<void>((resolve, reject) => {
      const onAbort = () => {
        if (sleeper.cancelled) return;
        sleeper.cancelled = true;
        this.live--;
        reject(signal?.reason);
      };
      const sleeper: Sleeper = {
        at: this.time + ms,
        seq: this.seq++,
        cancelled: false,
        fire: () => {
          signal?.removeEventListener("abort", onAbort);
          resolve();
        },
      };
      signal?.addEventListener("abort", onAbort, { once: true });
      this.push(sleeper);
      this.live++;
    });
  };

  /** Calls `fire` at `ms` unless stopped first (the watchdog flag is not needed here: a run's end does not wait for time). */
  timer = (ms: number, fire: () => void): (() => void) => {
    const sleeper: Sleeper = { at: this.time + Math.max(0, ms), seq: this.seq++, cancelled: false, fire };
    this.push(sleeper);
    this.live++;
    return () => {
      if (sleeper.cancelled) return;
      sleeper.cancelled = true;
      this.live--;
    };
  };

  /** Sleeps and timers not yet fired. */
  get pending(): number {
    return this.live;
  }

  /** The time of the next sleep due, or undefined. */
  nextDue(): number | undefined {
    this.dropCancelled();
    return this.heap[0]?.at;
  }

  /** Moves to the next due sleep and fires every sleep due at that time, in order. */
  fireNext(): void {
    const at = this.nextDue();
    if (at === undefined) return;
    this.time = Math.max(this.time, at);
    const due: Sleeper[] = [];
    for (this.dropCancelled(); this.heap[0] !== undefined && this.heap[0].at <= this.time; this.dropCancelled()) {
      const sleeper = this.pop();
      sleeper.cancelled = true; // fired: an abort after this is too late
      this.live--;
      due.push(sleeper);
    }
    for (const sleeper of due) sleeper.fire();
  }

  /** Jumps to `at` without firing anything (the episode's deadline). */
  jumpTo(at: number): void {
    this.time = Math.max(this.time, at);
  }

  private dropCancelled(): void {
    while (this.heap[0]?.cancelled) this.pop();
  }

  private push(sleeper: Sleeper): void {
    const heap = this.heap;
    heap.push(sleeper);
    let index = heap.length - 1;
    while (index > 0) {
      const parent = (index - 1) >> 1;
      if (!before(sleeper, heap[parent] as Sleeper)) break;
      heap[index] = heap[parent] as Sleeper;
      index = parent;
    }
    heap[index] = sleeper;
  }

  private pop(): Sleeper {
    const heap = this.heap;
    const top = heap[0] as Sleeper;
    const last = heap.pop() as Sleeper;
    if (heap.length > 0) {
      let index = 0;
      for (;;) {
        const left = 2 * index + 1;
        if (left >= heap.length) break;
        const right = left + 1;
        const child = right < heap.length && before(heap[right] as Sleeper, heap[left] as Sleeper) ? right : left;
        if (!before(heap[child] as Sleeper, last)) break;
        heap[index] = heap[child] as Sleeper;
        index = child;
      }
      heap[index] = last;
    }
    return top;
  }
}

const realSetTimeout = globalThis.setTimeout;
const realClearTimeout = globalThis.clearTimeout;
const realRandom = Math.random;
const macrotask = () => new Promise<void>((resolve) => setImmediate(resolve));

/** Turns with nothing new before the clock moves: the frameworks' own scheduling has settled. */
const IDLE_TURNS = 3;
/** Turns with no sleep pending and no end before the run counts as stuck (a hang nothing cuts off). */
const STUCK_TURNS = 200;
/** Turns of the event loop an aborted run has to settle, time stopped, before it counts as outliving its deadline. */
const UNWIND_TURNS = 20;

export type EpisodeEnd<T> =
  | { readonly kind: "settled"; readonly value: T }
  | { readonly kind: "threw"; readonly error: unknown }
  /**
   * `unwound`: whether the run settled within a few turns of the event loop after the deadline's
   * abort (no wait of the contestant's outlived it); undefined where it is not measured.
   */
  | { readonly kind: "deadline"; readonly unwound?: boolean };

/**
 * `setTimeout` / `clearTimeout` whose delays above 0 ms go to `clock`; zero delays stay real
 * timeouts, tracked in `zeroDelay` while pending when it is given (runTogether waits for them).
 */
function virtualTimers(
  clock: VirtualClock,
  zeroDelay?: Set<unknown>,
): { patchedSetTimeout: typeof setTimeout; patchedClearTimeout: typeof clearTimeout } {
  const timers = new Map<unknown, AbortController>();
  const patchedSetTimeout = ((callback: (...args: unknown[]) => void, ms?: number, ...args: unknown[]) => {
    if (!(typeof ms === "number" && ms > 0)) {
      if (zeroDelay === undefined) return realSetTimeout(callback, ms, ...args);
      const handle = realSetTimeout(() => {
        zeroDelay.delete(handle);
        callback(...args);
      }, ms);
      zeroDelay.add(handle);
      return handle;
    }
    const cancel = new AbortController();
    const handle = { virtual: true };
    timers.set(handle, cancel);
    clock.sleep(ms, cancel.signal).then(
      () => {
        timers.delete(handle);
        callback(...args);
      },
      () => undefined,
    );
    return handle;
  }) as unknown as typeof setTimeout;
  const patchedClearTimeout = ((handle: unknown) => {
    const cancel = timers.get(handle);
    if (cancel) {
      timers.delete(handle);
      cancel.abort();
    } else {
      zeroDelay?.delete(handle);
      realClearTimeout(handle as Parameters<typeof clearTimeout>[0]);
    }
  }) as typeof clearTimeout;
  return { patchedSetTimeout, patchedClearTimeout };
}

/**
 * Runs `start(signal)` on `clock` until it settles or virtual time reaches `deadlineMs` (then
 * `signal` aborts and the episode ends as `deadline`). A run stuck with no sleep pending (a tool
 * that hangs forever and nothing to cut it off) cannot go on: it ends at the deadline too.
 */
export async function runEpisode<T>(
  clock: VirtualClock,
  random: () => number,
  deadlineMs: number,
  start: (signal: AbortSignal) => Promise<T>,
): Promise<EpisodeEnd<T>> {
  const controller = new AbortController();
  let end: EpisodeEnd<T> | undefined;
  const { patchedSetTimeout, patchedClearTimeout } = virtualTimers(clock);
  globalThis.setTimeout = patchedSetTimeout;
  globalThis.clearTimeout = patchedClearTimeout;
  Math.random = random;
  try {
    /** Whether the run has settled (after the deadline too: the deadline's end keeps its place). */
    let settled = false;
    start(controller.signal).then(
      (value) => {
        settled = true;
        end ??= { kind: "settled", value };
      },
      (error: unknown) => {
        settled = true;
        end ??= { kind: "threw", error };
      },
    );
    let idle = 0;
    let seen = -1;
    while (end === undefined) {
      await macrotask();
      if (end !== undefined) break;
      const marker = clock.pending * 1_000_003 + clock.now();
      idle = marker === seen ? idle + 1 : 0;
      seen = marker;
      const next = clock.nextDue();
      if (idle < (next === undefined ? STUCK_TURNS : IDLE_TURNS)) continue;
      idle = 0;
      if (next === undefined || next > deadlineMs) {
        clock.jumpTo(deadlineMs);
        end = { kind: "deadline" };
        controller.abort(new Error("episode deadline"));
        // Let the aborted run unwind (its rejection is ignored: the episode already ended), with
        // virtual time stopped: a run still pending then waits on something the abort did not end.
        for (let turn = 0; turn < UNWIND_TURNS && !settled; turn++) await macrotask();
        end = { kind: "deadline", unwound: settled };
        break;
      }
      clock.fireNext();
    }
    return end;
  } finally {
    globalThis.setTimeout = realSetTimeout;
    globalThis.clearTimeout = realClearTimeout;
    Math.random = realRandom;
  }
}

/**
 * Runs `start()` (many episodes at once, the load section's fleet) on `clock` until it settles;
 * undefined if it has not by `limitMs` of virtual time or gets stuck (nothing pending, nothing
 * settling). Like runEpisode, timeouts above 0 ms go to the clock and `Math.random` to `random`;
 * unlike it, the clock moves only when no real zero-delay timeout is pending either: with many
 * runs in flight, one of them waiting on LangGraph's own scheduling must not see time jump.
 */
export async function runTogether<T>(
  clock: VirtualClock,
  random: () => number,
  limitMs: number,
  start: () => Promise<T>,
): Promise<T | undefined> {
  const zeroDelay = new Set<unknown>();
  const { patchedSetTimeout, patchedClearTimeout } = virtualTimers(clock, zeroDelay);
  globalThis.setTimeout = patchedSetTimeout;
  globalThis.clearTimeout = patchedClearTimeout;
  Math.random = random;
  let end: { value: T } | { error: unknown } | undefined;
  try {
    start().then(
      (value) => {
        end = { value };
      },
      (error: unknown) => {
        end = { error };
      },
    );
    let idle = 0;
    let seen = -1;
    while (end === undefined) {
      await macrotask();
      if (end !== undefined) break;
      if (zeroDelay.size > 0) {
        idle = 0;
        continue;
      }
      const marker = clock.pending * 1_000_003 + clock.now();
      idle = marker === seen ? idle + 1 : 0;
      seen = marker;
      const next = clock.nextDue();
      if (idle < (next === undefined ? STUCK_TURNS : IDLE_TURNS)) continue;
      idle = 0;
      if (next === undefined || next > limitMs) return undefined;
      clock.fireNext();
    }
    if ("error" in end) throw end.error;
    return end.value;
  } finally {
    globalThis.setTimeout = realSetTimeout;
    globalThis.clearTimeout = realClearTimeout;
    Math.random = realRandom;
  }
}

/** A real-time episode (a real model): `start(signal)` until it settles or `deadlineMs` of real time pass. */
export async function runRealEpisode<T>(deadlineMs: number, start: (signal: AbortSignal) => Promise<T>): Promise<EpisodeEnd<T>> {
  const controller = new AbortController();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const deadline = new Promise<EpisodeEnd<T>>((resolve) => {
    timer = setTimeout(() => {
      controller.abort(new Error("episode deadline"));
      resolve({ kind: "deadline" });
    }, deadlineMs);
  });
  const run = start(controller.signal).then(
    (value): EpisodeEnd<T> => ({ kind: "settled", value }),
    (error: unknown): EpisodeEnd<T> => ({ kind: "threw", error }),
  );
  try {
    return await Promise.race([run, deadline]);
  } finally {
    clearTimeout(timer);
  }
}
