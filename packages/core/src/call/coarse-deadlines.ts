import { type Clock, systemClock, watchdogSignal } from "../clock.js";

// The default attempt time limit, kept without a timer per call: attempts are grouped by the
// moment their limit passes, rounded up to a tick (a second for the 60 s default), and one timer
// per plugin wakes at the earliest group. A group is a linked list (an attempt joins and leaves it
// in O(1), with no hashing of objects); nothing outlives the call. The limit is met within one
// tick (late, never early).

/** One attempt under watch: `expire` ends it with the timeout (the tool still running). */
export abstract class Watched {
  /** @internal The group's list. */
  prev: Watched | undefined = undefined;
  /** @internal */
  next: Watched | undefined = undefined;
  /** @internal The group it is in, while watched. */
  group: Group | undefined = undefined;

  abstract expire(): void;
}

interface Group {
  readonly at: number;
  first: Watched | undefined;
}

/** The tick of a limit: a twentieth of it, between 1 ms and 1 s. */
export function tickOf(limitMs: number): number {
  return Math.min(1000, Math.max(1, Math.floor(limitMs / 20)));
}

export class CoarseDeadlines {
  /** The groups, by the (tick-rounded) time their limit passes; a group goes when its time passes. */
  private readonly groups = new Map<number, Group>();
  /** The group calls join now: the last one made (most calls share it). */
  private last: Group | undefined = undefined;
  /** The timer's wake-up time and the controller that cancels it, while one is set. */
  private wakeAt = Number.POSITIVE_INFINITY;
  private cancel: AbortController | undefined = undefined;

  constructor(private readonly clock: Clock) {}

  /** Watches an attempt whose limit is `limitMs` from now. */
  watch(watched: Watched, limitMs: number): void {
    const tick = tickOf(limitMs);
    const at = Math.ceil((this.clock.now() + limitMs) / tick) * tick;
    let group = this.last !== undefined && this.last.at === at ? this.last : this.groups.get(at);
    if (group === undefined) {
      group = { at, first: undefined };
      this.groups.set(at, group);
      if (at < this.wakeAt) this.arm(at);
    }
    this.last = group;
    const first = group.first;
    watched.next = first;
    if (first !== undefined) first.prev = watched;
    group.first = watched;
    watched.group = group;
  }

  /** The attempt settled before its limit (or expired: then nothing is left to do). */
  leave(watched: Watched): void {
    const group = watched.group;
    if (group === undefined) return;
    const { prev, next } = watched;
    if (prev !== undefined) prev.next = next;
    else group.first = next;
    if (next !== undefined) next.prev = prev;
    watched.prev = watched.next = watched.group = undefined;
  }

  /** On the real clock the timer does not keep the process alive: a process whose calls are done exits. */
  private arm(at: number): void {
    this.cancel?.abort();
    const cancel = new AbortController();
    this.cancel = cancel;
    this.wakeAt = at;
    const wake = () => {
      if (this.cancel === cancel) this.fire();
    };
    const ms = Math.max(0, at - this.clock.now());
    if (this.clock === systemClock) {
      const timer = setTimeout(wake, ms);
      (timer as unknown as { unref?: () => void }).unref?.();
      cancel.signal.addEventListener("abort", () => clearTimeout(timer), { once: true });
    } else {
      this.clock.sleep(ms, watchdogSignal(cancel)).then(wake, () => {}); // cancelled: set again, earlier
    }
  }

  /** Every group whose time has passed ends its attempts; the timer is set for the next group, if any is watched. */
  private fire(): void {
    this.cancel = undefined;
    this.wakeAt = Number.POSITIVE_INFINITY;
    const now = this.clock.now();
    let next = Number.POSITIVE_INFINITY;
    for (const [at, group] of [...this.groups]) {
      if (at > now) {
        if (group.first !== undefined) next = Math.min(next, at);
        else this.groups.delete(at);
        continue;
      }
      this.groups.delete(at);
      if (this.last === group) this.last = undefined;
      // Unlinked first: an attempt that settles while it expires finds nothing to leave.
      const expired: Watched[] = [];
      for (let watched = group.first; watched !== undefined; watched = watched.next) expired.push(watched);
      group.first = undefined;
      for (const watched of expired) {
        watched.prev = watched.next = watched.group = undefined;
        watched.expire();
      }
    }
    if (next !== Number.POSITIVE_INFINITY) this.arm(next);
  }
}
