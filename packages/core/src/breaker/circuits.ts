import type { CallInfo } from "../events/events.js";
import type { CircuitState } from "../outcome.js";
import type { Breaker } from "./breaker.js";
import { type CircuitSnapshot, parseSnapshot, type SavedBreaker } from "./circuit-snapshot.js";

/**
 * The plugin's circuits, as operators use them (`plugin.circuits`): read a state, isolate or reset
 * a circuit, save and restore them all. Nothing here can record a call's result: only calls do.
 * Keys are tool names (or what `circuitBreakerKey` returns). A tool whose policy has breaker
 * settings of its own has its own breaker; this view covers them all.
 */
export class Circuits {
  /** @internal Made by the plugin: its breakers (the plugin's first) and the breaker of a key. */
  constructor(
    private readonly breakers: readonly Breaker<CallInfo>[],
    private readonly breakerOf: (key: string) => Breaker<CallInfo>,
  ) {}

  /** `"closed"`, `"open"` or `"half-open"` (an open circuit past its reset time: the next call is the probe). Reading changes nothing. An isolated circuit reads `"open"`. */
  state(key: string): CircuitState {
    return this.holder(key).state(key);
  }

  /**
   * How long a call of `key` would be rejected from now, in ms (`Infinity` while isolated), or
   * undefined when a call would be let through (closed, or half-open with no probe running). Reading
   * changes nothing; with a `circuitBreakerStore`, this process's view.
   */
  retryAfterMs(key: string): number | undefined {
    return this.holder(key).peek(key);
  }

  /** Is the circuit held open by `isolate()` until `reset()`? */
  isIsolated(key: string): boolean {
    return this.holder(key).isIsolated(key);
  }

  /**
   * Holds a circuit open until `reset(key)`: calls fail fast, and the model is told the tool is
   * disabled, with no promised time. It goes to the breaker that holds the key (see `holder`). In
   * memory it holds at once; with a `circuitBreakerStore`, once the promise resolves.
   */
  isolate(key: string): Promise<void> {
    return this.holder(key).isolate(key);
  }

  /** Closes one circuit (or every one) and forgets its failures: in memory at once; with a `circuitBreakerStore`, once the promise resolves. */
  async reset(key?: string): Promise<void> {
    await Promise.all(this.breakers.map((breaker) => breaker.reset(key)));
  }

  /** Versioned JSON of every tracked circuit (remaining open time, not clock readings). */
  snapshot(): CircuitSnapshot {
    const breakers: Record<string, SavedBreaker> = {};
    for (const breaker of this.breakers) Object.assign(breakers, breaker.snapshot().breakers);
    return { version: 1, breakers };
  }

  /**
   * Replaces every circuit with a snapshot's (each key goes to its tool's breaker); an invalid
   * snapshot throws `TypeError` and changes nothing.
   */
  restore(snapshot: CircuitSnapshot): void {
    const parts = new Map(this.breakers.map((breaker) => [breaker, {} as Record<string, SavedBreaker>]));
    // Checked whole first: an invalid entry anywhere changes no breaker.
    for (const [key, saved] of parseSnapshot(snapshot)) (parts.get(this.breakerOf(key)) ?? {})[key] = saved;
    for (const [breaker, breakers] of parts) breaker.restore({ version: 1, breakers });
  }

  /** Circuits held (a tool that never failed takes no room; one that recovered keeps a small idle entry until evicted). */
  get size(): number {
    return this.breakers.reduce((size, breaker) => size + breaker.size, 0);
  }

  /**
   * The breaker that holds `key`: the one its tool uses when its circuit there is not closed, else
   * one where it is not closed (a `circuitBreakerKey` that is not a tool name, whose calls went to
   * a tool's own breaker), else the one its tool uses.
   */
  private holder(key: string): Breaker<CallInfo> {
    const own = this.breakerOf(key);
    if (this.breakers.length === 1 || own.state(key) !== "closed") return own;
    return this.breakers.find((breaker) => breaker.state(key) !== "closed") ?? own;
  }
}
