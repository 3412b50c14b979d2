import { type Clock, systemClock } from "../clock.js";
import { InvalidOptionError } from "../errors/invalid-option-error.js";
import type { RetryReflectObserver } from "../events/events.js";
import type { IdempotencyStore } from "./idempotency-store.js";

/** The options of a `RequestGuard`: a host passes its users' options through (an MCP server's `withIdempotency`). */
export interface RequestGuardOptions {
  /** Where results are kept by key: an `InMemoryIdempotencyStore` for one process, a shared store (Redis) for a fleet. */
  readonly store: IdempotencyStore;
  /** How long a completed result is kept, in ms. @default 86_400_000 (a day) */
  readonly ttlMs?: number;
  /**
   * How long a running request holds its key without renewal, in ms. The lease is renewed every
   * half lease while the write runs (stores with `extend`: the in-memory and Redis stores), so a
   * write may take longer; a process that dies stops renewing, and its key frees within one lease.
   * @default 30_000
   */
  readonly leaseMs?: number;
  /**
   * How long a request whose key is running elsewhere (another process on a shared store) waits
   * for that result, re-reading the store after 50 ms, then twice as long each time up to 1 s,
   * before it is refused `IN_PROGRESS`, in ms. A request whose key is running in this process
   * waits for it for as long as it runs (it is alive here: running beside it could do it twice),
   * until the request is cancelled. @default 30_000
   */
  readonly waitMs?: number;
  /**
   * The largest result stored, in bytes of its JSON text: a larger one is returned to its caller,
   * not stored (a `store_error` with `reason: "too_large"`), and its key is freed, so that a retry
   * runs again. `0` stores no result. @default 1_048_576 (1 MiB)
   */
  readonly maxResultBytes?: number;
  /** For the waits, the lease renewals and the events' time. @default the system clock */
  readonly clock?: Clock;
  /** Told of `idempotent_replay`, `idempotency_conflict` and `store_error` (`consoleLogger()`, the otel observer). @default [] */
  readonly observers?: readonly RetryReflectObserver[];
}

/** `RequestGuardOptions` with every default applied. */
export interface ResolvedRequestGuardOptions {
  readonly store: IdempotencyStore;
  readonly ttlMs: number;
  readonly leaseMs: number;
  readonly waitMs: number;
  readonly maxResultBytes: number;
  readonly clock: Clock;
  readonly observers: readonly RetryReflectObserver[];
}

/** The defaults of `RequestGuardOptions` (the plugin's for the options both have). */
const REQUEST_GUARD_DEFAULTS = {
  ttlMs: 86_400_000,
  leaseMs: 30_000,
  waitMs: 30_000,
  maxResultBytes: 1_048_576,
} as const;

/** Checks the options once, naming the option and the value of the first that is wrong (`InvalidOptionError`). */
export function resolveRequestGuardOptions(options: RequestGuardOptions): ResolvedRequestGuardOptions {
  if (typeof options !== "object" || options === null) throw new InvalidOptionError("options", options, "an object with a `store`");
  const { store, clock = systemClock, observers = [] } = options;
  if (!isStore(store)) throw new InvalidOptionError("store", store, "an IdempotencyStore (begin, complete and release functions)");
  if (typeof clock !== "object" || clock === null || typeof clock.now !== "function" || typeof clock.sleep !== "function") {
    throw new InvalidOptionError("clock", clock, "a Clock (now and sleep functions)");
  }
  if (!Array.isArray(observers) || !observers.every((observer) => typeof observer === "object" && observer !== null)) {
    throw new InvalidOptionError("observers", observers, "an array of observer objects");
  }
  return {
    store,
    ttlMs: positive("ttlMs", options.ttlMs, REQUEST_GUARD_DEFAULTS.ttlMs),
    leaseMs: positive("leaseMs", options.leaseMs, REQUEST_GUARD_DEFAULTS.leaseMs),
    waitMs: positive("waitMs", options.waitMs, REQUEST_GUARD_DEFAULTS.waitMs),
    maxResultBytes: bytes("maxResultBytes", options.maxResultBytes, REQUEST_GUARD_DEFAULTS.maxResultBytes),
    clock,
    observers,
  };
}

function isStore(value: unknown): value is IdempotencyStore {
  if (typeof value !== "object" || value === null) return false;
  const store = value as Record<string, unknown>;
  return typeof store.begin === "function" && typeof store.complete === "function" && typeof store.release === "function";
}

function positive(name: string, value: unknown, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== "number" || !Number.isFinite(value) || value <= 0) throw new InvalidOptionError(name, value, "a finite number > 0");
  return value;
}

function bytes(name: string, value: unknown, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== "number" || !Number.isSafeInteger(value) || value < 0) throw new InvalidOptionError(name, value, "an integer >= 0");
  return value;
}
