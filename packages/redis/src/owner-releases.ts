import { setMaxListeners } from "node:events";
import type { Script } from "./lua-script.js";
import { RedisTimeoutError, RedisUnavailableError } from "./redis-errors.js";
import type { ScriptClient } from "./script-client.js";

// A request that got no reply may still run on the server (a paused or slow Redis answers later):
// a begin's lock would then refuse every retry for a whole lease while nobody runs the write, an
// acquire's probe would hold the half-open slot for a whole reset period while nobody probes. So
// the store releases that request's owner id until Redis answers, or the lease, which frees the
// key by itself, is over.

/**
 * How an owner is released: the script whose request got no reply, run in its release mode (the
 * same script, so that the release is cached wherever the late request could run), and the
 * arguments of that mode for `owner` with `leaseLeftMs` of its lease left; `subject` is what
 * {@link OwnerReleases.release} was given (a breaker's tool name, which its script publishes).
 */
export interface OwnerRelease {
  readonly script: Script;
  args(owner: string, leaseLeftMs: number, subject: string): (string | number)[];
}

/** Time as the releases see it; injected by tests, so that no test waits for a backoff. */
export interface ReleaseTiming {
  /** Milliseconds on a monotonic clock. */
  now(): number;
  /** Resolves after `ms`, or at once when `signal` aborts; must not hold the process open. */
  wait(ms: number, signal: AbortSignal): Promise<void>;
  /** In [0, 1): spreads the retries of a burst. */
  random(): number;
}

const realTiming: ReleaseTiming = {
  now: () => performance.now(),
  wait: (ms, signal) =>
    new Promise((resolve) => {
      if (signal.aborted) return resolve();
      const done = (): void => {
        clearTimeout(timer);
        signal.removeEventListener("abort", done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      timer.unref(); // a release is best effort: it never keeps a process from exiting
      signal.addEventListener("abort", done, { once: true });
    }),
  random: Math.random,
};

/** The first pause between two attempts, doubled after each, at most {@link MAX_BACKOFF_MS}. */
const FIRST_BACKOFF_MS = 20;
const MAX_BACKOFF_MS = 1_000;

/** Whether a failed command may still run on the server: it was sent and got no answer. */
export function mayStillRun(error: unknown): boolean {
  return RedisTimeoutError.isInstance(error) || (RedisUnavailableError.isInstance(error) && error.sent);
}

/**
 * The releases of owners whose request got no reply: each one repeated (with its own backoff) until
 * Redis answers it, the lease ends, or {@link close} is called.
 */
export class OwnerReleases {
  readonly #redis: ScriptClient;
  readonly #undo: OwnerRelease;
  readonly #timing: ReleaseTiming;
  readonly #closing = new AbortController();
  readonly #running = new Set<Promise<void>>();

  constructor(redis: ScriptClient, undo: OwnerRelease, timing: ReleaseTiming = realTiming) {
    this.#redis = redis;
    this.#undo = undo;
    this.#timing = timing;
    // One listener per pause in flight (a burst of timeouts makes hundreds): not a leak.
    setMaxListeners(0, this.#closing.signal);
  }

  /** Releases still being tried. */
  get pending(): number {
    return this.#running.size;
  }

  /**
   * Starts releasing what `owner` took of `redisKey` (for `leaseMs`, if its request ran). Never
   * throws, never rejects; does nothing once closed.
   */
  release(redisKey: string, owner: string, leaseMs: number, subject = ""): void {
    if (this.#closing.signal.aborted || !(leaseMs > 0)) return;
    const running = this.#untilAnswered(redisKey, owner, subject, this.#timing.now() + leaseMs).catch(() => {});
    this.#running.add(running);
    void running.finally(() => this.#running.delete(running));
  }

  /** Stops every release (at its next attempt or pause); the leases bound what is left. */
  close(): void {
    this.#closing.abort();
  }

  /** Resolves once no release is being tried (for tests and orderly shutdowns). */
  async settled(): Promise<void> {
    while (this.#running.size > 0) await Promise.all(this.#running);
  }

  async #untilAnswered(redisKey: string, owner: string, subject: string, deadline: number): Promise<void> {
    const { signal } = this.#closing;
    for (let attempt = 0; !signal.aborted; attempt++) {
      const leaseLeft = Math.ceil(deadline - this.#timing.now());
      if (leaseLeft <= 0) return; // the lease is over: what a late request took has expired by itself
      try {
        await this.#redis.run(this.#undo.script, [redisKey], this.#undo.args(owner, leaseLeft, subject));
        return; // answered: released, or nothing of this owner's to release
      } catch (error) {
        // An error reply (a script error, OOM...) is an answer too. Silence, a lost connection, a
        // client not ready yet: tried again.
        if (!RedisTimeoutError.isInstance(error) && !RedisUnavailableError.isInstance(error)) return;
      }
      const backoff = Math.min(MAX_BACKOFF_MS, FIRST_BACKOFF_MS * 2 ** attempt);
      await this.#timing.wait(backoff / 2 + (backoff / 2) * this.#timing.random(), signal);
    }
  }
}
