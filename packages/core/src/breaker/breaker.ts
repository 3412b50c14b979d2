import type { CircuitState } from "../outcome.js";
import type { CircuitBreaker } from "./circuit-breaker.js";
import type { CircuitDecision, CircuitPermit } from "./circuit-breaker-store.js";
import type { CircuitSnapshot } from "./circuit-snapshot.js";

/**
 * What a call asks of its breaker: reads at once, and `acquire` and the results as promises (a
 * `StoreBreaker` may ask its `circuitBreakerStore`). None of these throws or rejects.
 */
export interface Breaker<C> {
  readonly size: number;
  peek(key: string): number | undefined;
  state(key: string): CircuitState;
  isIsolated(key: string): boolean;
  acquire(key: string, context?: C): Promise<CircuitDecision>;
  onSuccess(key: string, permit: CircuitPermit, context?: C): Promise<void>;
  /** Resolves to how long calls are rejected (`peek`) as this failure left the circuit. */
  onFailure(key: string, permit: CircuitPermit, context?: C): Promise<number | undefined>;
  onNeutral(key: string, permit: CircuitPermit): void;
  isolate(key: string, context?: C): Promise<void>;
  reset(key?: string, context?: C): Promise<void>;
  snapshot(): CircuitSnapshot;
  restore(snapshot: CircuitSnapshot): void;
}

/** The in-memory `CircuitBreaker` as a call's `Breaker`: its state changes when a method is called, before the caller's first await. */
export class MemoryBreaker<C> implements Breaker<C> {
  constructor(private readonly breaker: CircuitBreaker<C>) {}

  get size(): number {
    return this.breaker.size;
  }
  readonly peek = (key: string) => this.breaker.peek(key);
  readonly state = (key: string) => this.breaker.state(key);
  readonly isIsolated = (key: string) => this.breaker.isIsolated(key);
  readonly acquire = async (key: string, context?: C) => this.breaker.acquire(key, context);
  readonly onSuccess = async (key: string, permit: CircuitPermit, context?: C) => this.breaker.onSuccess(key, permit, context);
  readonly onFailure = async (key: string, permit: CircuitPermit, context?: C) => {
    this.breaker.onFailure(key, permit, context);
    return this.breaker.peek(key);
  };
  readonly onNeutral = (key: string, permit: CircuitPermit) => this.breaker.onNeutral(key, permit);
  readonly isolate = async (key: string, context?: C) => this.breaker.isolate(key, context);
  readonly reset = async (key?: string, context?: C) => this.breaker.reset(key, context);
  readonly snapshot = () => this.breaker.snapshot();
  readonly restore = (snapshot: CircuitSnapshot) => this.breaker.restore(snapshot);
}
