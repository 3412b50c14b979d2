import { type Clock, systemClock } from "../clock.js";
import { InvalidOptionError } from "../errors/invalid-option-error.js";
import type { CircuitState } from "../events/events.js";
import { LruMap } from "../internal/lru-map.js";
import { type CircuitSnapshot, type Entry, entriesOf, parseSnapshot, snapshotOf } from "./circuit-snapshot.js";

export type { CircuitSnapshot };

/** Permission to run one call. `probe` is the half-open generation it holds, or 0. */
export interface CircuitPermit {
  readonly probe: number;
}

/**
 * `retryAfterMs` is `Infinity` for an isolated circuit: it opens again only with `reset()`.
 */
export type CircuitDecision =
  | { readonly admitted: true; readonly permit: CircuitPermit }
  | { readonly admitted: false; readonly retryAfterMs: number; readonly state: CircuitState };

export interface CircuitTransition {
  readonly key: string;
  readonly from: CircuitState;
  readonly to: CircuitState;
  /** Consecutive failures that led here. */
  readonly failures: number;
  readonly resetMs: number;
}

export interface CircuitBreakerOptions<C = unknown> {
  /** Consecutive failures that open a closed circuit. @default 5 */
  readonly threshold?: number;
  /** Open time before the next call is let through as a probe; also a hung probe's lease. @default 60_000 */
  readonly resetMs?: number;
  /** Most keys tracked; the least recently used entry is dropped beyond it. @default 10_000 */
  readonly maxKeys?: number;
  /** @default systemClock */
  readonly clock?: Clock;
  /** Called on every state change, with the context passed to the method that caused it. Must not throw. */
  readonly onTransition?: (transition: CircuitTransition, context: C | undefined) => void;
}

/** The permit of every call admitted by a closed circuit. */
export const CLOSED_PERMIT: CircuitPermit = Object.freeze({ probe: 0 });
const CLOSED_DECISION: CircuitDecision = Object.freeze({ admitted: true, permit: CLOSED_PERMIT });

/**
 * Circuit breakers, one per key (a tool name), without timers: an open circuit turns half-open
 * lazily when the next call is admitted after `resetMs` (reading `state()` reports it, and changes
 * nothing). Half-open admits exactly one probe; every other call is rejected at once with
 * `retryAfterMs`. A probe holds its slot for at most `resetMs` (its lease): once the lease ran out,
 * its result is stale and never changes the breaker, in any state (generation counter and lease).
 * Every read and rejection of a key counts as a use of it for the LRU bound.
 */
export class CircuitBreaker<C = unknown> {
  readonly threshold: number;
  readonly resetMs: number;
  readonly maxKeys: number;
  private readonly clock: Clock;
  private readonly onTransition: ((transition: CircuitTransition, context: C | undefined) => void) | undefined;
  private readonly entries: LruMap<string, Entry>;
  private generation = 0;

  constructor(options: CircuitBreakerOptions<C> = {}) {
    this.threshold = options.threshold ?? 5;
    this.resetMs = options.resetMs ?? 60_000;
    this.maxKeys = options.maxKeys ?? 10_000;
    if (!Number.isInteger(this.threshold) || this.threshold < 1)
      throw new InvalidOptionError("threshold", options.threshold, "an integer >= 1");
    if (!Number.isFinite(this.resetMs) || this.resetMs <= 0)
      throw new InvalidOptionError("resetMs", options.resetMs, "a finite number > 0");
    if (!Number.isInteger(this.maxKeys) || this.maxKeys < 1) throw new InvalidOptionError("maxKeys", options.maxKeys, "an integer >= 1");
    this.clock = options.clock ?? systemClock;
    this.onTransition = options.onTransition;
    this.entries = new LruMap(this.maxKeys);
  }

  /** Keys held: a key that never failed takes no room; one whose failures a success reset stays, idle, until evicted. */
  get size(): number {
    return this.entries.size;
  }

  /**
   * The state of `key`, without side effects: an open circuit past `resetMs` reads `half-open`
   * (the next call is the probe); an isolated one reads `open` (see `isIsolated`).
   */
  state(key: string): CircuitState {
    const entry = this.entries.get(key);
    if (entry === undefined) return "closed";
    if (entry.state === "open") return this.clock.now() - entry.openedAt >= this.resetMs ? "half-open" : "open";
    return entry.state === "isolated" ? "open" : entry.state;
  }

  /** Is `key` held open by `isolate()` (until `reset()`)? */
  isIsolated(key: string): boolean {
    return this.entries.peek(key)?.state === "isolated";
  }

  /** Without side effects: is `key`'s circuit closed (calls run freely)? */
  isClosed(key: string): boolean {
    if (this.entries.size === 0) return true;
    const entry = this.entries.get(key);
    return entry === undefined || entry.state === "closed";
  }

  /** Would a call be rejected now, and for how long (`Infinity` while isolated)? Changes no state. */
  peek(key: string): number | undefined {
    const entry = this.entries.get(key);
    if (entry === undefined || entry.state === "closed") return undefined;
    const now = this.clock.now();
    if (entry.state === "open") {
      const remaining = entry.openedAt + this.resetMs - now;
      return remaining > 0 ? remaining : undefined;
    }
    if (entry.state === "isolated") return Number.POSITIVE_INFINITY;
    return entry.probe !== 0 && now - entry.probeStartedAt < this.resetMs
      ? Math.max(1, entry.probeStartedAt + this.resetMs - now)
      : undefined;
  }

  /** Admits a call (a permit to report back with) or rejects it with `retryAfterMs`. Never waits. */
  acquire(key: string, context?: C): CircuitDecision {
    const entry = this.entries.get(key);
    if (entry === undefined || entry.state === "closed") return CLOSED_DECISION;
    const now = this.clock.now();
    if (entry.state === "isolated") return { admitted: false, retryAfterMs: Number.POSITIVE_INFINITY, state: "open" };
    if (entry.state === "open") {
      const remaining = entry.openedAt + this.resetMs - now;
      if (remaining > 0) return { admitted: false, retryAfterMs: remaining, state: "open" };
      return this.takeProbe(key, this.halfOpen(key, entry.failures, context), now);
    }
    if (entry.probe !== 0 && now - entry.probeStartedAt < this.resetMs) {
      return { admitted: false, retryAfterMs: Math.max(1, entry.probeStartedAt + this.resetMs - now), state: "half-open" };
    }
    return this.takeProbe(key, entry, now);
  }

  /**
   * The call succeeded: a closed circuit forgets its failures (for a call admitted while closed);
   * the live probe closes the circuit. A stale probe's success changes nothing.
   */
  onSuccess(key: string, permit: CircuitPermit, context?: C): void {
    const entry = this.entries.peek(key);
    if (entry === undefined) return;
    if (entry.state === "closed") {
      // Reset in place: a tool that fails and recovers does not add and delete an entry per call.
      if (permit.probe === 0) entry.failures = 0;
    } else if (this.isLiveProbe(entry, permit)) {
      this.entries.delete(key);
      this.emit(key, "half-open", "closed", entry.failures, context);
    }
  }

  /** The call failed: counts towards opening; the live probe re-opens the circuit (timer restarted). */
  onFailure(key: string, permit: CircuitPermit, context?: C): void {
    const entry = this.entries.peek(key);
    const now = this.clock.now();
    if (entry === undefined || entry.state === "closed") {
      if (permit.probe !== 0) return; // a stale probe's late result
      const failures = (entry?.failures ?? 0) + 1;
      if (failures >= this.threshold) {
        this.set(key, { state: "open", failures, openedAt: now });
        this.emit(key, "closed", "open", failures, context);
      } else if (entry) {
        entry.failures = failures;
        this.touch(key, entry);
      } else {
        this.entries.add(key, { state: "closed", failures });
      }
      return;
    }
    if (this.isLiveProbe(entry, permit)) {
      const failures = entry.failures + 1;
      this.set(key, { state: "open", failures, openedAt: now });
      this.emit(key, "half-open", "open", failures, context);
    }
  }

  /** The call ended in a way that says nothing about the tool's health (bad arguments): frees the live probe's slot. */
  onNeutral(key: string, permit: CircuitPermit): void {
    if (permit.probe === 0) return;
    const entry = this.entries.peek(key);
    if (entry !== undefined && this.isLiveProbe(entry, permit)) entry.probe = 0;
  }

  /** Holds the circuit open until `reset(key)`: calls are rejected with no promised time. */
  isolate(key: string, context?: C): void {
    const from = this.state(key);
    const failures = this.entries.peek(key)?.failures ?? 0;
    this.set(key, { state: "isolated", failures });
    if (from !== "open") this.emit(key, from, "open", failures, context);
  }

  /** Closes `key` (or every circuit) and forgets its failures. */
  reset(key?: string, context?: C): void {
    const keys = key === undefined ? [...this.entries.keys()] : [key];
    for (const each of keys) {
      const from = this.state(each);
      const failures = this.entries.peek(each)?.failures ?? 0;
      this.entries.delete(each);
      if (from !== "closed") this.emit(each, from, "closed", failures, context);
    }
  }

  /** Versioned JSON of every tracked key (remaining open time, not clock readings). */
  snapshot(): CircuitSnapshot {
    return snapshotOf(this.entries.entries(), this.clock.now(), this.resetMs);
  }

  /**
   * Replaces the tracked state with a snapshot's. A half-open key comes back half-open with no probe
   * running. The whole snapshot is checked first: an invalid one throws `TypeError` and changes nothing.
   */
  restore(snapshot: CircuitSnapshot): void {
    const restored = entriesOf(parseSnapshot(snapshot), this.clock.now(), this.resetMs);
    this.entries.clear();
    for (const [key, entry] of restored) this.set(key, entry);
  }

  /** Is `permit` the probe now running, within its lease? Only its result may move a half-open circuit. */
  private isLiveProbe(entry: Entry, permit: CircuitPermit): entry is Extract<Entry, { state: "half-open" }> {
    return (
      entry.state === "half-open" &&
      permit.probe !== 0 &&
      entry.probe === permit.probe &&
      this.clock.now() - entry.probeStartedAt < this.resetMs
    );
  }

  private halfOpen(key: string, failures: number, context: C | undefined): Extract<Entry, { state: "half-open" }> {
    const entry: Extract<Entry, { state: "half-open" }> = { state: "half-open", failures, probe: 0, probeStartedAt: 0 };
    this.set(key, entry);
    this.emit(key, "open", "half-open", failures, context);
    return entry;
  }

  private takeProbe(key: string, entry: Extract<Entry, { state: "half-open" }>, now: number): CircuitDecision {
    entry.probe = ++this.generation;
    entry.probeStartedAt = now;
    this.touch(key, entry);
    return { admitted: true, permit: { probe: entry.probe } };
  }

  private set(key: string, entry: Entry): void {
    this.entries.set(key, entry);
  }

  private touch(key: string, entry: Entry): void {
    this.entries.touch(key, entry);
  }

  private emit(key: string, from: CircuitState, to: CircuitState, failures: number, context: C | undefined): void {
    if (this.onTransition === undefined) return;
    try {
      this.onTransition({ key, from, to, failures, resetMs: this.resetMs }, context);
    } catch {
      // An observer's error never changes the breaker.
    }
  }
}
