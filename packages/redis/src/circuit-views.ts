import type { CircuitState, Clock } from "@retry-reflect/core";

/** What this process knows of a circuit that is not closed; `until` on the local clock. */
export interface View {
  state: "open" | "half-open" | "isolated";
  until: number;
}

/** Circuits held in the local view at most (the least recently changed dropped beyond); also bounds the other per-key maps. */
export const MAX_VIEWS = 10_000;

/**
 * What one process knows of the fleet's circuits, from script replies, publishes and reads: the
 * circuits not closed (the local view), the version of each key's newest state applied (an older
 * reply or publish changes nothing), and the tools in a failing row (a success here tells Redis at once).
 */
export class CircuitViews {
  readonly views = new Map<string, View>();
  /** The version (server microseconds) of the newest state this process applied, per key. */
  private readonly versions = new Map<string, number>();
  /**
   * Keys known to be in a failing row (failures recorded here, or read from Redis), the one whose
   * failure came longest ago first; at most `maxFailingTools`.
   */
  readonly failing = new Set<string>();
  /** Keys that succeeded here while no failing row of them was known here (the next failure here resets the count first). */
  readonly succeeded = new Set<string>();

  constructor(
    private readonly clock: Clock,
    private readonly maxFailingTools: number,
  ) {}

  peek(key: string): number | undefined {
    const view = this.views.get(key);
    if (view === undefined) return undefined;
    if (view.state === "isolated") return Number.POSITIVE_INFINITY;
    const left = view.until - this.clock.now();
    return left > 0 ? left : undefined;
  }

  state(key: string): CircuitState {
    const view = this.views.get(key);
    if (view === undefined) return "closed";
    if (view.state === "isolated") return "open";
    return view.state === "open" && view.until > this.clock.now() ? "open" : "half-open";
  }

  /** A state change published by any replica (this one's included). */
  learn(message: string): void {
    let change: { k?: unknown; s?: unknown; r?: unknown; v?: unknown };
    try {
      change = JSON.parse(message) as typeof change;
    } catch {
      return;
    }
    if (typeof change.k !== "string" || !this.fresh(change.k, Number(change.v) || 0)) return;
    const remaining = typeof change.r === "number" ? change.r : 0;
    if (change.s === "closed") {
      this.views.delete(change.k);
      this.failing.delete(change.k);
    } else if (change.s === "failing") {
      // A row began elsewhere: a success here now ends it at once (and a failure here no longer resets it).
      this.succeeded.delete(change.k);
      this.fail(change.k);
    } else if (change.s === "open") this.see(change.k, "open", remaining);
    else if (change.s === "isolated") this.see(change.k, "isolated", 0);
  }

  /** What a read of the circuit said: its state, and whether it is in a failing row (a success here then tells Redis at once). */
  read(key: string, state: string, remaining: number, failures: number, version: number): void {
    if (!this.fresh(key, version)) return;
    this.sync(key, state, remaining);
    if (state === "closed" && failures > 0) this.fail(key);
    else if (state === "closed") this.failing.delete(key);
  }

  /** A reply that changed nothing still says the state: the local view follows it. */
  sync(key: string, state: string, remaining: number): void {
    if (state === "closed") this.views.delete(key);
    else if (state === "isolated") this.see(key, "isolated", 0);
    else this.see(key, state === "half" ? "half-open" : "open", Math.max(0, remaining));
  }

  /** Is `version` newer than the newest state of `key` applied here? Then it is the newest. */
  fresh(key: string, version: number): boolean {
    const last = this.versions.get(key);
    if (last !== undefined && version <= last) return false;
    this.versions.delete(key);
    this.versions.set(key, version);
    if (this.versions.size > MAX_VIEWS) this.versions.delete(this.versions.keys().next().value as string);
    return true;
  }

  /** A success here of a tool with no failing row known: remembered (bounded), told with its next failure. */
  succeed(key: string): void {
    if (this.views.size === 0 || !this.views.has(key)) this.succeeded.add(key);
    if (this.succeeded.size > MAX_VIEWS) this.succeeded.delete(this.succeeded.values().next().value as string);
  }

  /** Remembers that `key` is in a failing row here, as the newest; forgets the oldest beyond `maxFailingTools`. */
  fail(key: string): void {
    this.failing.delete(key);
    this.failing.add(key);
    if (this.failing.size > this.maxFailingTools) this.failing.delete(this.failing.values().next().value as string);
  }

  see(key: string, state: View["state"], remainingMs: number): void {
    this.views.delete(key);
    this.views.set(key, { state, until: this.clock.now() + remainingMs });
    if (this.views.size > MAX_VIEWS) this.views.delete(this.views.keys().next().value as string);
  }
}
