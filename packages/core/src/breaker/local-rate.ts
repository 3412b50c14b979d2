import type { Clock } from "../clock.js";
import { LruMap } from "../internal/lru-map.js";
import type { CircuitTransition } from "./circuit-breaker-options.js";
import type { BudgetShare, BudgetShareReply, CircuitResult } from "./circuit-breaker-store.js";
import { bucketOf, FailureWindow } from "./failure-window.js";

/** A failure-rate breaker's settings (`circuitBreakerFailureRate`, `circuitBreakerMinimumCalls`, `circuitBreakerWindowMs`). */
export interface RateSettings {
  readonly failureRate: number;
  readonly minimumCalls: number;
  readonly windowMs: number;
}

/** A store's `shareBudget`: here it carries a failure-rate window's counts, `[age, calls, failures, ...]`, never taking anything. */
export type ShareCounts = (key: string, share: BudgetShare) => Promise<BudgetShareReply>;

/**
 * The key under which a failure-rate breaker's counts of `key` travel in `shareBudget` (a tool's
 * retry budget travels under the tool's own key): a NUL byte, which no tool name holds, keeps the
 * two apart.
 */
export function rateShareKey(key: string): string {
  return `\u0000failure-rate\u0000${key}`;
}

/** The least time between two shares of a failing tool's counts. */
const SHARE_INTERVAL_MS = 1_000;

/**
 * The failure rate of a tool's calls, for a failure-rate breaker over a `CircuitBreakerStore`: the
 * failure that brings the window to the rate opens the fleet's circuit (`StoreBreaker`). With
 * `share` (the store's `shareBudget`), the window is the fleet's: each process counts its calls in
 * memory, and while the tool has failed here within the window it sends the counts it has not sent
 * yet (at most once a second, and at once on the first failure after a quiet window) and hears the
 * fleet's buckets back; a failure is judged on the fleet's buckets as last heard plus the counts
 * not sent yet. A healthy tool costs no round trip. Without `share`, the window is this process's
 * calls. One window per key called, at most `maxKeys`, the least recently used dropped.
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
   * Records a call made while the circuit was closed. A failure that brings the window (holding at
   * least `minimumCalls` calls) to `failureRate` returns the failures in it and starts the window
   * afresh (the circuit opens: its calls from now on are the next window's); anything else returns
   * undefined.
   */
  record(key: string, failed: boolean): number | undefined {
    const now = this.clock.now();
    let window = this.windows.get(key);
    if (window === undefined) {
      window = new RateWindow(this.settings, key, this.share, this.onShareError, bucketOf(now, this.settings.windowMs));
      this.windows.add(key, window);
    }
    return window.record(now, failed);
  }

  /**
   * A closed call's result, judged: the window's failures when it is the failure that opens (the
   * store is to hear it, then `sent`), else undefined, the store hears nothing: a call below the
   * rate, a neutral one, or a stale one (it comes after the circuit left closed, which starts the
   * window afresh, or while this process's opening is on its way to the store).
   */
  opens(key: string, result: CircuitResult, circuit: { isClosed(key: string): boolean }): number | undefined {
    if (result === "neutral" || this.sending.has(key)) return undefined;
    if (!circuit.isClosed(key)) {
      this.forget(key);
      return undefined;
    }
    const opening = this.record(key, result === "failure");
    if (opening !== undefined) this.sending.add(key);
    return opening;
  }

  /** The store answered the opening sent for `key`, or could not take it. */
  sent(key: string): void {
    this.sending.delete(key);
  }

  /** Starts `key`'s window afresh: its circuit is not closed fleet-wide (the calls before that belong to no window). */
  forget(key: string): void {
    if (this.windows.size === 0) return;
    const window = this.windows.peek(key);
    if (window === undefined) return;
    if (this.share === undefined) this.windows.delete(key);
    else window.restart(bucketOf(this.clock.now(), this.settings.windowMs));
  }
}

/**
 * One key's window. Alone, `counts` holds this process's calls. Shared, `counts` holds what this
 * process has not sent yet and `fleet` the fleet's buckets as last heard (the answer of the latest
 * share sent wins); buckets up to `since` (the bucket in which the window last started afresh) are
 * left out of the fleet's, since the store keeps its counts across an opening.
 */
class RateWindow {
  private counts: FailureWindow;
  private fleet: FailureWindow | undefined = undefined;
  private since = Number.NEGATIVE_INFINITY;
  private sent = 0;
  private heard = 0;
  private sharedAt = Number.NEGATIVE_INFINITY;
  private failedAt = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly settings: RateSettings,
    private readonly key: string,
    private readonly share: ShareCounts | undefined,
    private readonly onShareError: ((key: string, error: unknown) => void) | undefined,
    bucket: number,
  ) {
    this.counts = new FailureWindow(bucket);
  }

  record(now: number, failed: boolean): number | undefined {
    const { failureRate, minimumCalls, windowMs } = this.settings;
    const bucket = bucketOf(now, windowMs);
    this.counts.record(bucket, failed);
    if (failed) {
      let calls = this.counts.calls;
      let failures = this.counts.failures;
      if (this.fleet !== undefined) {
        for (const [index, successes, failed] of this.fleet.liveBuckets(bucket)) {
          if (index <= this.since) continue;
          calls += successes + failed;
          failures += failed;
        }
      }
      if (calls >= minimumCalls && failures / calls >= failureRate) {
        this.restart(bucket);
        return failures;
      }
      this.failedAt = now;
    }
    // A tool that failed here in the window keeps the fleet told of its calls, at most once a second.
    if (this.share !== undefined && now - this.failedAt < windowMs && now - this.sharedAt >= SHARE_INTERVAL_MS) {
      void this.shareNow(now, bucket);
    }
    return undefined;
  }

  /** Drops the counts known here; the fleet's buckets up to `bucket` no longer count. */
  restart(bucket: number): void {
    this.counts = new FailureWindow(bucket);
    this.fleet = undefined;
    this.since = bucket;
  }

  /**
   * Sends the counts not sent yet (they leave `counts` while in flight, so that two shares never
   * send the same ones; back on a rejection) and keeps the fleet's buckets it hears.
   */
  private async shareNow(now: number, bucket: number): Promise<void> {
    const share = this.share as ShareCounts;
    const sending = this.counts.liveBuckets(bucket);
    const window = this.counts;
    const counts: number[] = [];
    for (const [index, successes, failures] of sending) {
      counts.push(bucket - index, successes + failures, failures);
      window.restore(index, -successes, -failures);
    }
    this.sharedAt = now;
    const order = ++this.sent;
    let reply: BudgetShareReply;
    try {
      reply = await share(rateShareKey(this.key), { ratio: 0, minPerSecond: 0, windowMs: this.settings.windowMs, counts, take: false });
    } catch (error) {
      if (window === this.counts) for (const [index, successes, failures] of sending) window.restore(index, successes, failures);
      this.onShareError?.(this.key, error);
      return;
    }
    if (order <= this.heard || window !== this.counts) return; // a later share's answer is newer; or the window started afresh
    this.heard = order;
    const fleet = new FailureWindow(bucket);
    const buckets = reply.buckets;
    for (let at = 0; at + 2 < buckets.length; at += 3) {
      const [age, calls, failures] = [Number(buckets[at]), Number(buckets[at + 1]), Number(buckets[at + 2])];
      if (Number.isInteger(age) && Number.isFinite(calls) && Number.isFinite(failures))
        fleet.restore(bucket - age, calls - failures, failures);
    }
    this.fleet = fleet;
  }
}

/** The opening a failure-rate breaker's failure made, with the failures of the window that opened it (the store counted one). */
export function withFailures<T extends CircuitTransition | undefined>(transition: T, failures: number | undefined): T {
  if (failures === undefined || transition === undefined || transition.to !== "open") return transition;
  return { ...transition, failures } as T;
}
