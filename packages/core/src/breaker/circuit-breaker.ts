import { type Clock, systemClock } from "../clock.js";
import { LruMap } from "../internal/lru-map.js";
import type { CircuitState } from "../outcome.js";
import type { Breaker } from "./breaker.js";
import {
  type BreakerSettings,
  breakerSettings,
  CIRCUIT_BREAKER_DEFAULTS,
  type CircuitBreakerOptions,
  type CircuitTransition,
} from "./circuit-breaker-options.js";
import type { CircuitDecision, CircuitPermit } from "./circuit-breaker-store.js";
import { type CircuitSnapshot, type Entry, entriesOf, parseSnapshot, snapshotOf } from "./circuit-snapshot.js";
import { CircuitTransitions } from "./circuit-transitions.js";

export type { CircuitBreakerOptions, CircuitDecision, CircuitPermit, CircuitSnapshot, CircuitTransition };
export { CIRCUIT_BREAKER_DEFAULTS };

/** The permit of every call admitted by a closed circuit. */
export const CLOSED_PERMIT: CircuitPermit = Object.freeze({ probe: 0 });
const CLOSED_DECISION: CircuitDecision = Object.freeze({ admitted: true, permit: CLOSED_PERMIT });

/**
 * Circuit breakers, one per key (a tool name), without timers: an open circuit turns half-open
 * lazily when the next call is admitted after its open time (`resetMs`, longer with `maxResetMs`;
 * reading `state()` reports it, and changes nothing). Half-open admits exactly one probe; every
 * other call is rejected at once with `retryAfterMs`. A probe holds its slot for at most `resetMs`
 * (its lease, whatever the open time): once the lease ran out, its result is stale and never
 * changes the breaker, in any state (generation counter and lease).
 * Every read and rejection of a key counts as a use of it for the LRU bound.
 *
 * A closed circuit opens after `threshold` consecutive failures, or, with `failureRate`, when the
 * failure rate of the calls in the sliding window (at least `minimumCalls` of them) reaches it. With
 * `maxResetMs`, each failed probe doubles the next open period, up to it.
 */
export class CircuitBreaker<C = unknown> implements BreakerSettings {
  readonly threshold: number;
  readonly resetMs: number;
  readonly maxResetMs: number | undefined;
  readonly failureRate: number | undefined;
  readonly minimumCalls: number;
  readonly windowMs: number;
  readonly maxKeys: number;
  private readonly clock: Clock;
  private readonly entries: LruMap<string, Entry>;
  private readonly transitions: CircuitTransitions<C>;

  constructor(options: CircuitBreakerOptions<C> = {}) {
    const settings = breakerSettings(options);
    this.threshold = settings.threshold;
    this.resetMs = settings.resetMs;
    this.maxResetMs = settings.maxResetMs;
    this.failureRate = settings.failureRate;
    this.minimumCalls = settings.minimumCalls;
    this.windowMs = settings.windowMs;
    this.maxKeys = settings.maxKeys;
    this.clock = options.clock ?? systemClock;
    // At the cap, a closed circuit goes first (least recently used), then one whose open time has
    // passed; an open one within its open time, a running probe's and an isolated one never go.
    this.entries = new LruMap(this.maxKeys, undefined, (_key, entry) => this.transitions.evictionRank(entry));
    this.transitions = new CircuitTransitions(this.entries, this, this.clock, options.onTransition);
  }

  /**
   * Keys held: a key that never failed takes no room; one whose failures a success reset stays, idle,
   * until evicted. With `failureRate`, every key called holds its window (successes count too).
   */
  get size(): number {
    return this.entries.size;
  }

  /**
   * The state of `key`, without side effects: an open circuit past its open time reads `half-open`
   * (the next call is the probe); an isolated one reads `open` (see `isIsolated`).
   */
  state(key: string): CircuitState {
    const entry = this.entries.size === 0 ? undefined : this.entries.get(key);
    if (entry === undefined) return "closed";
    if (entry.state === "open") return this.clock.now() - entry.openedAt >= entry.openMs ? "half-open" : "open";
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
    return entry === undefined || entry.state === "closed" ? undefined : this.transitions.rejectFor(entry, this.clock.now());
  }

  /** Admits a call (a permit to report back with) or rejects it with `retryAfterMs`. Never waits. */
  acquire(key: string, context?: C): CircuitDecision {
    const entry = this.entries.get(key);
    return entry === undefined || entry.state === "closed" ? CLOSED_DECISION : this.transitions.acquire(key, entry, context);
  }

  /**
   * The call succeeded: a closed circuit forgets its failures (for a call admitted while closed), or
   * records the success in its window; the live probe closes the circuit. A stale probe's success
   * changes nothing.
   */
  onSuccess(key: string, permit: CircuitPermit, context?: C): void {
    const entry = this.entries.size === 0 ? undefined : this.entries.peek(key);
    if (entry === undefined) {
      if (this.failureRate !== undefined && permit.probe === 0) this.transitions.record(key, undefined, false, context);
      return;
    }
    if (entry.state === "closed") {
      if (permit.probe !== 0) return; // a stale probe's late result
      // Reset in place: a tool that fails and recovers does not add and delete an entry per call.
      if (entry.window === undefined) entry.failures = 0;
      else this.transitions.record(key, entry, false, context);
    } else if (this.transitions.isLiveProbe(entry, permit)) this.transitions.probed(key, entry, false, context);
  }

  /**
   * The call failed: counts towards opening (or is recorded in the window); the live probe re-opens
   * the circuit, for twice the last open time with `maxResetMs` (up to it), else for `resetMs`.
   */
  onFailure(key: string, permit: CircuitPermit, context?: C): void {
    const entry = this.entries.peek(key);
    const now = this.clock.now();
    if (entry === undefined || entry.state === "closed") {
      if (permit.probe !== 0) return; // a stale probe's late result
      if (this.failureRate !== undefined) {
        this.transitions.record(key, entry, true, context);
        return;
      }
      const failures = (entry?.failures ?? 0) + 1;
      if (failures >= this.threshold) {
        if (!this.transitions.set(key, { state: "open", failures, openedAt: now, openMs: this.resetMs })) return;
        this.transitions.emit(key, "closed", "open", failures, this.resetMs, context);
      } else if (entry) {
        entry.failures = failures;
        this.transitions.touch(key, entry);
      } else {
        this.entries.add(key, { state: "closed", failures });
      }
      return;
    }
    if (this.transitions.isLiveProbe(entry, permit)) this.transitions.probed(key, entry, true, context);
  }

  /** The call ended in a way that says nothing about the tool's health (bad arguments): frees the live probe's slot. */
  onNeutral(key: string, permit: CircuitPermit): void {
    if (permit.probe === 0) return;
    const entry = this.entries.peek(key);
    if (entry !== undefined && this.transitions.isLiveProbe(entry, permit)) entry.probe = 0;
  }

  /** Holds the circuit open until `reset(key)`: calls are rejected with no promised time. */
  isolate(key: string, context?: C): void {
    this.transitions.force(key, this.state(key), "isolated", context);
  }

  /** Closes `key` (or every circuit) and forgets its failures. */
  reset(key?: string, context?: C): void {
    const keys = key === undefined ? [...this.entries.keys()] : [key];
    for (const each of keys) this.transitions.force(each, this.state(each), "closed", context);
  }

  /**
   * Versioned JSON of every tracked key: remaining times, not clock readings; an open period that
   * grew keeps its length (`openMs`); a failure-rate window keeps its buckets. Changes nothing.
   */
  snapshot(): CircuitSnapshot {
    return snapshotOf(this.entries.entries(), this.clock.now(), this);
  }

  /**
   * Replaces the tracked state with a snapshot's (older version-1 snapshots too). A half-open key
   * comes back half-open with no probe running; an open one with its remaining time and open
   * period's length; a window with its counts, which stop counting when they would have (to this
   * clock's bucket boundaries, never later). The whole snapshot is checked first: an invalid one
   * throws `TypeError` and changes nothing.
   */
  restore(snapshot: CircuitSnapshot): void {
    const restored = entriesOf(parseSnapshot(snapshot), this.clock.now(), this);
    this.entries.clear();
    for (const [key, entry] of restored) this.transitions.set(key, entry);
  }
}

/**
 * What a call asks of its breaker (`Breaker`, breaker.ts) from an in-memory `CircuitBreaker`: its
 * state changes when a method is called (a failure is recorded before the caller's first await).
 */
export class MemoryBreaker<C> implements Breaker<C> {
  constructor(private readonly breaker: CircuitBreaker<C>) {}

  get size(): number {
    return this.breaker.size;
  }
  isClosed(key: string): boolean {
    return this.breaker.isClosed(key);
  }
  peek(key: string): number | undefined {
    return this.breaker.peek(key);
  }
  state(key: string): CircuitState {
    return this.breaker.state(key);
  }
  isIsolated(key: string): boolean {
    return this.breaker.isIsolated(key);
  }
  async acquire(key: string, context?: C): Promise<CircuitDecision> {
    return this.breaker.acquire(key, context);
  }
  async onSuccess(key: string, permit: CircuitPermit, context?: C): Promise<void> {
    this.breaker.onSuccess(key, permit, context);
  }
  async onFailure(key: string, permit: CircuitPermit, context?: C): Promise<number | undefined> {
    this.breaker.onFailure(key, permit, context);
    return this.breaker.peek(key);
  }
  onNeutral(key: string, permit: CircuitPermit): void {
    this.breaker.onNeutral(key, permit);
  }
  async isolate(key: string, context?: C): Promise<void> {
    this.breaker.isolate(key, context);
  }
  async reset(key?: string, context?: C): Promise<void> {
    this.breaker.reset(key, context);
  }
  snapshot(): CircuitSnapshot {
    return this.breaker.snapshot();
  }
  restore(snapshot: CircuitSnapshot): void {
    this.breaker.restore(snapshot);
  }
}
