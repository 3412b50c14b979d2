import type { CircuitState } from "../outcome.js";
import type { CircuitDecision, CircuitPermit } from "./circuit-breaker-store.js";
import type { CircuitSnapshot } from "./circuit-snapshot.js";

/**
 * What the engine's stages ask of a breaker. The in-memory `CircuitBreaker` answers everything at
 * once; a `StoreBreaker` (over a `circuitBreakerStore`) may answer `acquire` and the results with a
 * promise, and only where its store needs I/O. Neither ever throws or rejects from these.
 */
export interface Breaker<C> {
  readonly size: number;
  isClosed(key: string): boolean;
  peek(key: string): number | undefined;
  state(key: string): CircuitState;
  isIsolated(key: string): boolean;
  acquire(key: string, context?: C): CircuitDecision | Promise<CircuitDecision>;
  onSuccess(key: string, permit: CircuitPermit, context?: C): void | Promise<void>;
  onFailure(key: string, permit: CircuitPermit, context?: C): void | Promise<void>;
  onNeutral(key: string, permit: CircuitPermit): void;
  isolate(key: string, context?: C): void | Promise<void>;
  reset(key?: string, context?: C): void | Promise<void>;
  snapshot(): CircuitSnapshot;
  restore(snapshot: CircuitSnapshot): void;
}
