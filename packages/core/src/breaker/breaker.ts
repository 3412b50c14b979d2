import type { CircuitState } from "../outcome.js";
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
