/** Randomisation of delays: `"none"` keeps the documented delays exact. */
export type Jitter = "none" | "full" | "equal" | "decorrelated";

export interface BackoffOptions {
  /** Delay before the first retry, in ms. @default 500 */
  readonly initialBackoffMs: number;
  /** Growth factor per retry. @default 2 */
  readonly backoffMultiplier: number;
  /** Upper bound of any delay, in ms. @default 30_000 */
  readonly maxBackoffMs: number;
  /** Randomisation. @default "none" */
  readonly jitter: Jitter;
}

export const DEFAULT_BACKOFF: BackoffOptions = {
  initialBackoffMs: 500,
  backoffMultiplier: 2,
  maxBackoffMs: 30_000,
  jitter: "none",
};

/**
 * The delay before the `retry`-th retry (1-based), in whole ms:
 * `min(maxBackoffMs, initialBackoffMs * backoffMultiplier^(retry-1))`, then jittered.
 *
 * - `"none"`: exactly that value.
 * - `"full"`: uniform in [0, value].
 * - `"equal"`: uniform in [value/2, value].
 * - `"decorrelated"`: uniform in [initialBackoffMs, 3 * previousMs] (AWS), capped at `maxBackoffMs`.
 *
 * @param random a source in [0, 1)
 * @param previousMs the previous delay, for `"decorrelated"` (defaults to `initialBackoffMs`)
 */
export function backoffDelay(retry: number, options: BackoffOptions, random: () => number = Math.random, previousMs?: number): number {
  const { initialBackoffMs, backoffMultiplier, maxBackoffMs } = options;
  const exponent = Math.max(0, retry - 1);
  // A zero initial delay stays zero: `0 * multiplier^k` would be `0 * Infinity = NaN` once the power overflows.
  const raw = initialBackoffMs === 0 ? 0 : initialBackoffMs * backoffMultiplier ** exponent;
  const base = Math.round(Math.min(maxBackoffMs, Number.isFinite(raw) ? raw : maxBackoffMs));
  switch (options.jitter) {
    case "none":
      return base;
    case "full":
      return Math.round(random() * base);
    case "equal":
      return Math.round(base / 2 + (random() * base) / 2);
    case "decorrelated": {
      const previous = Math.max(initialBackoffMs, previousMs ?? initialBackoffMs);
      const high = Math.min(maxBackoffMs, previous * 3);
      const low = Math.min(initialBackoffMs, high);
      return Math.round(low + random() * (high - low));
    }
  }
}

/** The delay to wait: the computed backoff, raised to a server's `Retry-After` hint, never above `maxBackoffMs`. */
export function withRetryAfter(delayMs: number, retryAfterMs: number | undefined, maxBackoffMs: number): number {
  if (retryAfterMs === undefined || !Number.isFinite(retryAfterMs) || retryAfterMs <= delayMs) return delayMs;
  return Math.min(maxBackoffMs, Math.ceil(retryAfterMs));
}
