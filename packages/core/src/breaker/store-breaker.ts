import type { CircuitState } from "../outcome.js";
import type { Breaker } from "./breaker.js";
import type { CircuitTransition } from "./circuit-breaker-options.js";
import type {
  CircuitAdmission,
  CircuitBreakerStore,
  CircuitDecision,
  CircuitPermit,
  CircuitResult,
  CircuitStoreSettings,
} from "./circuit-breaker-store.js";
import type { CircuitSnapshot } from "./circuit-snapshot.js";

/** A store operation that threw or rejected, with the call it was for. */
export type StoreFault<C> = (operation: "acquire" | "record", error: unknown, key: string, context: C | undefined) => void;

const CLOSED_FALLBACK: CircuitDecision = Object.freeze({ admitted: true, permit: Object.freeze({ probe: 0 }) });

/**
 * One tool's breaker settings over a shared `CircuitBreakerStore`: transitions the store reports
 * become the plugin's circuit events; a store fault becomes a `store_error` and the call goes on
 * from the local view (admitted unless it holds the circuit open). Nothing here rejects.
 */
export class StoreBreaker<C> implements Breaker<C> {
  constructor(
    private readonly store: CircuitBreakerStore,
    private readonly settings: CircuitStoreSettings,
    private readonly onTransition: ((transition: CircuitTransition, context: C | undefined) => void) | undefined,
    private readonly onFault: StoreFault<C>,
  ) {}

  get size(): number {
    return typeof this.store.size === "number" ? this.store.size : 0;
  }

  isClosed(key: string): boolean {
    return this.store.isClosed(key);
  }

  peek(key: string): number | undefined {
    return this.store.peek(key);
  }

  state(key: string): CircuitState {
    return this.store.state(key);
  }

  isIsolated(key: string): boolean {
    return this.store.peek(key) === Number.POSITIVE_INFINITY;
  }

  acquire(key: string, context?: C): CircuitDecision | Promise<CircuitDecision> {
    let answer: CircuitAdmission | Promise<CircuitAdmission>;
    try {
      answer = this.store.acquire(key, this.settings);
    } catch (error) {
      return this.fallback("acquire", error, key, context);
    }
    if (!isThenable(answer)) return this.admitted(answer, key, context);
    return Promise.resolve(answer).then(
      (admission) => this.admitted(admission, key, context),
      (error: unknown) => this.fallback("acquire", error, key, context),
    );
  }

  onSuccess(key: string, permit: CircuitPermit, context?: C): void | Promise<void> {
    return this.record(key, permit, "success", context);
  }

  onFailure(key: string, permit: CircuitPermit, context?: C): void | Promise<void> {
    return this.record(key, permit, "failure", context);
  }

  /** Only a probe's slot is at stake: told to the store without waiting. */
  onNeutral(key: string, permit: CircuitPermit): void {
    if (permit.probe !== 0) void this.record(key, permit, "neutral", undefined);
  }

  isolate(key: string): void | Promise<void> {
    const done = this.store.isolate(key);
    return isThenable(done) ? Promise.resolve(done) : undefined;
  }

  reset(key?: string): void | Promise<void> {
    const done = this.store.reset(key);
    return isThenable(done) ? Promise.resolve(done) : undefined;
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

  private record(key: string, permit: CircuitPermit, result: CircuitResult, context: C | undefined): void | Promise<void> {
    let answer: CircuitTransition | undefined | Promise<CircuitTransition | undefined>;
    try {
      answer = this.store.record(key, permit, result, this.settings);
    } catch (error) {
      this.onFault("record", error, key, context);
      return;
    }
    if (!isThenable(answer)) {
      this.emit(answer, context);
      return;
    }
    return Promise.resolve(answer).then(
      (transition) => this.emit(transition, context),
      (error: unknown) => this.onFault("record", error, key, context),
    );
  }

  private admitted(admission: CircuitAdmission, key: string, context: C | undefined): CircuitDecision {
    if (typeof admission !== "object" || admission === null || typeof admission.admitted !== "boolean") {
      return this.fallback("acquire", new TypeError(`acquire returned ${String(admission)}`), key, context);
    }
    this.emit(admission.transition, context);
    return admission;
  }

  /** The store could not answer: the local view decides (admitted unless it holds the circuit open). */
  private fallback(operation: "acquire", error: unknown, key: string, context: C | undefined): CircuitDecision {
    this.onFault(operation, error, key, context);
    let openFor: number | undefined;
    try {
      openFor = this.store.peek(key);
    } catch {
      openFor = undefined;
    }
    return openFor === undefined ? CLOSED_FALLBACK : { admitted: false, retryAfterMs: openFor, state: "open" };
  }

  private emit(transition: CircuitTransition | undefined, context: C | undefined): void {
    if (transition === undefined || this.onTransition === undefined) return;
    try {
      this.onTransition(transition, context);
    } catch {
      // An observer's error never changes the breaker.
    }
  }
}

function isThenable<T>(value: T | Promise<T>): value is Promise<T> {
  return typeof value === "object" && value !== null && typeof (value as { then?: unknown }).then === "function";
}
