import type { Clock } from "../clock.js";
import type { LruMap } from "../internal/lru-map.js";
import type { CircuitState } from "../outcome.js";
import { type BreakerSettings, type CircuitTransition, reportTransition } from "./circuit-breaker-options.js";
import type { CircuitDecision, CircuitPermit } from "./circuit-breaker-store.js";
import type { Entry } from "./circuit-snapshot.js";
import { bucketOf, FailureWindow } from "./failure-window.js";

type ClosedEntry = Extract<Entry, { state: "closed" }>;
type OpenEntry = Extract<Entry, { state: "open" }>;
type HalfOpenEntry = Extract<Entry, { state: "half-open" }>;

/**
 * The moves of a `CircuitBreaker`'s keys between states, on its LRU-bounded entries: open to
 * half-open, the probe's slot (a generation counter), the failure-rate record, each write of an
 * entry, and the report of every change of state to `onTransition`. The breaker decides when a
 * move happens; these make it.
 */
export class CircuitTransitions<C> {
  private generation = 0;

  constructor(
    private readonly entries: LruMap<string, Entry>,
    private readonly settings: BreakerSettings,
    private readonly clock: Clock,
    private readonly onTransition: ((transition: CircuitTransition, context: C | undefined) => void) | undefined,
  ) {}

  /** A circuit that is not closed: admits the probe when it is due, else rejects the call with `retryAfterMs`. */
  acquire(key: string, entry: Exclude<Entry, ClosedEntry>, context: C | undefined): CircuitDecision {
    const now = this.clock.now();
    if (entry.state === "isolated") return { admitted: false, retryAfterMs: Number.POSITIVE_INFINITY, state: "open" };
    const retryAfterMs = this.rejectFor(entry, now);
    if (retryAfterMs !== undefined) return { admitted: false, retryAfterMs, state: entry.state };
    return this.takeProbe(key, entry.state === "open" ? this.halfOpen(key, entry, context) : entry, now);
  }

  /** How long a circuit that is not closed rejects calls: open, its remaining time; half-open, its probe's lease; isolated, `Infinity`. */
  rejectFor(entry: Exclude<Entry, ClosedEntry>, now: number): number | undefined {
    if (entry.state === "isolated") return Number.POSITIVE_INFINITY;
    if (entry.state === "open") {
      const remaining = entry.openedAt + entry.openMs - now;
      return remaining > 0 ? remaining : undefined;
    }
    const { resetMs } = this.settings;
    return entry.probe !== 0 && now - entry.probeStartedAt < resetMs ? Math.max(1, entry.probeStartedAt + resetMs - now) : undefined;
  }

  /** The live probe's result: a success closes the circuit; a failure re-opens it, for twice the last open time with `maxResetMs` (up to it). */
  probed(key: string, entry: HalfOpenEntry, failed: boolean, context: C | undefined): void {
    const { resetMs, maxResetMs } = this.settings;
    if (!failed) {
      this.entries.delete(key);
      this.emit(key, "half-open", "closed", entry.failures, resetMs, context);
      return;
    }
    const failures = entry.failures + 1;
    const openMs = maxResetMs === undefined ? resetMs : Math.min(entry.openMs * 2, maxResetMs);
    this.set(key, { state: "open", failures, openedAt: this.clock.now(), openMs });
    this.emit(key, "half-open", "open", failures, openMs, context);
  }

  /** `isolate` (held open until a reset) or `reset` (closed, its failures forgotten) of one key, reported when the state changes. */
  force(key: string, from: CircuitState, to: "isolated" | "closed", context: C | undefined): void {
    const failures = this.failuresOf(this.entries.peek(key));
    if (to === "isolated") this.set(key, { state: "isolated", failures }, true);
    else this.entries.delete(key);
    const reported = to === "isolated" ? "open" : "closed";
    if (from !== reported) this.emit(key, from, reported, failures, this.settings.resetMs, context);
  }

  /** Which entries may go to make room at the cap (see `LruMap`): 0 closed, 1 open past its open time or half-open with no live probe, else never. */
  evictionRank(entry: Entry): number {
    if (entry.state === "closed") return 0;
    if (entry.state === "isolated") return Number.POSITIVE_INFINITY;
    const now = this.clock.now();
    if (entry.state === "open") return now - entry.openedAt >= entry.openMs ? 1 : Number.POSITIVE_INFINITY;
    return this.rejectFor(entry, now) === undefined ? 1 : Number.POSITIVE_INFINITY;
  }

  /** Is `permit` the probe now running, within its lease? Only its result may move a half-open circuit. */
  isLiveProbe(entry: Entry, permit: CircuitPermit): entry is HalfOpenEntry {
    return (
      entry.state === "half-open" &&
      permit.probe !== 0 &&
      entry.probe === permit.probe &&
      this.clock.now() - entry.probeStartedAt < this.settings.resetMs
    );
  }

  halfOpen(key: string, open: OpenEntry, context: C | undefined): HalfOpenEntry {
    const { failures, openMs } = open;
    const entry: HalfOpenEntry = { state: "half-open", failures, probe: 0, probeStartedAt: 0, openMs };
    this.set(key, entry);
    this.emit(key, "open", "half-open", failures, openMs, context);
    return entry;
  }

  /**
   * Records a call admitted while closed in the failure-rate window (made on the key's first call)
   * and judges the rate once the window holds `minimumCalls` calls. Opening drops the window.
   */
  record(key: string, entry: ClosedEntry | undefined, failed: boolean, context: C | undefined): void {
    const now = this.clock.now();
    const bucket = bucketOf(now, this.settings.windowMs);
    const window = entry?.window ?? new FailureWindow(bucket);
    window.record(bucket, failed);
    if (window.calls >= this.settings.minimumCalls && window.failures / window.calls >= (this.settings.failureRate ?? 1)) {
      if (!this.set(key, { state: "open", failures: window.failures, openedAt: now, openMs: this.settings.resetMs })) return;
      this.emit(key, "closed", "open", window.failures, this.settings.resetMs, context);
    } else if (entry !== undefined && entry.window === window) {
      this.touch(key, entry);
    } else {
      this.set(key, { state: "closed", failures: 0, window });
    }
  }

  /** Failures an entry holds now: consecutive ones, or those in its window. */
  failuresOf(entry: Entry | undefined): number {
    if (entry === undefined) return 0;
    if (entry.state === "closed" && entry.window !== undefined)
      return entry.window.failuresAt(bucketOf(this.clock.now(), this.settings.windowMs));
    return entry.failures;
  }

  takeProbe(key: string, entry: HalfOpenEntry, now: number): CircuitDecision {
    entry.probe = ++this.generation;
    entry.probeStartedAt = now;
    this.touch(key, entry);
    return { admitted: true, permit: { probe: entry.probe } };
  }

  /** Stores `entry`; false when the registry is full of circuits that may not go (the key stays closed, untracked). `force`: kept anyway (a manual isolation). */
  set(key: string, entry: Entry, force = false): boolean {
    return this.entries.set(key, entry, force);
  }

  touch(key: string, entry: Entry): void {
    this.entries.touch(key, entry);
  }

  emit(key: string, from: CircuitState, to: CircuitState, failures: number, resetMs: number, context: C | undefined): void {
    if (this.onTransition !== undefined) reportTransition(this.onTransition, { key, from, to, failures, resetMs }, context);
  }
}
