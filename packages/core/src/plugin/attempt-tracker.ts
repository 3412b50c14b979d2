import { LruMap } from "../internal/lru-map.js";

/** The failures of one tool in one scope. */
export interface TrackedAttempts {
  readonly toolName: string;
  /** Failures recorded, in order: the number the last one took. */
  failures: number;
  /** No attempt starts before this time (`failedAt + backoff` after a reflection). */
  readyAt: number;
  /** The last delay used, for decorrelated jitter. */
  lastDelayMs: number | undefined;
  /** Set once the budget is spent in this scope: later calls stop at once with this failure's text. */
  exhausted: ExhaustedMark | undefined;
}

/** What a scope whose budget is spent remembers: the failure that spent it (kept as `cause`). */
export interface ExhaustedMark {
  readonly message: string;
  readonly lastErrorCode: string;
  readonly lastError: unknown;
}

const SEPARATOR = "\u0000";

/**
 * Attempt counters per (scope, tool), at most `max` of them in all (least recently used dropped;
 * every read counts as a use, so an exhausted scope that keeps being refused keeps its stop).
 * Nothing is stored for a tool that has not failed, and which tools have counters is known per
 * tool: a healthy tool's call reads one small map, whatever failed elsewhere.
 */
export class AttemptTracker {
  private readonly counters: LruMap<string, TrackedAttempts>;
  /** How many scopes hold a counter of each tool. */
  private readonly perTool = new Map<string, number>();

  constructor(max: number) {
    this.counters = new LruMap(max, (_key, tracked) => this.forget(tracked.toolName));
  }

  get size(): number {
    return this.counters.size;
  }

  /** Does any scope hold a counter of this tool? */
  hasCounters(toolName: string): boolean {
    return this.perTool.size !== 0 && this.perTool.has(toolName);
  }

  get(scope: string, toolName: string): TrackedAttempts | undefined {
    return this.hasCounters(toolName) ? this.counters.get(scope + SEPARATOR + toolName) : undefined;
  }

  /** The counter to record a failure in (created if needed, and marked most recently used). */
  entry(scope: string, toolName: string): TrackedAttempts {
    const key = scope + SEPARATOR + toolName;
    let tracked = this.hasCounters(toolName) ? this.counters.get(key) : undefined;
    if (tracked === undefined) {
      tracked = { toolName, failures: 0, readyAt: 0, lastDelayMs: undefined, exhausted: undefined };
      this.perTool.set(toolName, (this.perTool.get(toolName) ?? 0) + 1);
      this.counters.set(key, tracked);
    }
    return tracked;
  }

  /** Forgets one counter (a success, or global tracking after exhaustion). */
  clear(scope: string, toolName: string): void {
    if (!this.hasCounters(toolName)) return;
    const key = scope + SEPARATOR + toolName;
    const tracked = this.counters.peek(key);
    if (tracked === undefined) return;
    this.counters.delete(key);
    this.forget(toolName);
  }

  /** A success: the tool's count starts again, unless the scope's budget is spent (that stop is final for the scope). */
  clearUnlessExhausted(scope: string, toolName: string): void {
    if (!this.hasCounters(toolName)) return;
    const tracked = this.counters.peek(scope + SEPARATOR + toolName);
    if (tracked !== undefined && tracked.exhausted === undefined) this.clear(scope, toolName);
  }

  /** Forgets every counter of a scope (an agent run that ended). */
  clearScope(scope: string): void {
    const prefix = scope + SEPARATOR;
    for (const [key, tracked] of [...this.counters.entries()]) {
      if (!key.startsWith(prefix)) continue;
      this.counters.delete(key);
      this.forget(tracked.toolName);
    }
  }

  private forget(toolName: string): void {
    const left = (this.perTool.get(toolName) ?? 1) - 1;
    if (left > 0) this.perTool.set(toolName, left);
    else this.perTool.delete(toolName);
  }
}
