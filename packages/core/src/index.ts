// The main entry: the plugin and its builder, its options, outcomes and events, structured
// errors and their codes, the stores (idempotency, circuit breaker) and their interfaces, and the console logger. Building blocks
// (the breaker, backoff, classification, cleaning, templates, fingerprints) are in
// `@retry-reflect/core/primitives`; what framework adapters need is in `@retry-reflect/core/adapter`.

export type { CircuitSnapshot } from "./breaker/circuit-breaker.js";
export type { CircuitTransition } from "./breaker/circuit-breaker-options.js";
export type {
  BudgetShare,
  BudgetShareReply,
  CircuitAdmission,
  CircuitBreakerStore,
  CircuitDecision,
  CircuitPermit,
  CircuitResult,
  CircuitStoreSettings,
} from "./breaker/circuit-breaker-store.js";
export type { Circuits } from "./breaker/circuits.js";
export { DEFAULT_RETRY_BUDGET, type RetryBudgetSettings } from "./budget/retry-budget.js";
export type { RetryReflectPluginBuilder } from "./builder.js";
export { type Clock, isWatchdog, systemClock } from "./clock.js";
export type {
  ClassifyContext,
  FailureContext,
  IdempotencyDerive,
  IdempotencyOptions,
  Jitter,
  PolicyOptions,
  RetryBudgetOptions,
  RetryReflectOptions,
  ToolCall,
  ToolContext,
  ToolPolicy,
} from "./config/options.js";
export type { ResolvedPolicy } from "./config/policy.js";
export { DEFAULT_OPTIONS, type ResolvedOptions } from "./config/resolve.js";
export { ErrorCodes, type ErrorKind, type StandardErrorCode } from "./errors/error-codes.js";
export { InvalidOptionError } from "./errors/invalid-option-error.js";
export { RetriesExhaustedError } from "./errors/retries-exhausted-error.js";
export { ToolError, type ToolErrorInit, type ToolErrorJSON } from "./errors/tool-error.js";
export { type ConsoleLoggerOptions, consoleLogger, formatEvent } from "./events/console-logger.js";
export {
  type AttemptTimedOutEvent,
  type CallEnd,
  type CallInfo,
  type CallOutcomeStatus,
  type CallRefusedEvent,
  type CallRejectedEvent,
  type CircuitClosedEvent,
  type CircuitHalfOpenedEvent,
  type CircuitOpenedEvent,
  EVENT_MESSAGES,
  type EventLevel,
  type FallbackUsedEvent,
  type FieldValue,
  type IdempotencyConflictEvent,
  type IdempotentReplayEvent,
  type RetriesExhaustedEvent,
  type RetryBudgetSpentEvent,
  type RetryEvent,
  type RetryReflectEvent,
  type RetryReflectEventType,
  type RetryReflectObserver,
  type RetrySucceededEvent,
  type StoreErrorEvent,
  type StoreErrorReason,
  type StoreOperation,
  type WaitingBeforeRetryEvent,
} from "./events/events.js";
export type { IdempotencySettings } from "./idempotency/guarded-call.js";
export type { IdempotencyBeginResult, IdempotencyStore } from "./idempotency/idempotency-store.js";
export { InMemoryIdempotencyStore, type InMemoryIdempotencyStoreOptions } from "./idempotency/in-memory-idempotency-store.js";
export type {
  CircuitState,
  ExecuteOutcome,
  FailedOutcome,
  FailureReason,
  ReflectOutcome,
  SuccessOutcome,
  ToolEffect,
} from "./outcome.js";
export { RetryReflectPlugin, type ToolFunction } from "./plugin.js";
export { DEFAULT_REFLECTION_PROMPT, DEFAULT_RETRY_LATER_PROMPT, type StructuredErrorJSON } from "./texts/model-texts.js";
