import { abortReason } from "../clock.js";
import { type TrackedAttempts, wakeWaiters } from "./attempt-tracker.js";

// A failing row reserves its budget. While a tool has failed in a scope since its last success
// (`failures > 0`), an attempt starts only while the row's failures plus its attempts in flight
// stay below `maxRetries + 1`; any other call waits until an attempt in flight settles (its
// failure recorded, or its success ending the row) and checks again. Nothing here runs for a
// tool without a failing row: its calls run in parallel without limit, and attempts that started
// before the row began are not in flight here (counting them would cost the healthy path).

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
