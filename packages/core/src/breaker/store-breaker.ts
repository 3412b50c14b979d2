import type { Clock } from "../clock.js";
import type { CircuitState } from "../outcome.js";
import type { Breaker } from "./breaker.js";
import { CircuitBreaker, CLOSED_PERMIT } from "./circuit-breaker.js";
import { type CircuitTransition, type OnTransition, reportTransition } from "./circuit-breaker-options.js";
import type {
  CircuitAdmission,
  CircuitBreakerStore,
  CircuitDecision,
  CircuitPermit,
  CircuitResult,
  CircuitStoreSettings,
} from "./circuit-breaker-store.js";
import type { CircuitSnapshot } from "./circuit-snapshot.js";
import { LocalRate, type RateSettings } from "./local-rate.js";

/** A store operation that threw or rejected, with the call it was for. */
export type StoreFault<C> = (operation: "acquire" | "record", error: unknown, key: string, context: C | undefined) => void;

/**
 * One tool's breaker settings over a shared `CircuitBreakerStore`: transitions the store reports
 * become circuit events, a store fault a `store_error`. Nothing here rejects.
 *
 * The stand-in (`local`, an in-memory breaker with the store's settings) takes the results the store
 * could not take, so the circuit opens, half-opens and closes here while the store cannot answer. A
 * circuit it holds open rejects calls here, store or not, until its open time is over. Then the
 * store is asked first; only its "closed" (which, for a store that needs no I/O on a closed circuit,
 * says nothing of its health) lets the stand-in take its own probe. Any other answer, or a stand-in
 * probe's failure the store heard, hands the circuit back to the store. A failure waits for the
 * store's answer, so a hung store costs a failure up to its own timeout, until the stand-in opens.
 *
 * With `rate`, the rate is judged here (`LocalRate`): the store hears only the failure that brings
 * the window to the rate, with a threshold of 1, so that it opens the fleet's circuit. Probes,
 * re-opens and closing are the store's, as with the consecutive count.
 */
export class StoreBreaker<C> implements Breaker<C> {
  private readonly local: CircuitBreaker<C>;
  /** The probes the stand-in let through: their results are its own, not the store's. */
  private readonly probes = new WeakSet<CircuitPermit>();
  private readonly rate: LocalRate | undefined;
  /** The settings sent to the store (a failure-rate breaker's threshold is 1: the failure sent is the one that opens). */
  private readonly settings: CircuitStoreSettings;
  /** Set while the stand-in hands a circuit back to the store: its local closing is no event. */
  private quiet = false;
  /** Set while the stand-in takes a failure-rate breaker's opening failure: the failures of the window that opened it. */
  private opening: number | undefined;

  constructor(
    private readonly store: CircuitBreakerStore,
    settings: CircuitStoreSettings,
    private readonly onTransition: OnTransition<C>,
    private readonly onFault: StoreFault<C>,
    clock: Clock,
    maxKeys: number,
    rate?: RateSettings,
  ) {
    this.settings = rate === undefined ? settings : { ...settings, threshold: 1 };
    const report = (transition: CircuitTransition, context: C | undefined) => this.report(transition, context, this.opening);
    this.local = new CircuitBreaker<C>({ ...this.settings, maxKeys, clock, onTransition: report });
    const share = store.shareBudget?.bind(store);
    this.rate = rate && new LocalRate(rate, clock, maxKeys, share, (key, error) => this.onFault("record", error, key, undefined));
  }

  get size(): number {
    return (typeof this.store.size === "number" ? this.store.size : 0) + this.local.size + (this.rate?.size ?? 0);
  }

  isClosed(key: string): boolean {
    return this.store.isClosed(key) && this.local.isClosed(key);
  }

  /** With a failure-rate breaker, a circuit read as not closed drops this process's window of it. */
  peek(key: string): number | undefined {
    const openFor = this.local.peek(key) ?? this.store.peek(key);
    if (openFor !== undefined) this.rate?.forget(key);
    return openFor;
  }

  state(key: string): CircuitState {
    if (this.local.peek(key) !== undefined) return this.local.state(key);
    const fleet = this.store.state(key);
    return fleet === "closed" ? this.local.state(key) : fleet;
  }

  isIsolated(key: string): boolean {
    return this.store.peek(key) === Number.POSITIVE_INFINITY;
  }

  async acquire(key: string, context?: C): Promise<CircuitDecision> {
    const standingIn = !this.local.isClosed(key);
    if (standingIn && this.local.peek(key) !== undefined) return this.localAcquire(key, context);
    let admission: CircuitAdmission;
    try {
      admission = await this.store.acquire(key, this.settings);
      if (typeof admission !== "object" || admission === null || typeof admission.admitted !== "boolean") {
        throw new TypeError(`acquire returned ${String(admission)}`);
      }
    } catch (error) {
      return this.fallback(error, key, context);
    }
    this.report(admission.transition, context, undefined);
    const notClosed = !admission.admitted || admission.permit.probe !== 0;
    if (notClosed) this.rate?.forget(key);
    if (!standingIn || this.local.isClosed(key)) return admission;
    // The stand-in's open time is over: the fleet's state rules, unless the store says only "closed".
    if (!notClosed) return this.localAcquire(key, context);
    this.handBack(key);
    return admission;
  }

  onSuccess(key: string, permit: CircuitPermit, context?: C): Promise<void> {
    return this.record(key, permit, "success", context);
  }

  async onFailure(key: string, permit: CircuitPermit, context?: C): Promise<number | undefined> {
    await this.record(key, permit, "failure", context);
    return this.peek(key);
  }

  /** Only a probe's slot is at stake: told to the store without waiting (a stand-in probe's, to the stand-in). */
  onNeutral(key: string, permit: CircuitPermit): void {
    if (this.probes.has(permit)) this.local.onNeutral(key, permit);
    else if (permit.probe !== 0) void this.record(key, permit, "neutral", undefined);
  }

  /** Once the store holds it isolated, the stand-in lets go of it (an isolation is the fleet's). */
  async isolate(key: string): Promise<void> {
    await this.store.isolate(key);
    this.handBack(key);
  }

  /** Closes the stand-in's circuit at once (with its event), and the store's. */
  async reset(key?: string, context?: C): Promise<void> {
    this.local.reset(key, context);
    await this.store.reset(key);
  }

  /** A shared store's circuits live in the store, not in this snapshot. */
  snapshot(): CircuitSnapshot {
    return { version: 1, breakers: {} };
  }

  restore(snapshot: CircuitSnapshot): void {
    if (Object.keys(snapshot.breakers).length > 0) {
      throw new TypeError("circuits.restore: these circuits live in the circuitBreakerStore; a snapshot cannot restore them");
    }
  }

  /**
   * A success is applied to the stand-in at once (it forgets the failures counted there). A stand-in
   * probe's result goes to the store as a closed circuit's call (the store knows nothing of the
   * stand-in's probes); its failure, once the store heard it, hands the circuit back to the store.
   */
  private async record(key: string, permit: CircuitPermit, result: CircuitResult, context: C | undefined): Promise<void> {
    let opening: number | undefined;
    if (this.rate !== undefined && permit.probe === 0) {
      opening = this.rate.opens(key, result, this);
      if (opening === undefined) return;
    }
    const ownProbe = this.probes.has(permit);
    if (result === "success") this.local.onSuccess(key, ownProbe ? permit : CLOSED_PERMIT, context);
    let transition: CircuitTransition | undefined;
    try {
      transition = await this.store.record(key, ownProbe ? CLOSED_PERMIT : permit, result, this.settings);
    } catch (error) {
      this.onFault("record", error, key, context);
      if (result === "failure") this.standIn(key, permit, opening, context);
      return;
    } finally {
      if (opening !== undefined) this.rate?.sent(key);
    }
    if (result === "failure" && ownProbe) this.handBack(key);
    this.report(transition, context, opening);
  }

  /**
   * A failure the store could not take: it counts toward the stand-in's threshold; a stand-in
   * probe's re-opens; so does the failure of the store's own probe (the fleet's circuit was
   * half-open: as in memory, a failed probe opens the circuit again at once).
   */
  private standIn(key: string, permit: CircuitPermit, opening: number | undefined, context: C | undefined): void {
    this.opening = opening;
    if (this.probes.has(permit)) this.local.onFailure(key, permit, context);
    else {
      const failures = permit.probe === 0 ? 1 : this.local.threshold;
      for (let i = 0; i < failures && this.local.isClosed(key); i++) this.local.onFailure(key, CLOSED_PERMIT, context);
    }
    this.opening = undefined;
  }

  /** The stand-in's decision; the probes it lets through are remembered as its own. */
  private localAcquire(key: string, context: C | undefined): CircuitDecision {
    const decision = this.local.acquire(key, context);
    if (decision.admitted && decision.permit.probe !== 0) this.probes.add(decision.permit);
    return decision;
  }

  /** The store could not answer: the stand-in decides while it holds the circuit, else the store's local view. */
  private fallback(error: unknown, key: string, context: C | undefined): CircuitDecision {
    this.onFault("acquire", error, key, context);
    if (!this.local.isClosed(key)) return this.localAcquire(key, context);
    let openFor: number | undefined;
    try {
      openFor = this.store.peek(key);
    } catch {
      openFor = undefined;
    }
    return openFor === undefined ? { admitted: true, permit: CLOSED_PERMIT } : { admitted: false, retryAfterMs: openFor, state: "open" };
  }

  /** Hands `key` back to the store: the fleet's state rules from now on (no event: nothing moved fleet-wide). */
  private handBack(key: string): void {
    this.quiet = true;
    this.local.reset(key);
    this.quiet = false;
  }

  /** Reports the store's or the stand-in's transition; a failure-rate breaker's opening with the failures of its window. */
  private report(transition: CircuitTransition | undefined, context: C | undefined, opening: number | undefined): void {
    if (this.quiet || transition === undefined) return;
    const reported = opening !== undefined && transition.to === "open" ? { ...transition, failures: opening } : transition;
    reportTransition(this.onTransition, reported, context);
  }
}
