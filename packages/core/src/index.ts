// `@retry-reflect/core`: what an agent developer writes. Other audiences have entries of their own:
// `/events` (observers, telemetry), `/stores` (shared stores), `/primitives` (the building blocks),
// `/adapter`, `/adapter/options` and `/adapter/failures` (framework adapters), `/testing`.

export type { RetryReflectPluginBuilder } from "./builder.js";
export { type Clock, systemClock } from "./clock.js";
export { DEFAULT_OPTIONS } from "./config/option-table.js";
export type {
  ClassifyContext,
  FailureContext,
  IdempotencyOptions,
  PolicyOptions,
  RetryBudgetOptions,
  RetryReflectOptions,
  ToolCall,
  ToolContext,
  ToolPolicy,
} from "./config/options.js";
export { ErrorCodes, type ErrorKind, type StandardErrorCode } from "./errors/error-codes.js";
export { InvalidOptionError } from "./errors/invalid-option-error.js";
export { RetriesExhaustedError } from "./errors/retries-exhausted-error.js";
export { ToolError, type ToolErrorInit } from "./errors/tool-error.js";
export { type ConsoleLoggerOptions, consoleLogger } from "./events/notifier.js";
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
export { DEFAULT_REFLECTION_PROMPT, DEFAULT_RETRY_LATER_PROMPT } from "./texts/model-texts.js";
