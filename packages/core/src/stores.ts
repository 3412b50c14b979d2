// `@retry-reflect/core/stores`: for authors of shared stores (as `@retry-reflect/redis`): the
// idempotency store and the circuit breaker store the plugin talks to, and the values of their
// protocols. The in-memory idempotency store is in the main entry.

export type { CircuitDecision, CircuitPermit } from "./breaker/circuit-breaker.js";
export type { CircuitTransition } from "./breaker/circuit-breaker-options.js";
export type {
  BudgetShare,
  BudgetShareReply,
  CircuitAdmission,
  CircuitBreakerStore,
  CircuitResult,
  CircuitStoreSettings,
} from "./breaker/circuit-breaker-store.js";
export type { IdempotencyBeginResult, IdempotencyStore } from "./idempotency/idempotency-store.js";
