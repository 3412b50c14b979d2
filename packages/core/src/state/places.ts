import { abortReason } from "../clock.js";
import { type TrackedAttempts, wakeWaiters } from "./counters.js";

// Where an attempt may start. A failing row reserves its budget: while a tool has failed in a
// scope since its last success (`failures > 0`), an attempt starts only while the row's failures
// plus its attempts in flight stay below `maxRetries + 1`; any other call waits until an attempt in
// flight settles (its failure recorded, or its success ending the row) and checks again. A tool
// without a failing row has no places: its calls run in parallel without limit. `maxConcurrent`:
// a slot per running attempt of a tool, held while the attempt runs (not during waits).

/**
 * Takes a place in the row for one attempt: false when the row has no room (the call waits with
 * `roomInRow`). A row with no attempt in flight always has room: there is nothing to wait for, and
 * the attempt's failure spends the budget (a row can pass `maxRetries + 1` failures only through
 * stops that do not mark it exhausted, such as not-recoverable failures).
 */
export function reserveInRow(tracked: TrackedAttempts, maxRetries: number): boolean {
  if (tracked.inFlight > 0 && tracked.failures + tracked.inFlight > maxRetries) return false;
  tracked.inFlight++;
  return true;
}

/** The attempt that held a place has settled (its failure already recorded, or the row ended): the waiting calls check again. */
export function releaseInRow(tracked: TrackedAttempts): void {
  tracked.inFlight--;
  wakeWaiters(tracked);
}

/**
 * Resolves when an attempt of the row settles, or the row ends (a success, a reset, the counter
 * dropped); rejects with the abort reason as soon as `signal` aborts. No timer; its listener is
 * gone once it settles either way.
 */
export function roomInRow(tracked: TrackedAttempts, signal: AbortSignal | undefined): Promise<void> {
  if (signal?.aborted) return Promise.reject(abortReason(signal));
  return new Promise<void>((resolve, reject) => {
    let waiters = tracked.waiters;
    if (waiters === undefined) {
      waiters = new Set();
      tracked.waiters = waiters;
    }
    const onAbort = (): void => {
      waiters.delete(wake);
      reject(abortReason(signal as AbortSignal));
    };
    const wake = (): void => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    };
    waiters.add(wake);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

/** Takes a slot of the tool in `running` (attempts running now, per tool): false when `limit` attempts of it are running. */
export function takeSlot(running: Map<string, number>, toolName: string, limit: number): boolean {
  const count = running.get(toolName) ?? 0;
  if (count >= limit) return false;
  running.set(toolName, count + 1);
  return true;
}

export function releaseSlot(running: Map<string, number>, toolName: string): void {
  const count = (running.get(toolName) ?? 1) - 1;
  if (count > 0) running.set(toolName, count);
  else running.delete(toolName);
}
