import type { BudgetShare, BudgetShareReply } from "../breaker/circuit-breaker-store.js";
import { bucketOf, FailureWindow, WINDOW_BUCKETS } from "../breaker/failure-window.js";
import { finite } from "../config/checks.js";
import { InvalidOptionError } from "../errors/invalid-option-error.js";
import { LruMap } from "../internal/lru-map.js";

// The retry budget (`retryBudget`): the in-place retries of a tool within a sliding window are at
// most `ratio` × its logical calls in the window + `minPerSecond` × the window's seconds (Finagle's
// `RetryBudget`, the SRE book's per-client retry ratio). Counted per tool in time buckets, like the
// failure-rate breaker's window: fixed size whatever the call rate, no timers.

/** A tool's retry budget, resolved: every member given. */
export interface RetryBudgetSettings {
  /** In-place retries allowed per logical call in the window (0.05: one retry per twenty calls). */
  readonly ratio: number;
  /** Retries allowed per second of the window whatever the call rate, so that a quiet tool can still retry. */
  readonly minPerSecond: number;
  /** The sliding window, in ms; it slides in steps of a tenth of it. */
  readonly windowMs: number;
}

/** The members a `retryBudget` object leaves out. */
export const DEFAULT_RETRY_BUDGET: RetryBudgetSettings = { ratio: 0.05, minPerSecond: 1, windowMs: 10_000 };

const MEMBERS: ReadonlySet<string> = new Set(Object.keys(DEFAULT_RETRY_BUDGET));

/**
 * Checks a `retryBudget` option: `false` turns a plugin's budget off for one tool (undefined), an
 * object is merged over `base` (the plugin's budget for a tool's own, else the defaults).
 */
export function checkRetryBudget(value: unknown, name: string, base: RetryBudgetSettings | undefined): RetryBudgetSettings | undefined {
  if (value === false) return undefined;
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new InvalidOptionError(name, value, "an object ({ ratio, minPerSecond, windowMs }) or false");
  }
  const input = value as Record<string, unknown>;
  for (const key of Object.keys(input)) {
    if (!MEMBERS.has(key)) throw new InvalidOptionError(`${name}.${key}`, input[key], "one of ratio, minPerSecond, windowMs");
  }
  const from = base ?? DEFAULT_RETRY_BUDGET;
  const member = (key: keyof RetryBudgetSettings, exclusive: boolean): number =>
    input[key] === undefined ? from[key] : finite(0, exclusive)(input[key], `${name}.${key}`);
  return { ratio: member("ratio", false), minPerSecond: member("minPerSecond", false), windowMs: member("windowMs", true) };
}

function allowance(settings: RetryBudgetSettings, calls: number): number {
  return settings.ratio * calls + (settings.minPerSecond * settings.windowMs) / 1000;
}

/** A fleet's window shared through a store: `CircuitBreakerStore.shareBudget`. */
export type ShareBudget = (key: string, share: BudgetShare) => Promise<BudgetShareReply>;

/** The least time between two shares of a failing tool's calls (a retry shares at once). */
export const SHARE_INTERVAL_MS = 1_000;

type Bucket = [index: number, calls: number, retries: number];

/** The live buckets of two windows, summed per bucket, oldest first. */
function merged(first: Bucket[], second: Bucket[] | undefined): Bucket[] {
  const byIndex = new Map<number, Bucket>();
  for (const [index, calls, retries] of [...first, ...(second ?? [])]) {
    const seen = byIndex.get(index);
    if (seen === undefined) byIndex.set(index, [index, calls, retries]);
    else {
      seen[1] += calls;
      seen[2] += retries;
    }
  }
  return [...byIndex.values()].sort((left, right) => left[0] - right[0]);
}

function hasRoom(settings: RetryBudgetSettings, live: readonly Bucket[]): boolean {
  let calls = 0;
  let retries = 0;
  for (const [, called, retried] of live) {
    calls += called;
    retries += retried;
  }
  return retries + 1 <= allowance(settings, calls);
}

/** The wait until old buckets leave the window and make room for one retry; one window when none would. */
function waitFor(settings: RetryBudgetSettings, live: readonly Bucket[], now: number): number {
  const bucketMs = settings.windowMs / WINDOW_BUCKETS;
  for (const [at, [index]] of live.entries()) {
    if (hasRoom(settings, live.slice(at + 1))) return Math.max(1, Math.ceil((index + WINDOW_BUCKETS) * bucketMs - now));
  }
  // Not even an empty window allows one (`minPerSecond` 0): the next calls will make room.
  return settings.windowMs;
}

/**
 * One tool's calls and in-place retries in its window: `FailureWindow`s whose first count is the
 * calls and whose second is the retries. Alone, `counts` holds this process's. Shared, `counts`
 * holds what this process has not sent yet, `fleet` the fleet's buckets as last heard, and each
 * retry is taken by the store, atomically, fleet-wide; when the store cannot answer, the budget
 * is judged here on what is known (the fleet as last heard, and this process's counts since).
 */
class BudgetWindow {
  private readonly counts: FailureWindow;
  private fleet: FailureWindow | undefined;
  /** Shares sent, in order; the answer of the latest one sent wins. */
  private sent = 0;
  private heard = 0;
  private sharedAt = Number.NEGATIVE_INFINITY;
  private failedAt = Number.NEGATIVE_INFINITY;

  constructor(
    readonly settings: RetryBudgetSettings,
    private readonly key: string,
    private readonly share: ShareBudget | undefined,
    private readonly onShareError: ((key: string, error: unknown) => void) | undefined,
    now: number,
  ) {
    this.counts = new FailureWindow(bucketOf(now, settings.windowMs));
  }

  recordCall(now: number): void {
    this.counts.record(bucketOf(now, this.settings.windowMs), false);
    // A tool that failed here in the window keeps the fleet told of its calls, at most once a
    // second; a healthy one costs no round trip.
    if (this.share !== undefined && now - this.failedAt < this.settings.windowMs && now - this.sharedAt >= SHARE_INTERVAL_MS) {
      void this.shareNow(now, false);
    }
  }

  /** Takes one retry when the window has room for it: 0; else the ms until it has (at least 1). */
  async takeRetry(now: number): Promise<number> {
    if (this.share === undefined) return this.takeHere(now);
    this.failedAt = now;
    return (await this.shareNow(now, true)) ?? this.takeHere(now);
  }

  /** Judged on what this process knows. */
  private takeHere(now: number): number {
    const bucket = bucketOf(now, this.settings.windowMs);
    const live = merged(this.counts.liveBuckets(bucket), this.fleet?.liveBuckets(bucket));
    if (!hasRoom(this.settings, live)) return waitFor(this.settings, live, now);
    this.counts.record(bucket, true);
    return 0;
  }

  /**
   * Sends the counts not sent yet (they leave `counts` while in flight, so that two shares never
   * send the same ones) and takes the fleet's buckets; with `take`, the store's verdict on one
   * retry (0, or the wait), or undefined when the store did not answer (the counts are kept).
   */
  private async shareNow(now: number, take: boolean): Promise<number | undefined> {
    const share = this.share as ShareBudget;
    const { settings } = this;
    const bucket = bucketOf(now, settings.windowMs);
    const sending = this.counts.liveBuckets(bucket);
    const counts: number[] = [];
    for (const [index, calls, retries] of sending) {
      counts.push(bucket - index, calls, retries);
      this.counts.restore(index, -calls, -retries);
    }
    this.sharedAt = now;
    const order = ++this.sent;
    let reply: BudgetShareReply;
    try {
      reply = await share(this.key, { ...settings, counts, take });
    } catch (error) {
      for (const [index, calls, retries] of sending) this.counts.restore(index, calls, retries);
      this.onShareError?.(this.key, error);
      return undefined;
    }
    const fleet = new FailureWindow(bucket);
    const buckets = reply.buckets;
    for (let at = 0; at + 2 < buckets.length; at += 3) {
      const [age, calls, retries] = [Number(buckets[at]), Number(buckets[at + 1]), Number(buckets[at + 2])];
      if (Number.isInteger(age) && Number.isFinite(calls) && Number.isFinite(retries)) fleet.restore(bucket - age, calls, retries);
    }
    if (order > this.heard) {
      this.heard = order;
      this.fleet = fleet;
    }
    if (!take) return undefined;
    return reply.taken === true ? 0 : waitFor(settings, fleet.liveBuckets(bucket), now);
  }
}

/** The retry budgets of one plugin, one window per tool, bounded like the breakers; with `share`, each tool's window is the fleet's. */
export class RetryBudgets {
  private readonly windows: LruMap<string, BudgetWindow>;

  constructor(
    maxTools: number,
    private readonly share?: ShareBudget,
    private readonly onShareError?: (key: string, error: unknown) => void,
  ) {
    this.windows = new LruMap(maxTools);
  }

  /** Counts one logical call of `toolName`. */
  recordCall(toolName: string, settings: RetryBudgetSettings, now: number): void {
    this.windowOf(toolName, settings, now).recordCall(now);
  }

  /** Takes one in-place retry of `toolName`: 0 when the budget allows it, else the ms until it would (asked of the store when shared). */
  takeRetry(toolName: string, settings: RetryBudgetSettings, now: number): Promise<number> {
    return this.windowOf(toolName, settings, now).takeRetry(now);
  }

  private windowOf(toolName: string, settings: RetryBudgetSettings, now: number): BudgetWindow {
    let window = this.windows.get(toolName);
    if (window === undefined) {
      window = new BudgetWindow(settings, toolName, this.share, this.onShareError, now);
      this.windows.set(toolName, window);
    }
    return window;
  }
}
