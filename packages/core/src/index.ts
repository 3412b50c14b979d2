export { RetryReflectPlugin, type ToolFunction } from "./plugin/plugin.js";
export { RetryReflectPluginBuilder } from "./plugin/plugin-builder.js";
export type {
  ClassifyContext,
  IdempotencyOptions,
  Jitter,
  RetryReflectOptions,
  ToolCall,
  ToolContext,
} from "./plugin/options.js";
export type { ExecuteOutcome, FailedOutcome, ReflectOutcome, SuccessOutcome } from "./plugin/outcome.js";
export { DEFAULT_OPTIONS, resolveOptions, type ResolvedOptions } from "./plugin/validate-options.js";
export { structuredErrorJson, type StructuredErrorJSON } from "./plugin/messages.js";

export { ToolError, isToolErrorShape, type ToolErrorInit, type ToolErrorJSON } from "./errors/tool-error.js";
export { ErrorCodes, type ErrorKind, type StandardErrorCode } from "./errors/error-codes.js";
export { RetriesExhaustedError } from "./errors/retries-exhausted-error.js";
export { InvalidOptionError } from "./errors/invalid-option-error.js";

export {
  CircuitBreaker,
  type CircuitBreakerOptions,
  type CircuitDecision,
  type CircuitPermit,
  type CircuitSnapshot,
  type CircuitTransition,
} from "./breaker/circuit-breaker.js";
export { backoffDelay, withRetryAfter, DEFAULT_BACKOFF, type BackoffOptions } from "./backoff/backoff.js";
export {
  compileReflectionTemplate,
  DEFAULT_REFLECTION_PROMPT,
  REFLECTION_PLACEHOLDERS,
  type ReflectionPlaceholder,
  type ReflectionTemplate,
  type ReflectionValues,
} from "./reflection/templater.js";
export { cleanErrorText, defaultRedactor, errorMessageOf, type CleanOptions } from "./reflection/clean-error-text.js";
export { classifyError, isReturnedFailure, retryAfterMsOf, DEFAULT_SUGGESTED_ACTIONS } from "./classify/classify-error.js";

export type { IdempotencyBeginResult, IdempotencyStore } from "./idempotency/idempotency-store.js";
export { InMemoryIdempotencyStore, type InMemoryIdempotencyStoreOptions } from "./idempotency/in-memory-idempotency-store.js";
export { ArgumentDepthError, argumentsFingerprint, canonicalJson, MAX_ARGUMENT_DEPTH } from "./idempotency/fingerprint.js";

export {
  EVENT_MESSAGES,
  type CallEnd,
  type CallInfo,
  type CallOutcomeStatus,
  type CallRejectedEvent,
  type CircuitClosedEvent,
  type CircuitHalfOpenedEvent,
  type CircuitOpenedEvent,
  type CircuitState,
  type EventLevel,
  type FailureReason,
  type FieldValue,
  type IdempotencyConflictEvent,
  type IdempotentReplayEvent,
  type RetriesExhaustedEvent,
  type RetryEvent,
  type RetryReflectEvent,
  type RetryReflectEventType,
  type RetryReflectObserver,
  type RetrySucceededEvent,
  type StoreErrorEvent,
  type StoreOperation,
  type ToolEffect,
} from "./events/events.js";
export { consoleLogger, formatEvent, type ConsoleLoggerOptions } from "./events/console-logger.js";
export { systemClock, type Clock } from "./clock.js";
