import type { CircuitState } from "../events/events.js";

/** Versioned JSON of every tracked breaker: `snapshot()` output, `restore()` input. */
export interface CircuitSnapshot {
  readonly version: 1;
  readonly breakers: Readonly<Record<string, { state: CircuitState | "isolated"; failures: number; remainingMs?: number }>>;
}

/** Per-key breaker data: a discriminated union of states. Closed keys with no failure have no entry. */
export type Entry =
  | { state: "closed"; failures: number }
  | { state: "open"; failures: number; openedAt: number }
  | { state: "half-open"; failures: number; probe: number; probeStartedAt: number }
  | { state: "isolated"; failures: number };

/** The snapshot of a breaker's entries at `now`. */
export function snapshotOf(entries: Iterable<[string, Entry]>, now: number, resetMs: number): CircuitSnapshot {
  const breakers: Record<string, SavedBreaker> = {};
  for (const [key, entry] of entries) {
    if (entry.state === "closed" && entry.failures === 0) continue; // idle: nothing to carry over
    if (entry.state === "open") {
      breakers[key] = { state: "open", failures: entry.failures, remainingMs: Math.max(0, entry.openedAt + resetMs - now) };
    } else {
      breakers[key] = { state: entry.state, failures: entry.failures };
    }
  }
  return { version: 1, breakers };
}

/** The entries a checked snapshot restores at `now` (a closed key without failures takes none). */
export function entriesOf(saved: ReadonlyArray<[string, SavedBreaker]>, now: number, resetMs: number): Array<[string, Entry]> {
  const entries: Array<[string, Entry]> = [];
  for (const [key, { state, failures, remainingMs }] of saved) {
    if (state === "closed") {
      if (failures > 0) entries.push([key, { state: "closed", failures }]);
    } else if (state === "open") {
      entries.push([key, { state: "open", failures, openedAt: now - resetMs + Math.min(resetMs, remainingMs ?? resetMs) }]);
    } else if (state === "half-open") {
      entries.push([key, { state: "half-open", failures, probe: 0, probeStartedAt: now }]);
    } else {
      entries.push([key, { state: "isolated", failures }]);
    }
  }
  return entries;
}

const SNAPSHOT_STATES = new Set(["closed", "open", "half-open", "isolated"]);

/** One checked entry of a snapshot. */
export type SavedBreaker = { state: CircuitState | "isolated"; failures: number; remainingMs?: number };

/** Checks every entry of a snapshot, naming the first bad one; returns the entries to apply. */
export function parseSnapshot(snapshot: unknown): Array<[string, SavedBreaker]> {
  const fail = (what: string): never => {
    throw new TypeError(`CircuitBreaker.restore: ${what}`);
  };
  if (typeof snapshot !== "object" || snapshot === null)
    fail(`expected a snapshot object, received ${snapshot === null ? "null" : typeof snapshot}`);
  const { version, breakers } = snapshot as { version?: unknown; breakers?: unknown };
  if (version !== 1) fail(`expected a snapshot with version 1, received ${JSON.stringify(version) ?? String(version)}`);
  if (typeof breakers !== "object" || breakers === null || Array.isArray(breakers))
    fail("expected `breakers` to be an object of breaker entries");
  const entries: Array<[string, SavedBreaker]> = [];
  for (const [key, saved] of Object.entries(breakers as Record<string, unknown>)) {
    const where = `for key ${JSON.stringify(key)}`;
    if (typeof saved !== "object" || saved === null)
      fail(`expected an entry object ${where}, received ${saved === null ? "null" : typeof saved}`);
    const { state, failures, remainingMs } = saved as { state?: unknown; failures?: unknown; remainingMs?: unknown };
    if (typeof state !== "string" || !SNAPSHOT_STATES.has(state)) fail(`unknown state ${JSON.stringify(state) ?? String(state)} ${where}`);
    if (typeof failures !== "number" || !Number.isInteger(failures) || failures < 0)
      fail(`expected \`failures\` to be an integer >= 0 ${where}, received ${JSON.stringify(failures) ?? String(failures)}`);
    if (remainingMs !== undefined && (typeof remainingMs !== "number" || !Number.isFinite(remainingMs) || remainingMs < 0)) {
      fail(`expected \`remainingMs\` to be a finite number >= 0 ${where}, received ${JSON.stringify(remainingMs) ?? String(remainingMs)}`);
    }
    entries.push([
      key,
      {
        state: state as SavedBreaker["state"],
        failures: failures as number,
        ...(remainingMs === undefined ? {} : { remainingMs: remainingMs as number }),
      },
    ]);
  }
  return entries;
}
