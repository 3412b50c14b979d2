/**
 * Time, injected. Every wait and every timestamp in the library goes through a `Clock`, so that
 * tests run on fake time (`@retry-reflect/core/testing`) and never wait.
 */
export interface Clock {
  /** Milliseconds since an arbitrary epoch; only differences are used. */
  now(): number;
  /**
   * Resolves after `ms` milliseconds. Rejects with `signal.reason` as soon as `signal` aborts
   * (at once if it is already aborted), and leaves no timer or listener behind either way.
   */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

/** Reason to reject with when a signal aborted without one. */
export function abortReason(signal: AbortSignal): unknown {
  if (signal.reason !== undefined) return signal.reason;
  const error = new Error("This operation was aborted");
  error.name = "AbortError";
  return error;
}

/** The real clock: `Date.now()` and `setTimeout`, with the timer cleared on abort. */
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
};

/** The reason a timer of the plugin's own is stopped with when what it watched is over (nobody reads it). */
export const TIMER_STOPPED: unique symbol = Symbol("retry-reflect: timer stopped");

const WATCHDOG = Symbol.for("retry-reflect.watchdog");

/** A signal for a watchdog sleep: a clock may leave such sleeps out of what it reports (the test clock does). */
export function watchdogSignal(controller: AbortController): AbortSignal {
  (controller.signal as unknown as Record<symbol, boolean>)[WATCHDOG] = true;
  return controller.signal;
}

/**
 * Is this the signal of one of the plugin's own timers (the default attempt limit of an attempt, the
 * renewal of a running write's lease)? A custom clock that moves time by itself (a simulation)
 * should not jump to it: it is not a wait of any call.
 */
export function isWatchdog(signal: AbortSignal | undefined): boolean {
  return signal !== undefined && (signal as unknown as Record<symbol, unknown>)[WATCHDOG] === true;
}
