/**
 * Time, injected. Every wait and every timestamp in the library goes through a `Clock`, so that
 * tests run on fake time (`@retry-reflect/core/testing`) and never wait.
 */
export interface Clock {
  /** Milliseconds since an arbitrary epoch; only differences are used. */
  now(): number;
  /**
   * Resolves after `ms` milliseconds. Rejects with `signal.reason` as soon as `signal` aborts
   * (at once if it is already aborted), and leaves no timer or listener behind either way. A
   * call's backoffs run on it.
   */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
  /**
   * Calls `fire` once after `ms` milliseconds, unless the function it returns is called first: that
   * stops the timer (calling it after `fire` ran does nothing). An attempt's time limit, a
   * running write's lease renewal and a call's wait for its circuit to close (over early when the
   * circuit changes) run on it, stopped as soon as what they watch is over.
   * `watchdog` is true for a timer that is no wait of any call (the default attempt limit, a lease
   * renewal): a clock that moves time by itself (a test clock, a simulation) should not jump to it.
   */
  timer(ms: number, fire: () => void, watchdog: boolean): () => void;
}

/** Reason to reject with when a signal aborted without one. */
export function abortReason(signal: AbortSignal): unknown {
  if (signal.reason !== undefined) return signal.reason;
  const error = new Error("This operation was aborted");
  error.name = "AbortError";
  return error;
}

/** The real clock: `Date.now()` and `setTimeout`, with the timer cleared on abort or stop. */
export const systemClock: Clock = {
  now: () => Date.now(),
  sleep(ms, signal) {
    if (signal?.aborted) return Promise.reject(abortReason(signal));
    if (ms <= 0) return Promise.resolve();
    return new Promise<void>((resolve, reject) => {
      const onAbort = () => {
        clearTimeout(timer);
        reject(abortReason(signal as AbortSignal));
      };
      const timer = setTimeout(() => {
        signal?.removeEventListener("abort", onAbort);
        resolve();
      }, ms);
      signal?.addEventListener("abort", onAbort, { once: true });
    });
  },
  timer(ms, fire) {
    const timer = setTimeout(fire, ms);
    return () => clearTimeout(timer);
  },
};
