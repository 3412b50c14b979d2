import type { CallInfo, CircuitState } from "../events/events.js";
import type { CircuitBreaker, CircuitSnapshot } from "./circuit-breaker.js";

/**
 * The plugin's circuits, as operators use them (`plugin.circuits`): read a state, isolate or reset
 * a circuit, save and restore them all. Nothing here can record a call's result: only calls do.
 * Keys are tool names (or what `circuitBreakerKey` returns).
 */
export class Circuits {
  /** @internal Made by the plugin. */
  constructor(private readonly breaker: CircuitBreaker<CallInfo>) {}

  /** `"closed"`, `"open"` or `"half-open"` (an open circuit past its reset time: the next call is the probe). Reading changes nothing. An isolated circuit reads `"open"`. */
  state(key: string): CircuitState {
    return this.breaker.state(key);
  }

  /** Is the circuit held open by `isolate()` until `reset()`? */
  isIsolated(key: string): boolean {
    return this.breaker.isIsolated(key);
  }

  /** Holds a circuit open until `reset(key)`: calls fail fast, and the model is told the tool is disabled, with no promised time. */
  isolate(key: string): void {
    this.breaker.isolate(key);
  }

  /** Closes one circuit (or every one) and forgets its failures. */
  reset(key?: string): void {
    this.breaker.reset(key);
  }

  /** Versioned JSON of every tracked circuit (remaining open time, not clock readings). */
  snapshot(): CircuitSnapshot {
    return this.breaker.snapshot();
  }

  /** Replaces every circuit with a snapshot's; an invalid snapshot throws `TypeError` and changes nothing. */
  restore(snapshot: CircuitSnapshot): void {
    this.breaker.restore(snapshot);
  }

  /** Circuits held (a tool that never failed takes no room; one that recovered keeps a small idle entry until evicted). */
  get size(): number {
    return this.breaker.size;
  }
}
