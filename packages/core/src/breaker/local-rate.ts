import type { Clock } from "../clock.js";
import { LruMap } from "../internal/lru-map.js";
import type { BudgetShareReply, CircuitBreakerStore, CircuitResult } from "./circuit-breaker-store.js";
import { bucketOf, FailureWindow } from "./failure-window.js";

/** A failure-rate breaker's settings (`circuitBreakerFailureRate`, `circuitBreakerMinimumCalls`, `circuitBreakerWindowMs`). */
export interface RateSettings {
  readonly failureRate: number;
  readonly minimumCalls: number;
  readonly windowMs: number;
}

/** A store's `shareBudget`: here it carries a failure-rate window's counts, `[age, calls, failures, ...]`, never taking anything. */
type ShareCounts = NonNullable<CircuitBreakerStore["shareBudget"]>;

/** The least time between two shares of a failing tool's counts. */
const SHARE_INTERVAL_MS = 1_000;

/**
 * One key's window. Alone, `counts` holds this process's calls. Shared, `counts` holds what this
 * process has not sent yet and `fleet` the fleet's buckets as last heard (the answer of the latest
 * share sent wins); buckets up to `since` (the bucket in which the window last started afresh) are
 * left out of the fleet's, since the store keeps its counts across an opening.
 */
interface RateWindow {
  counts: FailureWindow;
  fleet: FailureWindow | undefined;
  since: number;
  /** Shares sent, and the last of them whose answer was kept. */
  sent: number;
  heard: number;
  sharedAt: number;
  failedAt: number;
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
  private readonly windows: LruMap<string, RateWindow>;
  /** Keys whose opening this process sent to the store, not answered yet. */
  private readonly sending = new Set<string>();

  constructor(
    private readonly settings: RateSettings,
    private readonly clock: Clock,
    maxKeys: number,
    private readonly share?: ShareCounts,
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
      const never = Number.NEGATIVE_INFINITY;
      window = { counts: new FailureWindow(bucket), fleet: undefined, since: never, sent: 0, heard: 0, sharedAt: never, failedAt: never };
      this.windows.add(key, window);
    }
    window.counts.record(bucket, result === "failure");
    if (result === "failure") {
      let { calls, failures } = window.counts;
      for (const [index, successes, failed] of window.fleet?.liveBuckets(bucket) ?? []) {
        if (index <= window.since) continue;
        calls += successes + failed;
        failures += failed;
      }
      if (calls >= minimumCalls && failures / calls >= failureRate) {
        this.restart(window, bucket);
        this.sending.add(key);
        return failures;
      }
      window.failedAt = now;
    }
    // A tool that failed here in the window keeps the fleet told of its calls, at most once a second.
    if (this.share !== undefined && now - window.failedAt < windowMs && now - window.sharedAt >= SHARE_INTERVAL_MS) {
      void this.shareNow(key, window, now, bucket);
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
    else this.restart(window, bucketOf(this.clock.now(), this.settings.windowMs));
  }

  /** Drops the counts known here; the fleet's buckets up to `bucket` no longer count. */
  private restart(window: RateWindow, bucket: number): void {
    window.counts = new FailureWindow(bucket);
    window.fleet = undefined;
    window.since = bucket;
  }

  /**
   * Sends the counts not sent yet (they leave `counts` while in flight, so that two shares never
   * send the same ones; back on a rejection) and keeps the fleet's buckets it hears, under a key
   * apart from the tool's retry budget (a NUL byte, which no tool name holds).
   */
  private async shareNow(key: string, window: RateWindow, now: number, bucket: number): Promise<void> {
    const { counts } = window;
    const sending = counts.liveBuckets(bucket);
    const flat: number[] = [];
    for (const [index, successes, failures] of sending) {
      flat.push(bucket - index, successes + failures, failures);
      counts.restore(index, -successes, -failures);
    }
    window.sharedAt = now;
    const order = ++window.sent;
    const share = { ratio: 0, minPerSecond: 0, windowMs: this.settings.windowMs, counts: flat, take: false };
    let reply: BudgetShareReply;
    try {
      reply = await (this.share as ShareCounts)(`\u0000failure-rate\u0000${key}`, share);
    } catch (error) {
      if (counts === window.counts) for (const [index, successes, failures] of sending) counts.restore(index, successes, failures);
      this.onShareError?.(key, error);
      return;
    }
    if (order <= window.heard || counts !== window.counts) return; // a later share's answer is newer; or the window started afresh
    window.heard = order;
    window.fleet = new FailureWindow(bucket);
    const { buckets } = reply;
    for (let at = 0; at + 2 < buckets.length; at += 3) {
      const [age, calls, failures] = [Number(buckets[at]), Number(buckets[at + 1]), Number(buckets[at + 2])];
      if (Number.isInteger(age) && Number.isFinite(calls) && Number.isFinite(failures)) {
        window.fleet.restore(bucket - age, calls - failures, failures);
      }
    }
  }
}
