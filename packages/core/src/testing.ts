import { abortReason, type Clock } from "./clock.js";
import type { RetryReflectEvent, RetryReflectObserver } from "./events/events.js";

/** A manual clock for tests: time moves only when `advance` is called. */
export interface FakeClock extends Clock {
  /** Moves time forward by `ms`, firing due sleeps in order and letting their continuations run. */
  advance(ms: number): Promise<void>;
  /** Advances to each pending sleep and timer in turn until none is left (bounded by `maxSteps`). */
  runAll(maxSteps?: number): Promise<void>;
  /** Sleeps and timers not yet fired, aborted nor stopped (watchdogs left out). */
  pendingSleeps(): number;
  /** Every duration passed to `sleep`, in call order (0-length sleeps included; timers are not sleeps). */
  readonly sleeps: readonly number[];
}

// A watchdog timer (an attempt's default limit, a write's lease renewal) is no wait of a call: it is
// left out of `pendingSleeps()`, and `runAll` does not advance to it (a hung tool is not timed out
// by running the other sleeps); `advance` fires it when due.

/** Lets pending promise continuations run. */
async function flushMicrotasks(): Promise<void> {
  for (let index = 0; index < 20; index++) await Promise.resolve();
}

/** Creates a `FakeClock` starting at `start` ms. */
export function createFakeClock(start = 0): FakeClock {
  let now = start;
  const sleeps: number[] = [];
  /** The sleeps and timers not yet fired, aborted nor stopped, by due time (ties in call order). */
  const pending: Array<{ readonly at: number; readonly watchdog: boolean; readonly wake: () => void }> = [];
  const schedule = (sleeper: (typeof pending)[number]): void => {
    const later = pending.findIndex((other) => other.at > sleeper.at);
    pending.splice(later < 0 ? pending.length : later, 0, sleeper);
  };
  const unschedule = (sleeper: (typeof pending)[number]): void => {
    const index = pending.indexOf(sleeper);
    if (index >= 0) pending.splice(index, 1);
  };

  const clock: FakeClock = {
    now: () => now,
    sleeps,
    sleep(ms, signal) {
      sleeps.push(ms);
      if (signal?.aborted) return Promise.reject(abortReason(signal));
      if (ms <= 0) return Promise.resolve();
      return new Promise<void>((resolve, reject) => {
        const onAbort = () => {
          unschedule(sleeper);
          reject(abortReason(signal as AbortSignal));
        };
        const wake = () => {
          signal?.removeEventListener("abort", onAbort);
          resolve();
        };
        const sleeper = { at: now + ms, watchdog: false, wake };
        schedule(sleeper);
        signal?.addEventListener("abort", onAbort, { once: true });
      });
    },
    timer(ms, fire, watchdog) {
      const sleeper = { at: now + Math.max(0, ms), watchdog, wake: fire };
      schedule(sleeper);
      return () => unschedule(sleeper);
    },
    async advance(ms) {
      const target = now + ms;
      await flushMicrotasks();
      for (let due = pending[0]; due !== undefined && due.at <= target; due = pending[0]) {
        now = Math.max(now, due.at);
        pending.shift();
        due.wake();
        await flushMicrotasks();
      }
      now = target;
      await flushMicrotasks();
    },
    async runAll(maxSteps = 10_000) {
      for (let step = 0; step < maxSteps; step++) {
        await flushMicrotasks();
        const due = pending.find((sleeper) => !sleeper.watchdog);
        if (!due) return;
        await clock.advance(due.at - now);
      }
      throw new Error(`FakeClock.runAll: still sleeping after ${maxSteps} steps`);
    },
    pendingSleeps: () => pending.filter((sleeper) => !sleeper.watchdog).length,
  };
  return clock;
}

/** A macrotask turn: `setImmediate` where the runtime has it, else a zero timeout. */
const immediate = (globalThis as { setImmediate?: (callback: () => void) => unknown }).setImmediate ?? setTimeout;
const nextTurn = () => new Promise<void>((resolve) => immediate(resolve));

/**
 * Runs `work` (an agent run, a tool call) to completion on a fake clock: fires the pending sleeps
 * whenever it waits on one, and yields a macrotask between rounds so that the framework's own
 * scheduling (LangGraph, the AI SDK, an MCP transport) can proceed. Nothing waits for real time.
 * Resolves or rejects as `work` does; gives up (returning `work` as it stands) after 10,000 rounds.
 */
export async function drive<T>(clock: FakeClock, work: Promise<T>): Promise<T> {
  let settled = false;
  const tracked = work.finally(() => {
    settled = true;
  });
  tracked.catch(() => undefined);
  for (let round = 0; round < 10_000 && !settled; round++) {
    await clock.runAll();
    await nextTurn();
  }
  return tracked;
}

export type { FaultKind, FaultPlan, FaultRecord, FaultRule } from "./testing/fault-plan.js";
export { type FaultyFunction, InjectedFault, type InjectedFaultInit, injectFaults, seededRandom } from "./testing/inject-faults.js";

/** An observer that keeps every event it is given; see `recordEvents`. */
export interface EventRecorder extends RetryReflectObserver {
  /** Every event, in order. */
  readonly events: RetryReflectEvent[];
  /** One line per event, `LEVEL message key=value …` (strings quoted as JSON): easy to compare with `toEqual`. */
  lines(): string[];
  /** The events' types, in order (`retry_attempt`, `circuit_opened`, …). */
  types(): string[];
}

/** An observer for tests that records every event (it has only `onEvent`). */
export function recordEvents(): EventRecorder {
  const events: RetryReflectEvent[] = [];
  const field = ([key, value]: [string, unknown]) => `${key}=${typeof value === "string" ? JSON.stringify(value) : String(value)}`;
  return {
    events,
    onEvent: (event) => void events.push(event),
    lines: () => events.map((event) => `${event.level} ${event.message} ${Object.entries(event.fields).map(field).join(" ")}`),
    types: () => events.map((event) => event.type),
  };
}
