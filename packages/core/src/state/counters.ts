import { LruMap } from "../internal/lru-map.js";

/** The failures of one tool in one scope. */
export interface TrackedAttempts {
  readonly toolName: string;
  /** Failures recorded, in order: the number the last one took. */
  failures: number;
  /** The failures of the row the model's arguments could fix (reflected, not transient): `maxRetries` bounds them. */
  reflections: number;
  /** When the row began failing (its first failure, or a refusal by the tool's open circuit): the give-up time counts from here. */
  failingSince: number | undefined;
  /** No attempt starts before this time (`failedAt + backoff` after a reflection). */
  readyAt: number;
  /** The last delay used, for decorrelated jitter. */
  lastDelayMs: number | undefined;
  /** The code of the row's last failure: a permission denial counts for the breaker only after another. */
  lastCode: string | undefined;
  /** Set once the budget is spent in this scope: later calls stop at once with this failure's text. */
  exhausted: ExhaustedMark | undefined;
  /** With `repeatedCallLimit`: how often each exact call (its arguments' fingerprint) failed for a non-transient reason. */
  repeats: Map<string, number> | undefined;
  /** Attempts that took a place in a failing row and have not settled yet (see places.ts). */
  inFlight: number;
  /** Calls waiting for a place in the row: each is woken once, when an attempt settles or the row ends. */
  waiters: Set<() => void> | undefined;
}

/** What a scope whose budget is spent remembers: the failure that spent it (kept as `cause`). */
export interface ExhaustedMark {
  /** When the budget was spent (the clock's time of the failure that spent it). */
  readonly at: number;
  readonly message: string;
  readonly lastErrorCode: string;
  readonly lastError: unknown;
}

const SEPARATOR = "\u0000";

/** The key of the (scope, tool) counter, made once per call. */
export function counterKey(scope: string, toolName: string): string {
  return scope + SEPARATOR + toolName;
}

/** What carries an attempt number: a call's run. */
export interface Numbered {
  attempt: number;
}

/**
 * The only writers of a call's attempt number (its number in its scope, reflections counted):
 * `nextAttempt` gives it the number its failure would take (while an attempt runs, or when the call
 * is turned away); `recordFailure` counts a failure in the row and gives the call its number;
 * `lastAttempt` the row's last recorded number (a call stopped by a spent budget).
 */
export function nextAttempt(run: Numbered, tracked: TrackedAttempts | undefined): void {
  run.attempt = (tracked?.failures ?? 0) + 1;
}

/** Counts a failure in the row (`at`: when; `code`: its code) and numbers the call with it. */
export function recordFailure(run: Numbered, tracked: TrackedAttempts, at: number, code: string): void {
  tracked.failures += 1;
  tracked.failingSince ??= at;
  tracked.lastCode = code;
  run.attempt = tracked.failures;
}

/** A refusal that asks for other arguments: counted as a failure the model's arguments can fix. */
export function recordRefusal(run: Numbered, tracked: TrackedAttempts): void {
  tracked.failures += 1;
  tracked.reflections += 1;
  run.attempt = tracked.failures;
}

export function lastAttempt(run: Numbered, tracked: TrackedAttempts): void {
  run.attempt = tracked.failures;
}

/** The counters of one tool: how many are active (a failure counted, a stop, or a failed exact call remembered), and how many are held. */
interface ToolCounters {
  active: number;
  held: number;
  /** When a call of the tool last succeeded while it had counters (any scope): the tool was not down then. */
  lastSuccessAt: number;
}

/**
 * Attempt counters per (scope, tool), at most `max` of them in all (least recently used dropped;
 * every read counts as a use, so an exhausted scope that keeps being refused keeps its stop).
 * Nothing is stored for a tool that has not failed, and which tools have active counters is known
 * per tool: a healthy tool's call reads one small map, whatever failed elsewhere. A success resets
 * a counter in place (it stays, idle, until it is used again or evicted): a tool that fails and
 * recovers does not add and delete map entries on every call.
 */
export class AttemptTracker {
  private readonly counters: LruMap<string, TrackedAttempts>;
  private readonly perTool = new Map<string, ToolCounters>();

  constructor(max: number) {
    this.counters = new LruMap(max, (_key, tracked) => this.dropped(tracked));
  }

  /** Counters held, idle ones included. */
  get size(): number {
    return this.counters.size;
  }

  /** Does any scope hold an active counter of this tool? */
  hasCounters(toolName: string): boolean {
    if (this.perTool.size === 0) return false;
    const counts = this.perTool.get(toolName);
    return counts !== undefined && counts.active > 0;
  }

  /** The active counter of `key` (`counterKey(scope, toolName)`), if any. */
  get(key: string, toolName: string): TrackedAttempts | undefined {
    if (!this.hasCounters(toolName)) return undefined;
    const tracked = this.counters.get(key);
    return tracked !== undefined && isActive(tracked) ? tracked : undefined;
  }

  /** The counter to record a failure in (created or woken if needed, and marked most recently used). */
  entry(key: string, toolName: string): TrackedAttempts {
    const held = this.perTool.size === 0 ? undefined : this.counters.get(key);
    if (held !== undefined) {
      if (!isActive(held)) (this.perTool.get(toolName) as ToolCounters).active++;
      return held;
    }
    const tracked: TrackedAttempts = {
      toolName,
      failures: 0,
      reflections: 0,
      failingSince: undefined,
      readyAt: 0,
      lastDelayMs: undefined,
      lastCode: undefined,
      exhausted: undefined,
      repeats: undefined,
      inFlight: 0,
      waiters: undefined,
    };
    const counts = this.perTool.get(toolName);
    if (counts === undefined) this.perTool.set(toolName, { active: 1, held: 1, lastSuccessAt: Number.NEGATIVE_INFINITY });
    else {
      counts.active++;
      counts.held++;
    }
    this.counters.add(key, tracked);
    return tracked;
  }

  /** Forgets one counter's failures and stop (global tracking after exhaustion); its failed exact calls stay. */
  clear(key: string, toolName: string): void {
    if (!this.hasCounters(toolName)) return;
    const tracked = this.counters.peek(key);
    if (tracked !== undefined && isActive(tracked)) this.idle(tracked);
  }

  /**
   * A call of the tool succeeded (at `at`): the tool is not down, whatever failed in other scopes;
   * then the scope's row ends (`clearUnlessExhausted`).
   */
  succeeded(key: string, toolName: string, at: number): void {
    if (!this.hasCounters(toolName)) return;
    (this.perTool.get(toolName) as ToolCounters).lastSuccessAt = at;
    this.clearUnlessExhausted(key, toolName);
  }

  /** Did a call of the tool succeed, in any scope, since `since`? */
  succeededSince(toolName: string, since: number): boolean {
    const counts = this.perTool.get(toolName);
    return counts !== undefined && counts.lastSuccessAt >= since;
  }

  /** A success: the tool's count starts again, unless the scope's budget is spent (that stop is final for the scope); its failed exact calls stay. */
  clearUnlessExhausted(key: string, toolName: string): void {
    if (!this.hasCounters(toolName)) return;
    const tracked = this.counters.peek(key);
    if (tracked !== undefined && tracked.exhausted === undefined && (tracked.failures > 0 || tracked.failingSince !== undefined))
      this.idle(tracked);
  }

  /** The scopes in which `toolName`'s budget is spent, with when it was spent (the counters held; reading changes nothing). */
  exhaustedScopes(toolName: string): Array<{ readonly scope: string; readonly at: number }> {
    const found: Array<{ scope: string; at: number }> = [];
    if (!this.hasCounters(toolName)) return found;
    const suffix = SEPARATOR + toolName;
    for (const [key, tracked] of this.counters.entries()) {
      if (tracked.toolName === toolName && tracked.exhausted !== undefined && key.endsWith(suffix)) {
        found.push({ scope: key.slice(0, key.length - suffix.length), at: tracked.exhausted.at });
      }
    }
    return found;
  }

  /** Forgets every counter of a scope (an agent run that ended). */
  clearScope(scope: string): void {
    const prefix = scope + SEPARATOR;
    for (const [key, tracked] of [...this.counters.entries()]) {
      if (!key.startsWith(prefix)) continue;
      this.counters.delete(key);
      this.dropped(tracked);
    }
  }

  /**
   * The count starts again. The exact calls that failed (`repeatedCallLimit`) are remembered for the
   * scope all the same: a success of another call does not make them succeed. A counter that holds
   * only those stays active (its tool's calls read it), bounded like any counter.
   */
  private idle(tracked: TrackedAttempts): void {
    tracked.failures = 0;
    tracked.reflections = 0;
    tracked.failingSince = undefined;
    tracked.readyAt = 0;
    tracked.lastDelayMs = undefined;
    tracked.lastCode = undefined;
    tracked.exhausted = undefined;
    if (!isActive(tracked)) (this.perTool.get(tracked.toolName) as ToolCounters).active--;
    wakeWaiters(tracked); // the row ended: the calls waiting for a place in it run
  }

  /** A counter left the map (evicted, or its scope cleared). */
  private dropped(tracked: TrackedAttempts): void {
    wakeWaiters(tracked); // they check again, against whatever counter replaces this one
    const counts = this.perTool.get(tracked.toolName);
    if (counts === undefined) return;
    if (isActive(tracked)) counts.active--;
    if (--counts.held === 0) this.perTool.delete(tracked.toolName);
  }
}

function isActive(tracked: TrackedAttempts): boolean {
  return tracked.failures > 0 || tracked.failingSince !== undefined || tracked.exhausted !== undefined || tracked.repeats !== undefined;
}

/** Wakes every call waiting for a place in the row (each checks again); later waiters wait for the next change. */
export function wakeWaiters(tracked: TrackedAttempts): void {
  const waiters = tracked.waiters;
  if (waiters === undefined) return;
  tracked.waiters = undefined;
  for (const wake of waiters) wake();
}
