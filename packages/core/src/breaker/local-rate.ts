import type { Clock } from "../clock.js";
import { LruMap } from "../internal/lru-map.js";
import { bucketOf, FailureWindow } from "./failure-window.js";

/** A failure-rate breaker's settings (`circuitBreakerFailureRate`, `circuitBreakerMinimumCalls`, `circuitBreakerWindowMs`). */
export interface RateSettings {
  readonly failureRate: number;
  readonly minimumCalls: number;
  readonly windowMs: number;
}

/**
 * The failure rate of a tool's calls in this process, for a failure-rate breaker over a
 * `CircuitBreakerStore`: each process judges the rate on the calls it made (in memory, no I/O, the
 * same sliding window as the in-memory breaker's), and the failure that brings it to the rate opens
 * the fleet's circuit (`StoreBreaker`). One window per key called, at most `maxKeys`, the least
 * recently used dropped.
 */
export class LocalRate {
  private readonly windows: LruMap<string, FailureWindow>;

  constructor(
    private readonly settings: RateSettings,
    private readonly clock: Clock,
    maxKeys: number,
  ) {
    this.windows = new LruMap(maxKeys);
  }

  get size(): number {
    return this.windows.size;
  }

  /**
   * Records a call made while the circuit was closed. A failure that brings the window (holding at
   * least `minimumCalls` calls) to `failureRate` returns the failures in it and drops the window (the
   * circuit opens: its calls from now on are the next window's); anything else returns undefined.
   */
  record(key: string, failed: boolean): number | undefined {
    const { failureRate, minimumCalls, windowMs } = this.settings;
    const bucket = bucketOf(this.clock.now(), windowMs);
    let window = this.windows.get(key);
    if (window === undefined) {
      window = new FailureWindow(bucket);
      this.windows.add(key, window);
    }
    window.record(bucket, failed);
    if (!failed || window.calls < minimumCalls || window.failures / window.calls < failureRate) return undefined;
    this.windows.delete(key);
    return window.failures;
  }

  /** Drops `key`'s window: its circuit is not closed fleet-wide (the calls before that belong to no window). */
  forget(key: string): void {
    if (this.windows.size > 0) this.windows.delete(key);
  }
}
