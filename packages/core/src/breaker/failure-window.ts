/** Time buckets of a failure-rate window: it slides in steps of `windowMs / WINDOW_BUCKETS`. */
export const WINDOW_BUCKETS = 10;

/** The bucket that time `now` falls in, for a window of `windowMs`: buckets are `windowMs / 10` wide. */
export function bucketOf(now: number, windowMs: number): number {
  return Math.floor((now * WINDOW_BUCKETS) / windowMs);
}

/** Where bucket `index` keeps its counts in the ring. */
function slotOf(index: number): number {
  return ((index % WINDOW_BUCKETS) + WINDOW_BUCKETS) % WINDOW_BUCKETS;
}

/**
 * Success and failure counts in the last `WINDOW_BUCKETS` time buckets (a ring, like
 * Resilience4j's time-based sliding window): fixed size whatever the call rate, no timers. A call
 * counts while its bucket is one of the `WINDOW_BUCKETS` newest, so for at most `windowMs` and at
 * least `windowMs * 9 / 10`. Buckets are absolute indices (`bucketOf`), so an idle gap of many
 * buckets clears the ring at once instead of leaving stale counts behind.
 */
export class FailureWindow {
  /** Calls recorded in the live buckets (as of the newest one). */
  calls = 0;
  /** Failures among `calls`. */
  failures = 0;
  private readonly successesIn: number[] = new Array(WINDOW_BUCKETS).fill(0);
  private readonly failuresIn: number[] = new Array(WINDOW_BUCKETS).fill(0);

  /** `head`: the newest bucket recorded in. */
  constructor(private head: number) {}

  /** Records one call in `bucket` (now's), first dropping the buckets that left the window. */
  record(bucket: number, failed: boolean): void {
    this.slide(bucket);
    this.restore(this.head, failed ? 0 : 1, failed ? 1 : 0);
  }

  /** Adds counts (negative ones take them back) to `bucket`, ignored unless it is live and not newer than the newest. */
  restore(bucket: number, successes: number, failures: number): void {
    if (bucket > this.head || bucket <= this.head - WINDOW_BUCKETS) return;
    const slot = slotOf(bucket);
    this.successesIn[slot] = (this.successesIn[slot] ?? 0) + successes;
    this.failuresIn[slot] = (this.failuresIn[slot] ?? 0) + failures;
    this.calls += successes + failures;
    this.failures += failures;
  }

  /** The non-empty buckets still live at `bucket`, oldest first, as `[index, successes, failures]`. Changes nothing. */
  liveBuckets(bucket: number): Array<[number, number, number]> {
    const live: Array<[number, number, number]> = [];
    for (let index = Math.max(bucket, this.head) - WINDOW_BUCKETS + 1; index <= this.head; index++) {
      const successes = this.successesIn[slotOf(index)] ?? 0;
      const failures = this.failuresIn[slotOf(index)] ?? 0;
      if (successes + failures > 0) live.push([index, successes, failures]);
    }
    return live;
  }

  /** Failures still live at `bucket`. Changes nothing. */
  failuresAt(bucket: number): number {
    return this.liveBuckets(bucket).reduce((sum, [, , failures]) => sum + failures, 0);
  }

  private slide(bucket: number): void {
    for (let index = this.head + 1; index <= Math.min(bucket, this.head + WINDOW_BUCKETS); index++) {
      const slot = slotOf(index);
      this.calls -= (this.successesIn[slot] ?? 0) + (this.failuresIn[slot] ?? 0);
      this.failures -= this.failuresIn[slot] ?? 0;
      this.successesIn[slot] = 0;
      this.failuresIn[slot] = 0;
    }
    this.head = Math.max(this.head, bucket);
  }
}
