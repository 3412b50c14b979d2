import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { type BackoffOptions, backoffDelay, DEFAULT_BACKOFF, withRetryAfter } from "../src/primitives.js";

const defaults: BackoffOptions = DEFAULT_BACKOFF;

/** Integer backoff settings with initial <= max, as validated options guarantee. */
const settings = fc
  .record({
    initialBackoffMs: fc.integer({ min: 0, max: 10_000 }),
    extra: fc.integer({ min: 0, max: 100_000 }),
    backoffMultiplier: fc.double({ min: 1, max: 4, noNaN: true }),
  })
  .map(({ initialBackoffMs, extra, backoffMultiplier }) => ({
    initialBackoffMs,
    maxBackoffMs: initialBackoffMs + extra,
    backoffMultiplier,
  }));

const unit = fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true });

describe("backoffDelay without jitter", () => {
  it("follows the documented defaults: 500, 1000, 2000 ... capped at 30000", () => {
    const delays = [1, 2, 3, 4, 5, 6, 7, 8].map((retry) => backoffDelay(retry, defaults));
    expect(delays).toEqual([500, 1000, 2000, 4000, 8000, 16000, 30000, 30000]);
  });

  it("stays at the cap for very large retry numbers (no Infinity, no NaN)", () => {
    expect(backoffDelay(5_000, defaults)).toBe(30_000);
  });

  it("rounds fractional delays to whole milliseconds (multiplier 1.5)", () => {
    const options = { ...defaults, backoffMultiplier: 1.5 };
    const delays = [1, 2, 3, 4, 5, 6].map((retry) => backoffDelay(retry, options));
    // 500, 750, 1125, 1687.5, 2531.25, 3796.875
    expect(delays).toEqual([500, 750, 1125, 1688, 2531, 3797]);
  });

  it("never consults the random source", () => {
    const random = () => {
      throw new Error("random must not be called for jitter none");
    };
    expect(backoffDelay(3, defaults, random)).toBe(2000);
  });

  it("is 0 for every retry when initialBackoffMs is 0, however large the retry number", () => {
    const options = { ...defaults, initialBackoffMs: 0 };
    expect(backoffDelay(1, options)).toBe(0);
    expect(backoffDelay(40, options)).toBe(0);
    // 2^1100 overflows to Infinity, and 0 * Infinity is NaN: the delay must still be 0, not the cap.
    expect(backoffDelay(1_100, options)).toBe(0);
  });

  it("is min(max, initial * multiplier^(k-1)) rounded, for any valid settings", () => {
    fc.assert(
      fc.property(settings, fc.integer({ min: 1, max: 60 }), (options, retry) => {
        const expected = Math.round(Math.min(options.maxBackoffMs, options.initialBackoffMs * options.backoffMultiplier ** (retry - 1)));
        expect(backoffDelay(retry, { ...options, jitter: "none" })).toBe(expected);
      }),
    );
  });
});

describe("backoffDelay with jitter", () => {
  it("full: uniform in [0, base]", () => {
    fc.assert(
      fc.property(settings, fc.integer({ min: 1, max: 30 }), unit, (options, retry, r) => {
        const base = backoffDelay(retry, { ...options, jitter: "none" });
        const delay = backoffDelay(retry, { ...options, jitter: "full" }, () => r);
        expect(Number.isInteger(delay)).toBe(true);
        expect(delay).toBeGreaterThanOrEqual(0);
        expect(delay).toBeLessThanOrEqual(base);
      }),
    );
  });

  it("full: the extremes of the random source give 0 and (almost) base", () => {
    expect(backoffDelay(3, { ...defaults, jitter: "full" }, () => 0)).toBe(0);
    expect(backoffDelay(3, { ...defaults, jitter: "full" }, () => 0.9999999)).toBe(2000);
    expect(backoffDelay(3, { ...defaults, jitter: "full" }, () => 0.5)).toBe(1000);
  });

  it("equal: uniform in [base/2, base]", () => {
    fc.assert(
      fc.property(settings, fc.integer({ min: 1, max: 30 }), unit, (options, retry, r) => {
        const base = backoffDelay(retry, { ...options, jitter: "none" });
        const delay = backoffDelay(retry, { ...options, jitter: "equal" }, () => r);
        expect(Number.isInteger(delay)).toBe(true);
        expect(delay).toBeGreaterThanOrEqual(base / 2);
        expect(delay).toBeLessThanOrEqual(base);
      }),
    );
    expect(backoffDelay(3, { ...defaults, jitter: "equal" }, () => 0)).toBe(1000);
  });

  it("decorrelated: uniform in [initial, min(max, 3 * previous)]", () => {
    fc.assert(
      fc.property(settings, fc.integer({ min: 0, max: 200_000 }), unit, (options, previous, r) => {
        const delay = backoffDelay(1, { ...options, jitter: "decorrelated" }, () => r, previous);
        const high = Math.min(options.maxBackoffMs, 3 * Math.max(previous, options.initialBackoffMs));
        expect(Number.isInteger(delay)).toBe(true);
        expect(delay).toBeGreaterThanOrEqual(options.initialBackoffMs);
        expect(delay).toBeLessThanOrEqual(high);
      }),
    );
  });

  it("decorrelated: grows from the previous delay and reaches the cap", () => {
    const options = { ...defaults, jitter: "decorrelated" as const };
    // Without a previous delay the range is [500, 1500].
    expect(backoffDelay(1, options, () => 0)).toBe(500);
    expect(backoffDelay(1, options, () => 0.9999999)).toBe(1500);
    // The top of the range is 3 * previous ...
    expect(backoffDelay(2, options, () => 0.9999999, 4000)).toBe(12_000);
    // ... never above maxBackoffMs.
    expect(backoffDelay(9, options, () => 0.9999999, 25_000)).toBe(30_000);
  });

  it("a sequence of decorrelated delays always stays within [initial, max]", () => {
    fc.assert(
      fc.property(settings, fc.array(unit, { minLength: 1, maxLength: 20 }), (options, randoms) => {
        let previous: number | undefined;
        randoms.forEach((r, index) => {
          const delay = backoffDelay(index + 1, { ...options, jitter: "decorrelated" }, () => r, previous);
          expect(delay).toBeGreaterThanOrEqual(options.initialBackoffMs);
          expect(delay).toBeLessThanOrEqual(options.maxBackoffMs);
          previous = delay;
        });
      }),
    );
  });
});

describe("withRetryAfter", () => {
  it("waits for a server hint that is longer than the computed delay", () => {
    expect(withRetryAfter(500, 5_000, 30_000)).toBe(5_000);
  });

  it("rounds a fractional hint up, never waking early", () => {
    expect(withRetryAfter(500, 1_200.2, 30_000)).toBe(1_201);
  });

  it("caps the hint at maxBackoffMs", () => {
    expect(withRetryAfter(500, 120_000, 30_000)).toBe(30_000);
  });

  it("keeps the computed delay when the hint is shorter or equal", () => {
    expect(withRetryAfter(4_000, 1_000, 30_000)).toBe(4_000);
    expect(withRetryAfter(4_000, 4_000, 30_000)).toBe(4_000);
    expect(withRetryAfter(4_000, 0, 30_000)).toBe(4_000);
  });

  it("ignores a missing or nonsensical hint", () => {
    expect(withRetryAfter(500, undefined, 30_000)).toBe(500);
    expect(withRetryAfter(500, Number.NaN, 30_000)).toBe(500);
    expect(withRetryAfter(500, Number.POSITIVE_INFINITY, 30_000)).toBe(500);
    expect(withRetryAfter(500, -1_000, 30_000)).toBe(500);
  });

  it("is always within [delay, max(delay, maxBackoffMs)]", () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 30_000 }), fc.option(fc.double({ noNaN: false }), { nil: undefined }), (delay, hint) => {
        const result = withRetryAfter(delay, hint, 30_000);
        expect(result).toBeGreaterThanOrEqual(delay);
        expect(result).toBeLessThanOrEqual(30_000);
      }),
    );
  });
});
