/** Time buckets of a failure-rate window: it slides in steps of `windowMs / WINDOW_BUCKETS`. */
export const WINDOW_BUCKETS = 10;

/** The bucket that time `now` falls in, for a window of `windowMs`: buckets are `windowMs / 10` wide. */
export function bucketOf(now: number, windowMs: number): number {
  return Math.floor((now * WINDOW_BUCKETS) / windowMs);
}

/** Where bucket `index` keeps its counts: successes at the slot, failures right after it. */
function slotOf(index: number): number {
  return (((index % WINDOW_BUCKETS) + WINDOW_BUCKETS) % WINDOW_BUCKETS) * 2;
}

/**
 * The calls of one closed circuit in its last `WINDOW_BUCKETS` time buckets (a ring of success and
 * failure counts, like Resilience4j's time-based sliding window): fixed size whatever the call
 * rate, no timers. A call counts while its bucket is one of the `WINDOW_BUCKETS` newest, so for at
 * most `windowMs` and at least `windowMs * 9 / 10`. Buckets are absolute indices (`bucketOf`); a
 * jump of many buckets clears the ring at once (cockatiel's SamplingBreaker rotates one bucket per
 * call, so an idle gap left stale counts behind).
 */
export class FailureWindow {
  /** Calls recorded in the live buckets (as of the newest one). */
  calls = 0;
  /** Failures among `calls`. */
  failures = 0;
  /** The newest bucket recorded in. */
  private head: number;
  /** Per bucket: successes at `slotOf(index)`, failures at `slotOf(index) + 1`. */
  private readonly counts: number[] = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0];

  constructor(bucket: number) {
    this.head = bucket;
  }

  /** Records one call in `bucket` (now's), first dropping the buckets that left the window. */
  record(bucket: number, failed: boolean): void {
    this.slide(bucket);
    const slot = slotOf(this.head) + (failed ? 1 : 0);
    this.counts[slot] = (this.counts[slot] ?? 0) + 1;
    this.calls++;
    if (failed) this.failures++;
  }

  /** Adds restored counts to `bucket`, which must not be newer than the newest one. */
  restore(bucket: number, successes: number, failures: number): void {
    if (bucket > this.head || bucket <= this.head - WINDOW_BUCKETS) return;
    const slot = slotOf(bucket);
    this.counts[slot] = (this.counts[slot] ?? 0) + successes;
    this.counts[slot + 1] = (this.counts[slot + 1] ?? 0) + failures;
    this.calls += successes + failures;
    this.failures += failures;
  }

  /** The non-empty buckets still live at `bucket`, oldest first, as `[index, successes, failures]`. Changes nothing. */
  liveBuckets(bucket: number): Array<[number, number, number]> {
    const live: Array<[number, number, number]> = [];
    const newest = Math.max(bucket, this.head);
    for (let index = this.head - WINDOW_BUCKETS + 1; index <= this.head; index++) {
      if (index <= newest - WINDOW_BUCKETS) continue;
      const slot = slotOf(index);
      const successes = this.counts[slot] ?? 0;
      const failures = this.counts[slot + 1] ?? 0;
      if (successes + failures > 0) live.push([index, successes, failures]);
    }
    return live;
  }

  /** Failures still live at `bucket`. Changes nothing. */
  failuresAt(bucket: number): number {
    if (bucket <= this.head) return this.failures;
    let failures = 0;
    for (const [, , failed] of this.liveBuckets(bucket)) failures += failed;
    return failures;
  }

  private slide(bucket: number): void {
    if (bucket <= this.head) return; // the same bucket (or the clock went back): record in the newest
    if (bucket - this.head >= WINDOW_BUCKETS) {
      this.counts.fill(0);
      this.calls = 0;
      this.failures = 0;
    } else {
      for (let index = this.head + 1; index <= bucket; index++) {
        const slot = slotOf(index);
        const successes = this.counts[slot] ?? 0;
        const failures = this.counts[slot + 1] ?? 0;
        this.calls -= successes + failures;
        this.failures -= failures;
        this.counts[slot] = 0;
        this.counts[slot + 1] = 0;
      }
    }
    this.head = bucket;
  }
}
