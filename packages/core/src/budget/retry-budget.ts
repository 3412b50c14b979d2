import { type Bucket, bucketOf, type ShareBudget, SharedWindow, totals, WINDOW_BUCKETS } from "../breaker/failure-window.js";
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

function hasRoom(settings: RetryBudgetSettings, live: readonly Bucket[]): boolean {
  const [calls, retries] = totals(live);
  return retries + 1 <= settings.ratio * calls + (settings.minPerSecond * settings.windowMs) / 1000;
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
 * The retry budgets of one plugin: one window per tool (a `SharedWindow` of calls and, in place of
 * failures, in-place retries), bounded like the breakers. With `share`, each tool's window is the
 * fleet's: each retry is taken by the store, atomically, fleet-wide; when the store cannot answer,
 * the budget is judged here on what is known (the fleet as last heard, and this process's counts since).
 */
export class RetryBudgets {
  private readonly windows: LruMap<string, SharedWindow>;

  constructor(
    maxTools: number,
    private readonly share?: ShareBudget,
    private readonly onShareError?: (key: string, error: unknown) => void,
  ) {
    this.windows = new LruMap(maxTools);
  }

  /** Counts one logical call of `toolName`. */
  recordCall(toolName: string, settings: RetryBudgetSettings, now: number): void {
    const window = this.windowOf(toolName, settings, now);
    window.counts.record(bucketOf(now, settings.windowMs), 1, 0);
    if (window.due(now, settings.windowMs)) void this.shareNow(toolName, settings, now, false);
  }

  /** Takes one in-place retry of `toolName`: 0 when the budget allows it, else the ms until it would (asked of the store when shared). */
  async takeRetry(toolName: string, settings: RetryBudgetSettings, now: number): Promise<number> {
    const window = this.windowOf(toolName, settings, now);
    if (this.share !== undefined) {
      window.failedAt = now;
      const verdict = await this.shareNow(toolName, settings, now, true);
      if (verdict !== undefined) return verdict;
    }
    const bucket = bucketOf(now, settings.windowMs);
    const live = window.known(bucket);
    if (!hasRoom(settings, live)) return waitFor(settings, live, now);
    window.counts.record(bucket, 0, 1);
    return 0;
  }

  /** With `take`, the store's verdict on one retry (0, or the wait); undefined when not shared or the store did not answer. */
  private async shareNow(toolName: string, settings: RetryBudgetSettings, now: number, take: boolean): Promise<number | undefined> {
    const { share } = this;
    if (share === undefined) return undefined;
    const bucket = bucketOf(now, settings.windowMs);
    const send = (counts: number[]) => share(toolName, { ...settings, counts, take });
    const window = this.windowOf(toolName, settings, now);
    const shared = await window.share(now, bucket, send, (error) => this.onShareError?.(toolName, error));
    if (!take || shared === undefined) return undefined;
    return shared.reply.taken === true ? 0 : waitFor(settings, shared.fleet.liveBuckets(bucket), now);
  }

  private windowOf(toolName: string, settings: RetryBudgetSettings, now: number): SharedWindow {
    let window = this.windows.get(toolName);
    if (window === undefined) {
      window = new SharedWindow(bucketOf(now, settings.windowMs));
      this.windows.set(toolName, window);
    }
    return window;
  }
}
