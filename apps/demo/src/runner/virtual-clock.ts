import type { Clock } from "@retry-reflect/core";
import { createFakeClock } from "@retry-reflect/core/testing";

/** A clock on simulated time that moves forward by itself whenever something sleeps. */
export interface VirtualClock extends Clock {
  /** Every requested delay, in order: what real time would have waited. */
  readonly sleeps: readonly number[];
}

/**
 * Virtual time for `--fast` and for tests: each `sleep` resolves on the next turn of the event
 * loop and moves `now()` forward by its duration, so backoffs and the breaker reset behave as
 * documented without being waited for. Built on the core's fake clock.
 */
export function createVirtualClock(start = 0): VirtualClock {
  const fake = createFakeClock(start);
  let draining = false;
  const drain = () => {
    if (draining) return;
    draining = true;
    setImmediate(() => {
      void fake.runAll().finally(() => {
        draining = false;
        if (fake.pendingSleeps() > 0) drain();
      });
    });
  };
  return {
    now: () => fake.now(),
    get sleeps() {
      return fake.sleeps;
    },
    sleep(ms, signal) {
      const sleeping = fake.sleep(ms, signal);
      drain();
      return sleeping;
    },
  };
}
