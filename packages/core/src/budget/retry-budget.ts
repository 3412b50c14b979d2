import { bucketOf, FailureWindow, WINDOW_BUCKETS } from "../breaker/failure-window.js";
import { InvalidOptionError } from "../errors/invalid-option-error.js";
import { LruMap } from "../internal/lru-map.js";

// The retry budget (`retryBudget`): the in-place retries of a tool within a sliding window are at
// most `ratio` × its logical calls in the window + `minPerSecond` × the window's seconds (Finagle's
// `RetryBudget`, the SRE book's per-client retry ratio). Counted per tool in time buckets, like the
// failure-rate breaker's window: fixed size whatever the call rate, no timers.

/** A tool's retry budget, resolved: every member given. */
export interface RetryBudgetSettings {
  /** In-place retries allowed per logical call in the window (0.1: one retry per ten calls). */
  readonly ratio: number;
  /** Retries allowed per second of the window whatever the call rate, so that a quiet tool can still retry. */
  readonly minPerSecond: number;
  /** The sliding window, in ms; it slides in steps of a tenth of it. */
  readonly windowMs: number;
}

/** The members a `retryBudget` object leaves out. */
export const DEFAULT_RETRY_BUDGET: RetryBudgetSettings = { ratio: 0.1, minPerSecond: 1, windowMs: 10_000 };

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
  const member = (key: keyof RetryBudgetSettings, exclusive: boolean): number => {
    const given = input[key];
    if (given === undefined) return from[key];
    if (typeof given !== "number" || !Number.isFinite(given) || given < 0 || (exclusive && given === 0)) {
      throw new InvalidOptionError(`${name}.${key}`, given, `a finite number ${exclusive ? ">" : ">="} 0`);
    }
    return given;
  };
  return { ratio: member("ratio", false), minPerSecond: member("minPerSecond", false), windowMs: member("windowMs", true) };
}

/** The retries a budget allows for `calls` calls in its window. */
function allowance(settings: RetryBudgetSettings, calls: number): number {
  return settings.ratio * calls + (settings.minPerSecond * settings.windowMs) / 1000;
}

/**
 * One tool's calls and in-place retries in its window: a `FailureWindow` whose first count is the
 * calls and whose second is the retries.
 */
class BudgetWindow {
  private readonly window: FailureWindow;

  constructor(
    readonly settings: RetryBudgetSettings,
    now: number,
  ) {
    this.window = new FailureWindow(bucketOf(now, settings.windowMs));
  }

  recordCall(now: number): void {
    this.window.record(bucketOf(now, this.settings.windowMs), false);
  }

  /** Takes one retry when the window has room for it and returns 0; else returns the ms until it has (at least 1). */
  takeRetry(now: number): number {
    const { settings, window } = this;
    const bucket = bucketOf(now, settings.windowMs);
    const live = window.liveBuckets(bucket);
    let calls = 0;
    let retries = 0;
    for (const [, called, retried] of live) {
      calls += called;
      retries += retried;
    }
    if (retries + 1 <= allowance(settings, calls)) {
      window.record(bucket, true);
      return 0;
    }
    // The first moment an old bucket leaves the window with enough retries in it to make room.
    const bucketMs = settings.windowMs / WINDOW_BUCKETS;
    for (const [index, called, retried] of live) {
      calls -= called;
      retries -= retried;
      if (retries + 1 <= allowance(settings, calls)) return Math.max(1, Math.ceil((index + WINDOW_BUCKETS) * bucketMs - now));
    }
    // Not even an empty window allows one (`minPerSecond` 0): the next calls will make room.
    return settings.windowMs;
  }
}

/**
 * The retry budgets of one plugin, one window per tool (made on the tool's first call under a
 * budget), bounded like the breakers (`maxCircuitBreakers`): the least recently used is dropped.
 */
export class RetryBudgets {
  private readonly windows: LruMap<string, BudgetWindow>;

  constructor(maxTools: number) {
    this.windows = new LruMap(maxTools);
  }

  /** Counts one logical call of `toolName`. */
  recordCall(toolName: string, settings: RetryBudgetSettings, now: number): void {
    this.windowOf(toolName, settings, now).recordCall(now);
  }

  /** Takes one in-place retry of `toolName`: 0 when the budget allows it, else the ms until it would. */
  takeRetry(toolName: string, settings: RetryBudgetSettings, now: number): number {
    return this.windowOf(toolName, settings, now).takeRetry(now);
  }

  private windowOf(toolName: string, settings: RetryBudgetSettings, now: number): BudgetWindow {
    let window = this.windows.get(toolName);
    if (window === undefined) {
      window = new BudgetWindow(settings, now);
      this.windows.set(toolName, window);
    }
    return window;
  }
}
