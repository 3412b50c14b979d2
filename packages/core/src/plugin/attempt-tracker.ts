import { LruMap } from "../internal/lru-map.js";

/** Consecutive failures of one tool in one scope. */
export interface TrackedAttempts {
  failures: number;
  /** No attempt starts before this time (`failedAt + backoff` after a reflection). */
  readyAt: number;
  /** The last delay used, for decorrelated jitter. */
  lastDelayMs: number | undefined;
  /** Set once retries are exhausted in this scope: later calls stop at once with this outcome's text. */
  exhausted: { readonly message: string; readonly lastErrorCode: string; readonly lastError: unknown } | undefined;
}

const SEPARATOR = "\u0000";

/**
 * Attempt counters per (scope, tool), at most `max` of them in all (least recently used dropped;
 * every read counts as a use, so an exhausted scope that keeps being refused keeps its stop).
 * Nothing is stored for a tool that has not failed, so the success path only reads, and not even
 * that while no counter exists.
 */
export class AttemptTracker {
  private readonly counters: LruMap<string, TrackedAttempts>;

  constructor(max: number) {
    this.counters = new LruMap(max);
  }

  get size(): number {
    return this.counters.size;
  }

  get(scope: string, toolName: string): TrackedAttempts | undefined {
    return this.counters.size === 0 ? undefined : this.counters.get(scope + SEPARATOR + toolName);
  }

  /** The counter to record a failure in (created if needed, and marked most recently used). */
  entry(scope: string, toolName: string): TrackedAttempts {
    const key = scope + SEPARATOR + toolName;
    let tracked = this.counters.get(key);
    if (tracked === undefined) {
      tracked = { failures: 0, readyAt: 0, lastDelayMs: undefined, exhausted: undefined };
      this.counters.set(key, tracked);
    }
    return tracked;
  }

  /** A success: the tool's count starts again. */
  clear(scope: string, toolName: string): void {
    if (this.counters.size !== 0) this.counters.delete(scope + SEPARATOR + toolName);
  }

  /** A success: the tool's count starts again, unless the scope's budget is spent (that stop is final for the scope). */
  clearUnlessExhausted(scope: string, toolName: string): void {
    if (this.counters.size === 0) return;
    const key = scope + SEPARATOR + toolName;
    if (this.counters.peek(key)?.exhausted === undefined) this.counters.delete(key);
  }

  /** Forgets every counter of a scope (an agent run that ended). */
  clearScope(scope: string): void {
    const prefix = scope + SEPARATOR;
    for (const key of [...this.counters.keys()]) {
      if (key.startsWith(prefix)) this.counters.delete(key);
    }
  }
}
