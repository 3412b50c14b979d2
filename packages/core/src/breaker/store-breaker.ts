import { type Clock, systemClock } from "../clock.js";
import type { CircuitState } from "../outcome.js";
import type { Breaker } from "./breaker.js";
import { CLOSED_PERMIT } from "./circuit-breaker.js";
import { CIRCUIT_BREAKER_DEFAULTS, type CircuitTransition, reportTransition } from "./circuit-breaker-options.js";
import type {
  CircuitAdmission,
  CircuitBreakerStore,
  CircuitDecision,
  CircuitPermit,
  CircuitResult,
  CircuitStoreSettings,
} from "./circuit-breaker-store.js";
import type { CircuitSnapshot } from "./circuit-snapshot.js";
import { LocalRate, type RateSettings, withFailures } from "./local-rate.js";
import { LocalStandIn } from "./local-stand-in.js";

/** A store operation that threw or rejected, with the call it was for. */
export type StoreFault<C> = (operation: "acquire" | "record", error: unknown, key: string, context: C | undefined) => void;

const CLOSED_FALLBACK: CircuitDecision = Object.freeze({ admitted: true, permit: CLOSED_PERMIT });

/**
 * One tool's breaker settings over a shared `CircuitBreakerStore`: transitions the store reports
 * become the plugin's circuit events; a store fault becomes a `store_error`, and the result the
 * store could not take goes to a local in-memory breaker with the same settings (`LocalStandIn`),
 * which opens, half-opens and closes the circuit on its own while the store cannot answer. A
 * failure waits for the store's answer (it says whether this failure opened the circuit), so a
 * hung store costs a failure up to the store's own timeout, until the local circuit opens: from
 * then until its reset no call of that tool asks the store. Nothing here rejects.
 *
 * With `rate` (a failure-rate breaker), the rate is judged here (`LocalRate`): on the fleet's
 * calls when the store has `shareBudget` (this process's counts sent while the tool fails, at most
 * once a second), else on this process's. A closed call's result goes to the store only when it
 * is the failure that brings the window to the rate, and then with a threshold of 1, so that it
 * opens the fleet's circuit. Probes, re-opens and closing are the store's, as with the consecutive
 * count. The window starts afresh when this process learns the circuit is not closed (a
 * rejection, a probe).
 */
export class StoreBreaker<C> implements Breaker<C> {
  private readonly local: LocalStandIn<C>;
  private readonly rate: LocalRate | undefined;
  /** The settings sent to the store (a failure-rate breaker's threshold is 1: the failure sent is the one that opens). */
  private readonly settings: CircuitStoreSettings;
  /** While the stand-in takes a failure-rate breaker's opening failure: the failures of the window that opened it. */
  private opening: number | undefined;

  constructor(
    private readonly store: CircuitBreakerStore,
    settings: CircuitStoreSettings,
    private readonly onTransition: ((transition: CircuitTransition, context: C | undefined) => void) | undefined,
    private readonly onFault: StoreFault<C>,
    clock: Clock = systemClock,
    maxKeys: number = CIRCUIT_BREAKER_DEFAULTS.maxKeys,
    rate?: RateSettings,
  ) {
    this.settings = rate === undefined ? settings : { ...settings, threshold: 1 };
    // The stand-in opens on the one failure it is told of; it reports the window's failures.
    const standInTransition =
      onTransition &&
      ((transition: CircuitTransition, context: C | undefined) => onTransition(withFailures(transition, this.opening), context));
    this.local = new LocalStandIn(this.settings, clock, maxKeys, standInTransition);
    const share = store.shareBudget === undefined ? undefined : store.shareBudget.bind(store);
    this.rate =
      rate === undefined
        ? undefined
        : new LocalRate(rate, clock, maxKeys, share, (key, error) => this.onFault("record", error, key, undefined));
  }

  get size(): number {
    return (typeof this.store.size === "number" ? this.store.size : 0) + this.local.size + (this.rate?.size ?? 0);
  }

  isClosed(key: string): boolean {
    return this.store.isClosed(key) && !this.local.holds(key);
  }

  /** With a failure-rate breaker, a circuit read as not closed drops this process's window of it. */
  peek(key: string): number | undefined {
    const openFor = this.local.peek(key) ?? this.store.peek(key);
    if (openFor !== undefined && this.rate !== undefined) this.rate.forget(key);
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
    // Opened here while the store could not answer: it stays open until its reset, store or not.
    const standingIn = this.local.holds(key);
    if (standingIn && this.local.peek(key) !== undefined) return this.local.acquire(key, context);
    let admission: CircuitAdmission;
    try {
      admission = await this.store.acquire(key, this.settings);
    } catch (error) {
      return this.fallback("acquire", error, key, context);
    }
    return this.admitted(admission, key, standingIn, context);
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
    if (this.local.owns(permit)) this.local.neutral(key, permit);
    else if (permit.probe !== 0) void this.record(key, permit, "neutral", undefined);
  }

  /** Once the store holds it isolated, the stand-in lets go of it (an isolation is the fleet's). */
  async isolate(key: string): Promise<void> {
    await this.store.isolate(key);
    this.local.forget(key);
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
    if (Object.keys(snapshot.breakers ?? {}).length > 0) {
      throw new TypeError("circuits.restore: these circuits live in the circuitBreakerStore; a snapshot cannot restore them");
    }
  }

  /**
   * A success is applied to the stand-in at once (it forgets the failures counted there); a result
   * the store could not take is applied there too. A stand-in probe's result goes to the store as a
   * closed circuit's call (the store knows nothing of the stand-in's probes).
   */
  private async record(key: string, permit: CircuitPermit, result: CircuitResult, context: C | undefined): Promise<void> {
    let opening: number | undefined;
    if (this.rate !== undefined && permit.probe === 0) {
      // A closed call's result, judged here: the store hears only the failure that opens.
      opening = this.rate.opens(key, result, this);
      if (opening === undefined) return;
    }
    if (result === "success") this.local.succeeded(key, permit, context);
    const storePermit = this.local.owns(permit) ? CLOSED_PERMIT : permit;
    let transition: CircuitTransition | undefined;
    try {
      transition = await this.store.record(key, storePermit, result, this.settings);
    } catch (error) {
      return this.standIn(error, key, permit, result, context, opening);
    }
    this.recorded(transition, key, permit, result, context, opening);
  }

  /**
   * The store took the result. A stand-in probe's failure it heard hands the circuit back to it.
   * `opening`: the result was a failure-rate breaker's opening failure (the window's failures).
   */
  private recorded(
    transition: CircuitTransition | undefined,
    key: string,
    permit: CircuitPermit,
    result: CircuitResult,
    context: C | undefined,
    opening: number | undefined,
  ): void {
    if (result === "failure" && this.local.owns(permit)) this.local.forget(key);
    if (opening !== undefined) this.rate?.sent(key);
    reportTransition(this.onTransition, withFailures(transition, opening), context);
  }

  private standIn(
    error: unknown,
    key: string,
    permit: CircuitPermit,
    result: CircuitResult,
    context: C | undefined,
    opening: number | undefined,
  ): void {
    this.onFault("record", error, key, context);
    if (opening !== undefined) this.rate?.sent(key);
    this.opening = opening;
    try {
      this.local.stoodIn(key, permit, result, context);
    } finally {
      this.opening = undefined;
    }
  }

  /**
   * The store answered. After the stand-in's open time, an answer other than "closed" (a rejection,
   * the fleet's probe) is the fleet's state: the stand-in lets go; "closed" says nothing of the
   * store's health, so the stand-in takes its own probe, as in memory.
   */
  private admitted(admission: CircuitAdmission, key: string, standingIn: boolean, context: C | undefined): CircuitDecision {
    if (typeof admission !== "object" || admission === null || typeof admission.admitted !== "boolean") {
      return this.fallback("acquire", new TypeError(`acquire returned ${String(admission)}`), key, context);
    }
    reportTransition(this.onTransition, admission.transition, context);
    if (this.rate !== undefined && (!admission.admitted || admission.permit.probe !== 0)) this.rate.forget(key);
    if (!standingIn || !this.local.holds(key)) return admission;
    if (!admission.admitted || admission.permit.probe !== 0) {
      this.local.forget(key);
      return admission;
    }
    return this.local.acquire(key, context);
  }

  /** The store could not answer: the stand-in decides while it holds the circuit, else the store's local view (admitted unless it holds the circuit open). */
  private fallback(operation: "acquire", error: unknown, key: string, context: C | undefined): CircuitDecision {
    this.onFault(operation, error, key, context);
    if (this.local.holds(key)) return this.local.acquire(key, context);
    let openFor: number | undefined;
    try {
      openFor = this.store.peek(key);
    } catch {
      openFor = undefined;
    }
    return openFor === undefined ? CLOSED_FALLBACK : { admitted: false, retryAfterMs: openFor, state: "open" };
  }
}
