import type { Clock } from "../clock.js";
import { finite, integer } from "../config/checks.js";
import { InvalidOptionError } from "../errors/invalid-option-error.js";
import type { CircuitState } from "../outcome.js";

export interface CircuitTransition {
  readonly key: string;
  readonly from: CircuitState;
  readonly to: CircuitState;
  /** Consecutive failures that led here; with `failureRate`, the failures in the window when it opened (+1 per failed probe). */
  readonly failures: number;
  /** The open time used: of the period starting (to `open`) or ending (`open` to `half-open`); `resetMs` otherwise. */
  readonly resetMs: number;
}

/** The defaults of `CircuitBreakerOptions`, in one place. */
export const CIRCUIT_BREAKER_DEFAULTS = Object.freeze({
  threshold: 5,
  resetMs: 60_000,
  maxKeys: 10_000,
  minimumCalls: 10,
  windowMs: 60_000,
});

export interface CircuitBreakerOptions<C = unknown> {
  /** Consecutive failures that open a closed circuit (not used with `failureRate`). @default 5 */
  readonly threshold?: number;
  /**
   * Open time before the next call is let through as a probe (the first open period, and every one
   * without `maxResetMs`); also a probe's lease: a probe that hangs longer frees its slot. @default 60_000
   */
  readonly resetMs?: number;
  /**
   * Grows the open periods: each re-open after a failed probe doubles the open time (`resetMs`, 2×,
   * 4×, ...) up to this; a successful probe starts again from `resetMs`. A finite number ≥ `resetMs`.
   * The probe's lease stays `resetMs`. @default undefined (every open period is `resetMs`)
   * @example maxResetMs: 15 * 60_000
   */
  readonly maxResetMs?: number;
  /**
   * A failure-rate breaker instead of the consecutive count: after each call recorded while closed
   * (a success or a failure; neutral results are not calls), once the window holds at least
   * `minimumCalls` calls, the circuit opens when failures / calls ≥ this. A fraction in (0, 1].
   * Every key called then keeps a window (about 350 bytes, fixed), successes included.
   * @default undefined (the consecutive count, `threshold`)
   * @example failureRate: 0.5
   */
  readonly failureRate?: number;
  /** With `failureRate`: calls the window must hold before the rate is judged (an integer ≥ 1). @default 10 */
  readonly minimumCalls?: number;
  /**
   * With `failureRate`: the sliding window, in 10 buckets of `windowMs / 10`: a call counts for at
   * most `windowMs` and at least 9/10 of it (> 0). @default 60_000
   */
  readonly windowMs?: number;
  /** Most keys tracked; the least recently used entry is dropped beyond it. @default 10_000 */
  readonly maxKeys?: number;
  /** @default systemClock */
  readonly clock?: Clock;
  /** Called on every state change, with the context passed to the method that caused it. Must not throw. */
  readonly onTransition?: (transition: CircuitTransition, context: C | undefined) => void;
}

/** The options that shape the breaker's state, defaults applied and checked. */
export type BreakerSettings = ReturnType<typeof breakerSettings>;

/** Applies the defaults and checks every option, naming the first bad one (`InvalidOptionError`). */
export function breakerSettings(options: CircuitBreakerOptions<never>) {
  const given = (name: keyof typeof CIRCUIT_BREAKER_DEFAULTS) => options[name] ?? CIRCUIT_BREAKER_DEFAULTS[name];
  const threshold = integer(1)(given("threshold"), "threshold");
  const resetMs = finite(0, true)(given("resetMs"), "resetMs");
  const { maxResetMs, failureRate } = options;
  if (maxResetMs !== undefined && !(typeof maxResetMs === "number" && Number.isFinite(maxResetMs) && maxResetMs >= resetMs))
    throw new InvalidOptionError("maxResetMs", maxResetMs, `a finite number >= resetMs (${resetMs})`);
  if (failureRate !== undefined && !(typeof failureRate === "number" && failureRate > 0 && failureRate <= 1))
    throw new InvalidOptionError("failureRate", failureRate, "a number in (0, 1]");
  const minimumCalls = integer(1)(given("minimumCalls"), "minimumCalls");
  const windowMs = finite(0, true)(given("windowMs"), "windowMs");
  const maxKeys = integer(1)(given("maxKeys"), "maxKeys");
  return { threshold, resetMs, maxResetMs, failureRate, minimumCalls, windowMs, maxKeys };
}

export type OnTransition<C> = CircuitBreakerOptions<C>["onTransition"];

/** Tells `onTransition` of a change of state: an observer's error never changes the breaker. */
export function reportTransition<C>(onTransition: OnTransition<C>, transition: CircuitTransition, context: C | undefined): void {
  try {
    onTransition?.(transition, context);
  } catch {
    // The breaker's state stays as it is.
  }
}
