import type { Clock } from "../clock.js";
import type { CircuitState } from "../outcome.js";
import { CircuitBreaker, CLOSED_PERMIT } from "./circuit-breaker.js";
import type { CircuitTransition } from "./circuit-breaker-options.js";
import type { CircuitDecision, CircuitPermit, CircuitResult, CircuitStoreSettings } from "./circuit-breaker-store.js";

/**
 * The in-memory breaker that stands in for a `CircuitBreakerStore` that cannot answer (a fault, a
 * timeout, not connected): the results the store could not take are applied here, with the
 * store's settings, so the circuit opens at the threshold, half-opens and closes as an in-memory
 * breaker would. While it holds a circuit open, that circuit's calls are rejected here without
 * asking the store, whether the store answers again or not: an opening is never cut short. After
 * its open time the store is asked first; only when the store answers "closed" (which, for a store
 * that needs no I/O on a closed circuit, says nothing about its health) does this breaker take its
 * own probe. A store answer that says something else, or a stand-in probe's failure the store
 * heard, hands the circuit back to the store (forgotten here, silently: the fleet's state rules).
 */
export class LocalStandIn<C> {
  private readonly breaker: CircuitBreaker<C>;
  /** The probes this breaker let through: their results are its own, not the store's. */
  private readonly probes = new WeakSet<CircuitPermit>();
  /** Set while a circuit is handed back to the store: its local closing is no event. */
  private quiet = false;

  constructor(
    settings: CircuitStoreSettings,
    clock: Clock,
    maxKeys: number,
    onTransition: ((transition: CircuitTransition, context: C | undefined) => void) | undefined,
  ) {
    const { threshold, resetMs, maxResetMs } = settings;
    this.breaker = new CircuitBreaker<C>({
      threshold,
      resetMs,
      maxResetMs,
      maxKeys,
      clock,
      onTransition: onTransition && ((transition, context) => this.quiet || onTransition(transition, context)),
    });
  }

  /** Keys held here: circuits opened while the store could not answer, and failures counted toward one. */
  get size(): number {
    return this.breaker.size;
  }

  /** Does this breaker decide the key's calls (its circuit here is not closed)? */
  holds(key: string): boolean {
    return !this.breaker.isClosed(key);
  }

  /** How long a call is rejected here (open, or its probe running), or undefined. */
  peek(key: string): number | undefined {
    return this.breaker.peek(key);
  }

  state(key: string): CircuitState {
    return this.breaker.state(key);
  }

  /** Admits (closed; or the probe, after the open time) or rejects, as the in-memory breaker does. */
  acquire(key: string, context: C | undefined): CircuitDecision {
    const decision = this.breaker.acquire(key, context);
    if (decision.admitted && decision.permit.probe !== 0) this.probes.add(decision.permit);
    return decision;
  }

  /** Was `permit` given by this breaker (a stand-in probe)? */
  owns(permit: CircuitPermit): boolean {
    return permit.probe !== 0 && this.probes.has(permit);
  }

  /** A success forgets the failures counted here, store or no store; a stand-in probe's closes the circuit. */
  succeeded(key: string, permit: CircuitPermit, context: C | undefined): void {
    if (this.breaker.size > 0) this.breaker.onSuccess(key, this.owns(permit) ? permit : CLOSED_PERMIT, context);
  }

  /** Frees a stand-in probe's slot (its call said nothing about the tool's health). */
  neutral(key: string, permit: CircuitPermit): void {
    this.breaker.onNeutral(key, permit);
  }

  /**
   * A result the store could not take. A failure counts toward the threshold; a stand-in probe's
   * re-opens; so does the failure of the store's own probe (the fleet's circuit was half-open: as
   * in memory, a failed probe opens the circuit again at once).
   */
  stoodIn(key: string, permit: CircuitPermit, result: CircuitResult, context: C | undefined): void {
    if (result === "neutral") {
      if (this.owns(permit)) this.neutral(key, permit);
      return;
    }
    if (result === "success") return; // already applied by `succeeded`
    if (this.owns(permit)) {
      this.breaker.onFailure(key, permit, context);
      return;
    }
    const failures = permit.probe === 0 ? 1 : this.breaker.threshold;
    for (let i = 0; i < failures && this.breaker.isClosed(key); i++) this.breaker.onFailure(key, CLOSED_PERMIT, context);
  }

  /** Hands `key` back to the store: the fleet's state rules from now on (no event: nothing moved fleet-wide). */
  forget(key: string): void {
    if (this.breaker.size === 0) return;
    this.quiet = true;
    try {
      this.breaker.reset(key);
    } finally {
      this.quiet = false;
    }
  }

  /** An operator's reset: closes the local circuit too (with its event, as in memory). */
  reset(key: string | undefined, context: C | undefined): void {
    this.breaker.reset(key, context);
  }
}
