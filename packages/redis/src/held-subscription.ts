import { messageOf } from "./classify-error.js";
import { ignore } from "./ignore.js";
import type { ScriptClient } from "./script-client.js";

/** The first retry waits this long; each failed attempt doubles it, up to {@link MAX_RETRY_MS}. */
export const FIRST_RETRY_MS = 50;
/** The longest wait between two attempts to subscribe (Redis down for long: one attempt a second). */
export const MAX_RETRY_MS = 1_000;

export interface HeldSubscriptionOptions {
  readonly redis: ScriptClient;
  readonly channel: string;
  readonly onMessage: (message: string) => void;
  /** Runs each time the subscription holds again (first, and after every loss): its failure is a failed attempt. */
  readonly onHeld: () => Promise<void>;
  /** Told once per outage (the first failed attempt after the subscription held, or at start). */
  readonly onFailing: (error: unknown) => void;
}

/**
 * A subscription that holds: it is retried with backoff (50 ms doubling to 1 s, jittered) until
 * it is subscribed and `onHeld` succeeded (the client not ready yet, Redis down at start, the
 * connection lost), and made again whenever its connection is lost. `ready` resolves when it first
 * holds; it rejects only when closed before that. Its timers never hold the process open.
 */
export class HeldSubscription {
  readonly ready: Promise<void>;
  private resolveReady!: () => void;
  private rejectReady!: (error: Error) => void;
  private stop: (() => Promise<void>) | undefined;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private failures = 0;
  private warned = false;
  private closed = false;
  /** Counts attempts: a loss reported for an older one is ignored. */
  private attempt = 0;

  constructor(private readonly options: HeldSubscriptionOptions) {
    this.ready = new Promise<void>((resolve, reject) => {
      this.resolveReady = resolve;
      this.rejectReady = reject;
    });
    this.ready.catch(ignore); // rejects only on close: nobody has to wait for it
    void this.subscribe();
  }

  /** Ends the subscription and stops retrying. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearTimeout(this.timer);
    this.rejectReady(new Error(`retry-reflect: the subscription to ${this.options.channel} was closed before it held`));
    const stop = this.stop;
    this.stop = undefined;
    await stop?.();
  }

  private async subscribe(): Promise<void> {
    const attempt = ++this.attempt;
    const { redis, channel, onMessage, onHeld } = this.options;
    let stop: (() => Promise<void>) | undefined;
    let lost = false;
    try {
      stop = await redis.subscribe(channel, onMessage, () => {
        lost = true;
        if (this.attempt === attempt && this.stop !== undefined) this.retry(stop);
      });
      if (this.closed) return void stop();
      // Subscribed first, read second: a change made after the read is heard, one made before it is read.
      await onHeld();
      if (this.closed) return void stop();
      if (lost) throw new Error("the subscription connection was lost while the state was read");
    } catch (error) {
      if (!this.warned && !this.closed) {
        this.warned = true;
        this.options.onFailing(error);
      }
      this.retry(stop);
      return;
    }
    this.stop = stop;
    this.failures = 0;
    this.warned = false;
    this.resolveReady();
  }

  /** Closes this attempt's connection (if any) and schedules the next attempt. */
  private retry(stop: (() => Promise<void>) | undefined): void {
    if (stop !== undefined && this.stop === stop) this.stop = undefined;
    void stop?.();
    if (this.closed) return;
    const ceiling = Math.min(MAX_RETRY_MS, FIRST_RETRY_MS * 2 ** this.failures);
    this.failures++;
    // Jitter: replicas that lost Redis together do not all reconnect in the same millisecond.
    this.timer = setTimeout(() => void this.subscribe(), ceiling / 2 + Math.random() * (ceiling / 2));
    this.timer.unref();
  }
}

/** The warning a store gives once per outage of its subscription. */
export function subscribeWarning(channel: string, error: unknown): void {
  process.emitWarning(
    `retry-reflect: could not subscribe to ${channel} yet (${messageOf(error)}): retrying with backoff; meanwhile this process learns of circuits opened elsewhere only when it calls the tool`,
    { code: "RETRY_REFLECT_REDIS_SUBSCRIBE" },
  );
}
