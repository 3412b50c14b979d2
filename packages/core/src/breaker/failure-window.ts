import type { BudgetShareReply, CircuitBreakerStore } from "./circuit-breaker-store.js";

/** Time buckets of a window: it slides in steps of `windowMs / WINDOW_BUCKETS`. */
export const WINDOW_BUCKETS = 10;

/** A store's `shareBudget`: a retry budget's counts, or a failure-rate window's (`take` always false). */
export type ShareBudget = NonNullable<CircuitBreakerStore["shareBudget"]>;

/** The least time between two shares of a failing tool's counts (a retry budget's retry shares at once). */
const SHARE_INTERVAL_MS = 1_000;

/** The bucket that time `now` falls in, for a window of `windowMs`: buckets are `windowMs / 10` wide. */
export function bucketOf(now: number, windowMs: number): number {
  return Math.floor((now * WINDOW_BUCKETS) / windowMs);
}

/** Where bucket `index` keeps its counts in the ring. */
function slotOf(index: number): number {
  return ((index % WINDOW_BUCKETS) + WINDOW_BUCKETS) % WINDOW_BUCKETS;
}

/** A live bucket's counts: a failure-rate window's calls and failures among them, or a retry budget's calls and retries. */
export type Bucket = [index: number, calls: number, failures: number];

/** The calls and failures of `buckets`, summed. */
export function totals(buckets: readonly Bucket[]): [calls: number, failures: number] {
  return buckets.reduce<[number, number]>(([calls, failures], [, called, failed]) => [calls + called, failures + failed], [0, 0]);
}

/**
 * Two counts per time bucket in the last `WINDOW_BUCKETS` buckets (a ring, like Resilience4j's
 * time-based sliding window): fixed size whatever the call rate, no timers. A call counts while its
 * bucket is one of the `WINDOW_BUCKETS` newest, so for at most `windowMs` and at least
 * `windowMs * 9 / 10`. Buckets are absolute indices (`bucketOf`), so an idle gap of many buckets
 * clears the ring at once instead of leaving stale counts behind.
 */
export class FailureWindow {
  private readonly callsIn: number[] = new Array(WINDOW_BUCKETS).fill(0);
  private readonly failuresIn: number[] = new Array(WINDOW_BUCKETS).fill(0);

  /** `head`: the newest bucket recorded in. */
  constructor(private head: number) {}

  /** Adds counts in `bucket` (now's), first dropping the buckets that left the window. */
  record(bucket: number, calls: number, failures: number): void {
    for (let index = this.head + 1; index <= Math.min(bucket, this.head + WINDOW_BUCKETS); index++) {
      this.callsIn[slotOf(index)] = 0;
      this.failuresIn[slotOf(index)] = 0;
    }
    this.head = Math.max(this.head, bucket);
    this.add(this.head, calls, failures);
  }

  /** Adds counts (negative ones take them back) to `bucket`, ignored unless it is live and not newer than the newest. */
  add(bucket: number, calls: number, failures: number): void {
    if (bucket > this.head || bucket <= this.head - WINDOW_BUCKETS) return;
    const slot = slotOf(bucket);
    this.callsIn[slot] = (this.callsIn[slot] ?? 0) + calls;
    this.failuresIn[slot] = (this.failuresIn[slot] ?? 0) + failures;
  }

  /** The non-empty buckets still live at `bucket`, oldest first. Changes nothing. */
  liveBuckets(bucket: number): Bucket[] {
    const live: Bucket[] = [];
    for (let index = Math.max(bucket, this.head) - WINDOW_BUCKETS + 1; index <= this.head; index++) {
      const calls = this.callsIn[slotOf(index)] ?? 0;
      const failures = this.failuresIn[slotOf(index)] ?? 0;
      if (calls + failures > 0) live.push([index, calls, failures]);
    }
    return live;
  }
}

/**
 * A tool's window over a store's `shareBudget` (a failure-rate breaker's, or a retry budget's).
 * Alone, `counts` holds this process's counts. Shared, `counts` holds what this process has not
 * sent yet and `fleet` the fleet's buckets as last heard (the answer of the latest share sent wins);
 * fleet buckets up to `since` (where the window last started afresh) are left out.
 */
export class SharedWindow {
  counts: FailureWindow;
  private fleet: FailureWindow | undefined;
  private since = Number.NEGATIVE_INFINITY;
  /** Shares sent, and the last of them whose answer was kept. */
  private sent = 0;
  private heard = 0;
  private sharedAt = Number.NEGATIVE_INFINITY;
  /** The last failure seen here: only a tool failing here within the window is shared (a healthy one costs no round trip). */
  failedAt = Number.NEGATIVE_INFINITY;

  constructor(bucket: number) {
    this.counts = new FailureWindow(bucket);
  }

  /** Is a share of the calls due: the tool failed here within the window, and none was sent in the last second? */
  due(now: number, windowMs: number): boolean {
    return now - this.failedAt < windowMs && now - this.sharedAt >= SHARE_INTERVAL_MS;
  }

  /** The live buckets known here at `bucket` (the counts not sent yet and the fleet's), summed per bucket, oldest first. */
  known(bucket: number): Bucket[] {
    const byIndex = new Map<number, Bucket>();
    const fleet = this.fleet?.liveBuckets(bucket).filter(([index]) => index > this.since) ?? [];
    for (const [index, calls, failures] of [...this.counts.liveBuckets(bucket), ...fleet]) {
      const seen = byIndex.get(index);
      byIndex.set(index, [index, calls + (seen?.[1] ?? 0), failures + (seen?.[2] ?? 0)]);
    }
    return [...byIndex.values()].sort((left, right) => left[0] - right[0]);
  }

  /** Drops the counts known here; the fleet's buckets up to `bucket` no longer count. */
  restart(bucket: number): void {
    this.counts = new FailureWindow(bucket);
    this.fleet = undefined;
    this.since = bucket;
  }

  /**
   * Sends the counts not sent yet, flat `[age, calls, failures, ...]` (they leave `counts` while in
   * flight, so that two shares never send the same ones; back on a rejection), and keeps the fleet's
   * buckets it hears unless a later share's answer came first or the window started afresh. Resolves
   * to the reply and the fleet's buckets, or undefined when the store did not answer.
   */
  async share(
    now: number,
    bucket: number,
    send: (counts: number[]) => Promise<BudgetShareReply>,
    onError: (error: unknown) => void,
  ): Promise<{ reply: BudgetShareReply; fleet: FailureWindow } | undefined> {
    const { counts } = this;
    const sending = counts.liveBuckets(bucket);
    for (const [index, calls, failures] of sending) counts.add(index, -calls, -failures);
    this.sharedAt = now;
    const order = ++this.sent;
    let reply: BudgetShareReply;
    try {
      reply = await send(sending.flatMap(([index, calls, failures]) => [bucket - index, calls, failures]));
    } catch (error) {
      if (counts === this.counts) for (const [index, calls, failures] of sending) counts.add(index, calls, failures);
      onError(error);
      return undefined;
    }
    const fleet = new FailureWindow(bucket);
    const { buckets } = reply;
    for (let at = 0; at + 2 < buckets.length; at += 3) {
      const [age, calls, failures] = [Number(buckets[at]), Number(buckets[at + 1]), Number(buckets[at + 2])];
      if (Number.isInteger(age) && Number.isFinite(calls) && Number.isFinite(failures)) fleet.add(bucket - age, calls, failures);
    }
    if (order > this.heard && counts === this.counts) {
      this.heard = order;
      this.fleet = fleet;
    }
    return { reply, fleet };
  }
}
