import type { Clock } from "../clock.js";
import { LruMap } from "../internal/lru-map.js";
import type { CircuitResult } from "./circuit-breaker-store.js";
import { bucketOf, type ShareBudget, SharedWindow, totals } from "./failure-window.js";

/** A failure-rate breaker's settings (`circuitBreakerFailureRate`, `circuitBreakerMinimumCalls`, `circuitBreakerWindowMs`). */
export interface RateSettings {
  readonly failureRate: number;
  readonly minimumCalls: number;
  readonly windowMs: number;
}

/**
 * The failure rate of a tool's calls, for a failure-rate breaker over a `CircuitBreakerStore`
 * (`StoreBreaker`). With `share` (the store's `shareBudget`), the window is the fleet's: each process
 * counts its calls in memory, and while the tool has failed here within the window it sends the
 * counts it has not sent yet (at most once a second) and hears the fleet's buckets back; a failure is
 * judged on those plus the counts not sent yet. A healthy tool costs no round trip. Without `share`,
 * the window is this process's calls. One window per key called, at most `maxKeys` (LRU).
 */
export class LocalRate {
  private readonly windows: LruMap<string, SharedWindow>;
  /** Keys whose opening this process sent to the store, not answered yet. */
  private readonly sending = new Set<string>();

  constructor(
    private readonly settings: RateSettings,
    private readonly clock: Clock,
    maxKeys: number,
    private readonly share?: ShareBudget,
    private readonly onShareError?: (key: string, error: unknown) => void,
  ) {
    this.windows = new LruMap(maxKeys);
  }

  get size(): number {
    return this.windows.size;
  }

  /**
   * Records a closed call's result. The failure that brings the window (of at least `minimumCalls`
   * calls) to `failureRate` returns its failures: the store is to hear it (then `sent`), and the
   * window starts afresh. Anything else returns undefined: below the rate, neutral, or stale (after
   * the circuit left closed, or while this process's opening is on its way to the store).
   */
  opens(key: string, result: CircuitResult, circuit: { isClosed(key: string): boolean }): number | undefined {
    if (result === "neutral" || this.sending.has(key)) return undefined;
    if (!circuit.isClosed(key)) {
      this.forget(key);
      return undefined;
    }
    const { failureRate, minimumCalls, windowMs } = this.settings;
    const now = this.clock.now();
    const bucket = bucketOf(now, windowMs);
    let window = this.windows.get(key);
    if (window === undefined) {
      window = new SharedWindow(bucket);
      this.windows.add(key, window);
    }
    window.counts.record(bucket, 1, result === "failure" ? 1 : 0);
    if (result === "failure") {
      const [calls, failures] = totals(window.known(bucket));
      if (calls >= minimumCalls && failures / calls >= failureRate) {
        window.restart(bucket);
        this.sending.add(key);
        return failures;
      }
      window.failedAt = now;
    }
    const { share } = this;
    if (share !== undefined && window.due(now, windowMs)) {
      // Under a key apart from the tool's retry budget (a NUL byte, which no tool name holds).
      const send = (counts: number[]) =>
        share(`\u0000failure-rate\u0000${key}`, { ratio: 0, minPerSecond: 0, windowMs, counts, take: false });
      void window.share(now, bucket, send, (error) => this.onShareError?.(key, error));
    }
    return undefined;
  }

  /** The store answered the opening sent for `key`, or could not take it. */
  sent(key: string): void {
    this.sending.delete(key);
  }

  /** Starts `key`'s window afresh: its circuit is not closed fleet-wide (the calls before that belong to no window). */
  forget(key: string): void {
    const window = this.windows.peek(key);
    if (window === undefined) return;
    if (this.share === undefined) this.windows.delete(key);
    else window.restart(bucketOf(this.clock.now(), this.settings.windowMs));
  }
}
