import type { CircuitState } from "../outcome.js";
import type { BreakerSettings } from "./circuit-breaker-options.js";
import { bucketOf, FailureWindow, WINDOW_BUCKETS } from "./failure-window.js";

/**
 * Versioned JSON of every tracked breaker: `snapshot()` output, `restore()` input. Times are
 * relative to the moment of the snapshot (remaining times), never clock readings. `openMs` and
 * `window` are optional: snapshots without them restore, and readers that do not know them ignore them.
 */
export interface CircuitSnapshot {
  readonly version: 1;
  readonly breakers: Readonly<Record<string, SavedBreaker>>;
}

/** One key's breaker in a snapshot. */
export interface SavedBreaker {
  state: CircuitState | "isolated";
  /** Consecutive failures; with a failure-rate window, the failures in it. */
  failures: number;
  /** Open: time left before the next call is the probe. */
  remainingMs?: number;
  /** Open or half-open: the current open period's length, when it grew past `resetMs` (`maxResetMs`). */
  openMs?: number;
  /** Closed, failure-rate breaker: the window's non-empty buckets, oldest first. */
  window?: SavedBucket[];
}

/** A bucket of a failure-rate window: its counts, and the time left before they stop counting. */
export interface SavedBucket {
  remainingMs: number;
  successes: number;
  failures: number;
}

/**
 * Per-key breaker data: a discriminated union of states. Closed keys with no failure have no entry
 * (without `failureRate`); a closed key of a failure-rate breaker holds its `window` (and
 * `failures` 0). `openMs` is the open period's length: `resetMs`, or more after failed probes.
 */
export type Entry =
  | { state: "closed"; failures: number; window?: FailureWindow }
  | { state: "open"; failures: number; openedAt: number; openMs: number }
  | { state: "half-open"; failures: number; probe: number; probeStartedAt: number; openMs: number }
  | { state: "isolated"; failures: number };

/** The snapshot of a breaker's entries at `now`. */
export function snapshotOf(entries: Iterable<[string, Entry]>, now: number, settings: BreakerSettings): CircuitSnapshot {
  const breakers: Record<string, SavedBreaker> = {};
  const grown = (openMs: number) => (openMs === settings.resetMs ? {} : { openMs });
  for (const [key, entry] of entries) {
    if (entry.state === "closed") {
      if (entry.window !== undefined) {
        const window = savedWindow(entry.window, now, settings.windowMs);
        if (window.length === 0) continue; // idle: nothing to carry over
        const failures = window.reduce((sum, bucket) => sum + bucket.failures, 0);
        breakers[key] = { state: "closed", failures, window };
      } else if (entry.failures > 0) {
        breakers[key] = { state: "closed", failures: entry.failures };
      }
    } else if (entry.state === "open") {
      const remainingMs = Math.max(0, entry.openedAt + entry.openMs - now);
      breakers[key] = { state: "open", failures: entry.failures, remainingMs, ...grown(entry.openMs) };
    } else if (entry.state === "half-open") {
      breakers[key] = { state: "half-open", failures: entry.failures, ...grown(entry.openMs) };
    } else {
      breakers[key] = { state: entry.state, failures: entry.failures };
    }
  }
  return { version: 1, breakers };
}

function savedWindow(window: FailureWindow, now: number, windowMs: number): SavedBucket[] {
  return window.liveBuckets(bucketOf(now, windowMs)).map(([index, calls, failures]) => ({
    remainingMs: ((index + WINDOW_BUCKETS) * windowMs) / WINDOW_BUCKETS - now,
    successes: calls - failures,
    failures,
  }));
}

/**
 * The entries a checked snapshot restores at `now`. An open period keeps its remaining time and
 * its length (bounded by this breaker's `resetMs` and `maxResetMs`). A window's buckets each stop
 * counting at the same moment, or up to one bucket earlier when this clock's bucket boundaries fall
 * elsewhere (never later). Across kinds of breaker, a window restores as its `failures` (consecutive
 * ones), and a count without a window as an empty window.
 */
export function entriesOf(saved: ReadonlyArray<[string, SavedBreaker]>, now: number, settings: BreakerSettings): Array<[string, Entry]> {
  const { resetMs, maxResetMs } = settings;
  const openMsOf = (openMs: number | undefined) => Math.min(Math.max(openMs ?? resetMs, resetMs), maxResetMs ?? resetMs);
  const entries: Array<[string, Entry]> = [];
  for (const [key, { state, failures, remainingMs, openMs: savedOpenMs, window }] of saved) {
    if (state === "closed") {
      if (settings.failureRate !== undefined) {
        const restored = restoredWindow(window ?? [], now, settings.windowMs);
        if (restored !== undefined) entries.push([key, { state: "closed", failures: 0, window: restored }]);
      } else if (failures > 0) {
        entries.push([key, { state: "closed", failures }]);
      }
    } else if (state === "open") {
      const openMs = openMsOf(savedOpenMs);
      entries.push([key, { state: "open", failures, openedAt: now - openMs + Math.min(openMs, remainingMs ?? openMs), openMs }]);
    } else if (state === "half-open") {
      entries.push([key, { state: "half-open", failures, probe: 0, probeStartedAt: now, openMs: openMsOf(savedOpenMs) }]);
    } else {
      entries.push([key, { state: "isolated", failures }]);
    }
  }
  return entries;
}

function restoredWindow(buckets: readonly SavedBucket[], now: number, windowMs: number): FailureWindow | undefined {
  const newest = bucketOf(now, windowMs);
  const window = new FailureWindow(newest);
  for (const { remainingMs, successes, failures } of buckets) {
    // The newest bucket whose counts stop counting no later than `now + remainingMs` (the epsilon
    // absorbs rounding, so that a round trip at the same bucket phase is exact).
    const endsAt = Math.floor(((now + remainingMs) * WINDOW_BUCKETS) / windowMs + 1e-6);
    const index = Math.min(newest, endsAt - WINDOW_BUCKETS);
    window.add(index, successes + failures, failures);
  }
  return window.liveBuckets(newest).length > 0 ? window : undefined;
}

const SNAPSHOT_STATES = new Set(["closed", "open", "half-open", "isolated"]);

/** Checks every entry of a snapshot, naming the first bad one; returns the entries to apply. */
export function parseSnapshot(snapshot: unknown): Array<[string, SavedBreaker]> {
  const fail = (what: string): never => {
    throw new TypeError(`CircuitBreaker.restore: ${what}`);
  };
  const shown = (value: unknown) => JSON.stringify(value) ?? String(value);
  if (typeof snapshot !== "object" || snapshot === null)
    fail(`expected a snapshot object, received ${snapshot === null ? "null" : typeof snapshot}`);
  const { version, breakers } = snapshot as { version?: unknown; breakers?: unknown };
  if (version !== 1) fail(`expected a snapshot with version 1, received ${shown(version)}`);
  if (typeof breakers !== "object" || breakers === null || Array.isArray(breakers))
    fail("expected `breakers` to be an object of breaker entries");
  const entries: Array<[string, SavedBreaker]> = [];
  for (const [key, saved] of Object.entries(breakers as Record<string, unknown>)) {
    const where = `for key ${JSON.stringify(key)}`;
    if (typeof saved !== "object" || saved === null)
      fail(`expected an entry object ${where}, received ${saved === null ? "null" : typeof saved}`);
    const { state, failures, remainingMs, openMs, window } = saved as Record<string, unknown>;
    if (typeof state !== "string" || !SNAPSHOT_STATES.has(state)) fail(`unknown state ${shown(state)} ${where}`);
    if (!isCount(failures)) fail(`expected \`failures\` to be an integer >= 0 ${where}, received ${shown(failures)}`);
    if (remainingMs !== undefined && !isDuration(remainingMs))
      fail(`expected \`remainingMs\` to be a finite number >= 0 ${where}, received ${shown(remainingMs)}`);
    if (openMs !== undefined && !(isDuration(openMs) && openMs > 0))
      fail(`expected \`openMs\` to be a finite number > 0 ${where}, received ${shown(openMs)}`);
    if (window !== undefined && !(Array.isArray(window) && window.every(isSavedBucket)))
      fail(`expected \`window\` to be an array of { remainingMs, successes, failures } buckets ${where}`);
    entries.push([key, { state, failures, remainingMs, openMs, window } as SavedBreaker]);
  }
  return entries;
}

const isCount = (value: unknown): value is number => typeof value === "number" && Number.isInteger(value) && value >= 0;
const isDuration = (value: unknown): value is number => typeof value === "number" && Number.isFinite(value) && value >= 0;

function isSavedBucket(value: unknown): value is SavedBucket {
  if (typeof value !== "object" || value === null) return false;
  const { remainingMs, successes, failures } = value as Record<string, unknown>;
  return isDuration(remainingMs) && isCount(successes) && isCount(failures);
}
