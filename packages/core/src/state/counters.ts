import { abortReason } from "../clock.js";
import { LruMap } from "../internal/lru-map.js";

/** The failures of one tool in one scope. */
export interface TrackedAttempts {
  readonly toolName: string;
  /** Failures recorded, in order: the number the last one took. */
  failures: number;
  /** Failures the model's arguments could fix (not transient): `maxRetries` bounds them. */
  reflections: number;
  /** When the row began failing (its first failure, or an open circuit's refusal): the give-up time counts from here. */
  failingSince: number | undefined;
  /** No attempt starts before this time (`failedAt + backoff` after a reflection). */
  readyAt: number;
  lastDelayMs: number | undefined;
  /** The code of the row's last failure: a permission denial counts for the breaker only after another. */
  lastCode: string | undefined;
  /** Set once the budget is spent in this scope: later calls stop at once with this failure's text. */
  exhausted: ExhaustedMark | undefined;
  /** With `repeatedCallLimit`: how often each exact call (its arguments' fingerprint) failed for a non-transient reason. */
  repeats: Map<string, number> | undefined;
  /** Attempts that took a place in the failing row and have not settled yet (`reserveInRow`). */
  inFlight: number;
  /** Calls waiting for a place in the row: each is woken once, when an attempt settles or the row ends. */
  waiters: Set<() => void> | undefined;
}

/** What a scope whose budget is spent remembers: when, and the failure that spent it (kept as `cause`). */
export interface ExhaustedMark {
  readonly at: number;
  readonly message: string;
  readonly lastErrorCode: string;
  readonly lastError: unknown;
}

const NEW_ROW = {
  failures: 0,
  reflections: 0,
  failingSince: undefined,
  readyAt: 0,
  lastDelayMs: undefined,
  lastCode: undefined,
  exhausted: undefined,
} as const;

const SEPARATOR = "\u0000";

export function counterKey(scope: string, toolName: string): string {
  return scope + SEPARATOR + toolName;
}

type Numbered = { attempt: number }; // a call's run

/** The only writers of a call's attempt number: `nextAttempt`, the number its failure would take; `recordFailure`; `lastAttempt`. */
export function nextAttempt(run: Numbered, tracked: TrackedAttempts | undefined): void {
  run.attempt = (tracked?.failures ?? 0) + 1;
}

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

type ToolCounters = { active: number; held: number; lastSuccessAt: number }; // active: with a failure, a stop or a failed exact call

/**
 * Attempt counters per (scope, tool), at most `max` (least recently used dropped; a read is a use).
 * Nothing is stored for a tool that has not failed; a success resets a counter in place (idle).
 */
export class AttemptTracker {
  private readonly counters: LruMap<string, TrackedAttempts>;
  private readonly perTool = new Map<string, ToolCounters>();

  constructor(max: number) {
    this.counters = new LruMap(max, (_key, tracked) => this.dropped(tracked));
  }

  get size(): number {
    return this.counters.size;
  }

  hasCounters(toolName: string): boolean {
    const counts = this.perTool.get(toolName);
    return counts !== undefined && counts.active > 0;
  }

  get(key: string, toolName: string): TrackedAttempts | undefined {
    if (!this.hasCounters(toolName)) return undefined;
    const tracked = this.counters.get(key);
    return tracked !== undefined && isActive(tracked) ? tracked : undefined;
  }

  /** The counter to record a failure in (created or woken if needed, and marked most recently used). */
  entry(key: string, toolName: string): TrackedAttempts {
    const held = this.counters.get(key);
    if (held !== undefined) {
      if (!isActive(held)) (this.perTool.get(toolName) as ToolCounters).active++;
      return held;
    }
    const tracked: TrackedAttempts = { toolName, ...NEW_ROW, repeats: undefined, inFlight: 0, waiters: undefined };
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
  clear(key: string): void {
    const tracked = this.counters.peek(key);
    if (tracked !== undefined && isActive(tracked)) this.idle(tracked);
  }

  /** A call of the tool succeeded (at `at`): the tool is not down, whatever failed elsewhere; the scope's row ends. */
  succeeded(key: string, toolName: string, at: number): void {
    if (!this.hasCounters(toolName)) return;
    (this.perTool.get(toolName) as ToolCounters).lastSuccessAt = at;
    this.clearUnlessExhausted(key);
  }

  succeededSince(toolName: string, since: number): boolean {
    const counts = this.perTool.get(toolName);
    return counts !== undefined && counts.lastSuccessAt >= since;
  }

  /** A success: the tool's count starts again, unless the scope's budget is spent (that stop is final for the scope); its failed exact calls stay. */
  clearUnlessExhausted(key: string): void {
    const tracked = this.counters.peek(key);
    if (tracked !== undefined && tracked.exhausted === undefined && (tracked.failures > 0 || tracked.failingSince !== undefined))
      this.idle(tracked);
  }

  /** The scopes in which `toolName`'s budget is spent, and when (reading changes nothing). */
  exhaustedScopes(toolName: string): Array<{ readonly scope: string; readonly at: number }> {
    const found: Array<{ scope: string; at: number }> = [];
    const suffix = SEPARATOR + toolName;
    for (const [key, tracked] of this.counters.entries()) {
      if (tracked.toolName === toolName && tracked.exhausted !== undefined)
        found.push({ scope: key.slice(0, -suffix.length), at: tracked.exhausted.at });
    }
    return found;
  }

  clearScope(scope: string): void {
    const prefix = scope + SEPARATOR;
    for (const [key, tracked] of [...this.counters.entries()]) {
      if (!key.startsWith(prefix)) continue;
      this.counters.delete(key);
      this.dropped(tracked);
    }
  }

  /** The count starts again; the failed exact calls (`repeatedCallLimit`) stay remembered, and with them the counter active. */
  private idle(tracked: TrackedAttempts): void {
    Object.assign(tracked, NEW_ROW);
    if (!isActive(tracked)) (this.perTool.get(tracked.toolName) as ToolCounters).active--;
    wakeWaiters(tracked); // the row ended: the calls waiting for a place in it run
  }

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
function wakeWaiters(tracked: TrackedAttempts): void {
  const waiters = tracked.waiters;
  if (waiters === undefined) return;
  tracked.waiters = undefined;
  for (const wake of waiters) wake();
}

/**
 * Takes a place in a failing row for one attempt: false once its failures plus its attempts in flight
 * reach `maxRetries + 1` (the call waits, `roomInRow`); a row with no attempt in flight always has room.
 */
export function reserveInRow(tracked: TrackedAttempts, maxRetries: number): boolean {
  if (tracked.inFlight > 0 && tracked.failures + tracked.inFlight > maxRetries) return false;
  tracked.inFlight++;
  return true;
}

export function releaseInRow(tracked: TrackedAttempts): void {
  tracked.inFlight--;
  wakeWaiters(tracked);
}

/** Resolves when an attempt of the row settles, or the row ends; rejects with the abort reason as soon as `signal` aborts. */
export function roomInRow(tracked: TrackedAttempts, signal: AbortSignal | undefined): Promise<void> {
  if (signal?.aborted) return Promise.reject(abortReason(signal));
  return new Promise<void>((resolve, reject) => {
    let waiters = tracked.waiters;
    if (waiters === undefined) {
      waiters = new Set();
      tracked.waiters = waiters;
    }
    const onAbort = (): void => {
      waiters.delete(wake);
      reject(abortReason(signal as AbortSignal));
    };
    const wake = (): void => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    };
    waiters.add(wake);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

/** Takes a slot of the tool in `running` (attempts running now, per tool): false when `limit` attempts of it are running. */
export function takeSlot(running: Map<string, number>, toolName: string, limit: number): boolean {
  const count = running.get(toolName) ?? 0;
  if (count >= limit) return false;
  running.set(toolName, count + 1);
  return true;
}

export function releaseSlot(running: Map<string, number>, toolName: string): void {
  const count = (running.get(toolName) ?? 1) - 1;
  if (count > 0) running.set(toolName, count);
  else running.delete(toolName);
}
