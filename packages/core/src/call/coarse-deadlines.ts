import { type Clock, systemClock, watchdogSignal } from "../clock.js";

// The default attempt time limit, kept without a timer and without a clock read per call. An
// attempt joins the open group (a linked list: joined and left in O(1)); the plugin's one timer
// closes that group within a tick of its first attempt (a second for the 60 s default), and its
// limit runs from that moment: every attempt in it started before, so none is cut off early, and
// none more than a tick (plus the timer's own lateness) late. Closed groups wait in the order they
// closed, which is the order of their deadlines; nothing outlives the call.

/**
 * One attempt under watch: `expire` ends it with the timeout (the tool still running). The links
 * are the watcher's (start them `undefined`); an interface, not a base class, so that an attempt's
 * constructor stays one plain function.
 */
export interface Watched {
  /** @internal The group's list. */
  prev: Watched | undefined;
  /** @internal */
  next: Watched | undefined;
  /** @internal The group it is in, while watched. */
  group: Group | undefined;
  expire(): void;
}

export interface Group {
  /** When its attempts' limit passes: set when the group closes. */
  at: number;
  first: Watched | undefined;
  /** The group closed after this one. */
  later: Group | undefined;
}

/** The tick of a limit: a twentieth of it, between 1 ms and 1 s. */
export function tickOf(limitMs: number): number {
  return Math.min(1000, Math.max(1, Math.floor(limitMs / 20)));
}

export class CoarseDeadlines {
  private readonly tick: number;
  /** The group attempts join now, until the timer closes it. */
  private open: Group | undefined = undefined;
  /** The closed groups, earliest deadline first. */
  private oldest: Group | undefined = undefined;
  private newest: Group | undefined = undefined;
  /** The timer's wake-up time and the controller that cancels it, while one is set. */
  private wakeAt = Number.POSITIVE_INFINITY;
  private cancel: AbortController | undefined = undefined;

  constructor(
    private readonly clock: Clock,
    /** The limit of every attempt watched here. */
    readonly limitMs: number,
  ) {
    this.tick = tickOf(limitMs);
  }

  /** Watches an attempt whose limit starts now. */
  watch(watched: Watched): void {
    const group = this.open ?? this.opened();
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

  /** A new open group; the timer wakes within a tick to close it. */
  private opened(): Group {
    const group: Group = { at: Number.NaN, first: undefined, later: undefined };
    this.open = group;
    const closeAt = this.clock.now() + this.tick;
    if (closeAt < this.wakeAt) this.arm(closeAt);
    return group;
  }

  /** On the real clock the timer does not keep the process alive: a process whose calls are done exits. */
  private arm(at: number): void {
    this.cancel?.abort();
    const cancel = new AbortController();
    this.cancel = cancel;
    this.wakeAt = at;
    const wake = () => {
      if (this.cancel === cancel) this.wake();
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

  /** Closes the open group, ends the attempts of every group whose time has passed, and sets the timer for what is left. */
  private wake(): void {
    this.cancel = undefined;
    this.wakeAt = Number.POSITIVE_INFINITY;
    const now = this.clock.now();
    const open = this.open;
    this.open = undefined;
    if (open?.first !== undefined) {
      open.at = now + this.limitMs;
      if (this.newest === undefined) this.oldest = open;
      else this.newest.later = open;
      this.newest = open;
    }
    for (let group = this.oldest; group !== undefined && group.at <= now; group = this.oldest) {
      this.oldest = group.later;
      if (this.oldest === undefined) this.newest = undefined;
      // Unlinked first: an attempt that settles while it expires finds nothing to leave.
      const expired: Watched[] = [];
      for (let watched = group.first; watched !== undefined; watched = watched.next) expired.push(watched);
      group.first = undefined;
      for (const watched of expired) {
        watched.prev = watched.next = watched.group = undefined;
        watched.expire();
      }
    }
    // Groups whose attempts all settled are dropped without waiting for their time.
    while (this.oldest !== undefined && this.oldest.first === undefined) {
      this.oldest = this.oldest.later;
      if (this.oldest === undefined) this.newest = undefined;
    }
    // An attempt that expired may have started another (its observers run in `expire`): its group is open.
    const next = Math.min(
      this.oldest?.at ?? Number.POSITIVE_INFINITY,
      this.open === undefined ? Number.POSITIVE_INFINITY : now + this.tick,
    );
    if (next !== Number.POSITIVE_INFINITY && next < this.wakeAt) this.arm(next);
  }
}
