import type { Clock } from "@retry-reflect/core";
import type { CallInfo, RetryReflectObserver } from "@retry-reflect/core/events";
import { createFakeClock } from "@retry-reflect/core/testing";

/** A clock on simulated time that moves forward by itself whenever something sleeps. */
export interface VirtualClock extends Clock {
  /** Every requested delay, in order: what real time would have waited. */
  readonly sleeps: readonly number[];
  /**
   * Stops virtual time until the returned function is called (once is enough; more is harmless):
   * real work is in progress that ends by itself, such as a tool's HTTP exchange with a local
   * service. Without it, a timer raced against that work (`attemptTimeoutMs`) would fire at once.
   */
  hold(): () => void;
}

/** True for a clock made by `createVirtualClock`. */
export function isVirtualClock(clock: Clock): clock is VirtualClock {
  return typeof (clock as Partial<VirtualClock>).hold === "function";
}

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * Virtual time for `--fast` and for tests: whenever something sleeps and no real work holds time
 * (`hold`), `now()` jumps to the earliest pending wake-up and that sleep resolves, one turn of the
 * event loop later. Backoffs, the breaker reset and attempt timeouts behave as documented without
 * being waited for. Built on the core's fake clock.
 */
export function createVirtualClock(start = 0): VirtualClock {
  const fake = createFakeClock(start);
  /** Wake-up times of the pending sleeps (a sleep leaves it when it resolves or aborts). */
  const wakeUps = new Set<{ readonly at: number }>();
  let holds = 0;
  let released: (() => void) | undefined;
  let draining = false;

  const drain = async () => {
    while (wakeUps.size > 0) {
      // One turn first: what just happened (an attempt that settled, a sleep that was aborted) settles too.
      await nextTurn();
      if (holds > 0) {
        await new Promise<void>((resolve) => {
          released = resolve;
        });
        continue;
      }
      const next = Math.min(...[...wakeUps].map((wakeUp) => wakeUp.at));
      if (Number.isFinite(next)) await fake.advance(Math.max(0, next - fake.now()));
    }
  };
  const startDraining = () => {
    if (draining) return;
    draining = true;
    void drain().finally(() => {
      draining = false;
      if (wakeUps.size > 0) startDraining();
    });
  };

  /** Time will jump to `at` (once nothing holds it); the function returned forgets it (the wait ended). */
  const wakeUpAt = (at: number): (() => void) => {
    const wakeUp = { at };
    wakeUps.add(wakeUp);
    startDraining();
    return () => {
      wakeUps.delete(wakeUp);
    };
  };

  return {
    now: () => fake.now(),
    get sleeps() {
      return fake.sleeps;
    },
    sleep(ms, signal) {
      const sleeping = fake.sleep(ms, signal);
      if (ms > 0 && !signal?.aborted) {
        const forget = wakeUpAt(fake.now() + ms);
        sleeping.then(forget, forget);
      }
      return sleeping;
    },
    timer(ms, fire, watchdog) {
      // The plugin's watchdog (the default attempt limit, a lease renewal) is no wait of a call: time does not jump to it.
      if (watchdog) return fake.timer(ms, fire, true);
      const forget = wakeUpAt(fake.now() + ms);
      const stop = fake.timer(
        ms,
        () => {
          forget();
          fire();
        },
        false,
      );
      return () => {
        forget();
        stop();
      };
    },
    hold() {
      holds++;
      let done = false;
      return () => {
        if (done) return;
        done = true;
        holds--;
        if (holds === 0) {
          const wake = released;
          released = undefined;
          wake?.();
        }
      };
    },
  };
}

/**
 * Keeps virtual time still while a tool attempt runs (its HTTP exchange is real work), until the
 * attempt settles or a local service says that it holds the attempt's request on purpose: that
 * request never gets an answer, so only a timer (`attemptTimeoutMs`) can end the attempt, and
 * virtual time may move again. On real time it does nothing.
 */
export interface RealWorkGate {
  /** For the plugin's observers: holds virtual time from the start of each attempt until it settles. */
  readonly observer: RetryReflectObserver | undefined;
  /** A service holds the request it just received without answering: running attempts stop holding time. */
  requestHeld(): void;
}

export function realWorkGate(clock: Clock): RealWorkGate {
  if (!isVirtualClock(clock)) return { observer: undefined, requestHeld: () => {} };
  const running = new Set<() => void>();
  return {
    observer: {
      runInContext<T>(_call: CallInfo, run: () => T): T {
        const release = clock.hold();
        running.add(release);
        const done = () => {
          running.delete(release);
          release();
        };
        try {
          const result = run();
          Promise.resolve(result).then(done, done);
          return result;
        } catch (error) {
          done();
          throw error;
        }
      },
    },
    requestHeld() {
      for (const release of running) release();
      running.clear();
    },
  };
}
