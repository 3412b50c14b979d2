import { type Clock, systemClock } from "../clock.js";
import { LruMap } from "../internal/lru-map.js";
import type { CircuitState } from "../outcome.js";
import type { Breaker } from "./breaker.js";
import { breakerSettings, type CircuitBreakerOptions, type CircuitTransition, reportTransition } from "./circuit-breaker-options.js";
import type { CircuitDecision, CircuitPermit } from "./circuit-breaker-store.js";
import { type CircuitSnapshot, type Entry, entriesOf, parseSnapshot, snapshotOf } from "./circuit-snapshot.js";
import { bucketOf, FailureWindow, totals } from "./failure-window.js";

export type { CircuitBreakerOptions, CircuitDecision, CircuitPermit, CircuitSnapshot, CircuitTransition };

/** The permit of every call admitted by a closed circuit. */
export const CLOSED_PERMIT: CircuitPermit = Object.freeze({ probe: 0 });

/**
 * Circuit breakers, one per key (a tool name), without timers. A closed circuit opens after
 * `threshold` consecutive failures, or, with `failureRate`, when the failure rate of the calls in
 * the sliding window (at least `minimumCalls` of them) reaches it. An open circuit turns half-open
 * lazily when the next call is admitted after its open time (`resetMs`; with `maxResetMs`, each
 * failed probe doubles it, up to that). Half-open admits exactly one probe, which holds its slot for
 * at most `resetMs` (its lease): after that its result is stale and never changes the breaker.
 * Every read and rejection of a key counts as a use of it for the LRU bound.
 */
export class CircuitBreaker<C = unknown> {
  // Declared, not initialised: the constructor copies them from the checked settings.
  declare readonly threshold: number;
  declare readonly resetMs: number;
  declare readonly maxResetMs: number | undefined;
  declare readonly failureRate: number | undefined;
  declare readonly minimumCalls: number;
  declare readonly windowMs: number;
  declare readonly maxKeys: number;
  private readonly clock: Clock;
  private readonly onTransition: CircuitBreakerOptions<C>["onTransition"];
  private readonly entries: LruMap<string, Entry>;
  /** The last probe given out: a permit holds the generation it was given. */
  private generation = 0;

  constructor(options: CircuitBreakerOptions<C> = {}) {
    Object.assign(this, breakerSettings(options));
    this.clock = options.clock ?? systemClock;
    this.onTransition = options.onTransition;
    // At the cap, closed circuits go first, then those that would admit a probe; those rejecting calls never go.
    this.entries = new LruMap(this.maxKeys, undefined, (_key, entry) =>
      entry.state === "closed" ? 0 : this.rejectFor(entry) === undefined ? 1 : Number.POSITIVE_INFINITY,
    );
  }

  /** Keys held: one that never failed takes none; one a success reset stays, idle, until evicted; with `failureRate`, every key called. */
  get size(): number {
    return this.entries.size;
  }

  /** Without side effects: an open circuit past its open time reads `half-open` (the next call is the probe); an isolated one `open`. */
  state(key: string): CircuitState {
    const entry = this.entries.get(key);
    if (entry === undefined) return "closed";
    if (entry.state === "isolated") return "open";
    if (entry.state === "open") return this.rejectFor(entry) === undefined ? "half-open" : "open";
    return entry.state;
  }

  /** Is `key` held open by `isolate()` (until `reset()`)? */
  isIsolated(key: string): boolean {
    return this.entries.peek(key)?.state === "isolated";
  }

  /** Without side effects: is `key`'s circuit closed (calls run freely)? */
  isClosed(key: string): boolean {
    return this.state(key) === "closed";
  }

  /** Would a call be rejected now, and for how long (`Infinity` while isolated)? Changes no state. */
  peek(key: string): number | undefined {
    const entry = this.entries.get(key);
    return entry === undefined ? undefined : this.rejectFor(entry);
  }

  /** Admits a call (a permit to report back with) or rejects it with `retryAfterMs`. Never waits. */
  acquire(key: string, context?: C): CircuitDecision {
    const entry = this.entries.get(key);
    if (entry === undefined || entry.state === "closed") return { admitted: true, permit: CLOSED_PERMIT };
    if (entry.state === "isolated") return { admitted: false, retryAfterMs: Number.POSITIVE_INFINITY, state: "open" };
    const retryAfterMs = this.rejectFor(entry);
    if (retryAfterMs !== undefined) return { admitted: false, retryAfterMs, state: entry.state };
    const probe = ++this.generation;
    this.entries.set(key, { state: "half-open", failures: entry.failures, probe, probeStartedAt: this.clock.now(), openMs: entry.openMs });
    if (entry.state === "open") this.emit(key, "open", "half-open", entry.failures, entry.openMs, context);
    return { admitted: true, permit: { probe } };
  }

  /**
   * The call succeeded: the live probe closes the circuit; a closed circuit forgets its failures (or
   * records it in its window). Any other result is stale (a late probe's, or a call admitted while
   * closed that ends after the circuit opened) and changes nothing, here and in `onFailure`.
   */
  onSuccess(key: string, permit: CircuitPermit, context?: C): void {
    const entry = this.entries.peek(key);
    if (entry !== undefined && this.isLiveProbe(entry, permit)) {
      this.entries.delete(key);
      this.emit(key, "half-open", "closed", entry.failures, this.resetMs, context);
    } else if (permit.probe === 0 && (entry === undefined || entry.state === "closed")) {
      if (this.failureRate !== undefined) this.record(key, entry, false, context);
      else if (entry !== undefined) entry.failures = 0; // in place: a tool that fails and recovers adds and deletes no entry per call
    }
  }

  /** The call failed: the live probe re-opens the circuit; a closed circuit counts it towards opening (or records it in its window). */
  onFailure(key: string, permit: CircuitPermit, context?: C): void {
    const entry = this.entries.peek(key);
    if (entry !== undefined && this.isLiveProbe(entry, permit)) {
      const openMs = this.maxResetMs === undefined ? this.resetMs : Math.min(entry.openMs * 2, this.maxResetMs);
      this.open(key, "half-open", entry.failures + 1, openMs, context);
    } else if (permit.probe === 0 && (entry === undefined || entry.state === "closed")) {
      const failures = (entry?.failures ?? 0) + 1;
      if (this.failureRate !== undefined) this.record(key, entry, true, context);
      else if (failures >= this.threshold) this.open(key, "closed", failures, this.resetMs, context);
      else this.entries.set(key, { state: "closed", failures });
    }
  }

  /** The call ended in a way that says nothing about the tool's health (bad arguments): frees the live probe's slot. */
  onNeutral(key: string, permit: CircuitPermit): void {
    const entry = this.entries.peek(key);
    if (entry !== undefined && this.isLiveProbe(entry, permit)) entry.probe = 0;
  }

  /** Holds the circuit open until `reset(key)`: calls are rejected with no promised time. */
  isolate(key: string, context?: C): void {
    this.force(key, "isolated", context);
  }

  /** Closes `key` (or every circuit) and forgets its failures. */
  reset(key?: string, context?: C): void {
    for (const each of key === undefined ? [...this.entries.keys()] : [key]) this.force(each, "closed", context);
  }

  /** Versioned JSON of every tracked key: remaining times, not clock readings; grown open periods and windows too. Changes nothing. */
  snapshot(): CircuitSnapshot {
    return snapshotOf(this.entries.entries(), this.clock.now(), this);
  }

  /**
   * Replaces the tracked state with a snapshot's (a half-open key comes back with no probe running).
   * The whole snapshot is checked first: an invalid one throws `TypeError` and changes nothing.
   */
  restore(snapshot: CircuitSnapshot): void {
    const restored = entriesOf(parseSnapshot(snapshot), this.clock.now(), this);
    this.entries.clear();
    for (const [key, entry] of restored) this.entries.set(key, entry);
  }

  /** How long `entry` rejects calls from now: open, its remaining time; half-open, its probe's lease; isolated, `Infinity`. */
  private rejectFor(entry: Entry): number | undefined {
    const now = this.clock.now();
    if (entry.state === "isolated") return Number.POSITIVE_INFINITY;
    if (entry.state === "open") {
      const remaining = entry.openedAt + entry.openMs - now;
      return remaining > 0 ? remaining : undefined;
    }
    if (entry.state !== "half-open" || entry.probe === 0 || now - entry.probeStartedAt >= this.resetMs) return undefined;
    return Math.max(1, entry.probeStartedAt + this.resetMs - now);
  }

  /** Is `permit` the probe now running, within its lease? Only its result may move a circuit that is not closed. */
  private isLiveProbe(entry: Entry, permit: CircuitPermit): entry is Extract<Entry, { state: "half-open" }> {
    return entry.state === "half-open" && permit.probe !== 0 && entry.probe === permit.probe && this.rejectFor(entry) !== undefined;
  }

  /** Records a closed call in its failure-rate window (made on the key's first call); opens once `minimumCalls` calls reach the rate. */
  private record(key: string, entry: Extract<Entry, { state: "closed" }> | undefined, failed: boolean, context: C | undefined): void {
    const bucket = bucketOf(this.clock.now(), this.windowMs);
    const window = entry?.window ?? new FailureWindow(bucket);
    window.record(bucket, 1, failed ? 1 : 0);
    const [calls, failures] = totals(window.liveBuckets(bucket));
    if (calls >= this.minimumCalls && failures / calls >= (this.failureRate ?? 1))
      this.open(key, "closed", failures, this.resetMs, context);
    else this.entries.set(key, entry ?? { state: "closed", failures: 0, window });
  }

  /** Opens `key` for `openMs`; no event when the registry is full of circuits that may not go (the key stays closed, untracked). */
  private open(key: string, from: CircuitState, failures: number, openMs: number, context: C | undefined): void {
    if (this.entries.set(key, { state: "open", failures, openedAt: this.clock.now(), openMs })) {
      this.emit(key, from, "open", failures, openMs, context);
    }
  }

  /** `isolate` (kept whatever the cap) or `reset` of one key, reported when the state it reads changes. */
  private force(key: string, to: "isolated" | "closed", context: C | undefined): void {
    const from = this.state(key);
    const entry = this.entries.peek(key);
    const live = entry?.state === "closed" ? entry.window?.liveBuckets(bucketOf(this.clock.now(), this.windowMs)) : undefined;
    const failures = live === undefined ? (entry?.failures ?? 0) : totals(live)[1];
    if (to === "isolated") this.entries.set(key, { state: "isolated", failures }, true);
    else this.entries.delete(key);
    const reported = to === "isolated" ? "open" : "closed";
    if (from !== reported) this.emit(key, from, reported, failures, this.resetMs, context);
  }

  private emit(key: string, from: CircuitState, to: CircuitState, failures: number, resetMs: number, context: C | undefined): void {
    reportTransition(this.onTransition, { key, from, to, failures, resetMs }, context);
  }
}

/** The in-memory `CircuitBreaker` as a call's `Breaker`: its state changes when a method is called, before the caller's first await. */
export class MemoryBreaker<C> implements Breaker<C> {
  constructor(private readonly breaker: CircuitBreaker<C>) {}

  get size(): number {
    return this.breaker.size;
  }
  readonly peek = (key: string) => this.breaker.peek(key);
  readonly state = (key: string) => this.breaker.state(key);
  readonly isIsolated = (key: string) => this.breaker.isIsolated(key);
  readonly acquire = async (key: string, context?: C) => this.breaker.acquire(key, context);
  readonly onSuccess = async (key: string, permit: CircuitPermit, context?: C) => this.breaker.onSuccess(key, permit, context);
  readonly onFailure = async (key: string, permit: CircuitPermit, context?: C) => {
    this.breaker.onFailure(key, permit, context);
    return this.breaker.peek(key);
  };
  readonly onNeutral = (key: string, permit: CircuitPermit) => this.breaker.onNeutral(key, permit);
  readonly isolate = async (key: string, context?: C) => this.breaker.isolate(key, context);
  readonly reset = async (key?: string, context?: C) => this.breaker.reset(key, context);
  readonly snapshot = () => this.breaker.snapshot();
  readonly restore = (snapshot: CircuitSnapshot) => this.breaker.restore(snapshot);
}
