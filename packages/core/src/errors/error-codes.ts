/** The standard `error_code` values. Users add their own (`RECORD_NOT_FOUND`, `QUOTA_EXCEEDED`). */
export const ErrorCodes = {
  INVALID_ARGUMENTS: "INVALID_ARGUMENTS",
  TRANSIENT: "TRANSIENT",
  RATE_LIMITED: "RATE_LIMITED",
  TIMEOUT: "TIMEOUT",
  TOOL_FAILED: "TOOL_FAILED",
  CIRCUIT_OPEN: "CIRCUIT_OPEN",
  RETRIES_EXHAUSTED: "RETRIES_EXHAUSTED",
  IDEMPOTENCY_KEY_REQUIRED: "IDEMPOTENCY_KEY_REQUIRED",
  IDEMPOTENCY_KEY_REUSED: "IDEMPOTENCY_KEY_REUSED",
  IN_PROGRESS: "IN_PROGRESS",
  STORE_UNAVAILABLE: "STORE_UNAVAILABLE",
  /** HTTP 401/403 or a credential error: the model cannot fix it; not recoverable, counted by the breaker. */
  UNAUTHORIZED: "UNAUTHORIZED",
  /** More calls of one tool running at once than its `maxConcurrent`: refused without running. */
  OVERLOADED: "OVERLOADED",
  /** An identical call that already failed `repeatedCallLimit` times in this scope: refused without running. */
  REPEATED_CALL: "REPEATED_CALL",
} as const;

export type StandardErrorCode = (typeof ErrorCodes)[keyof typeof ErrorCodes];

/**
 * How a failure is handled: `transient` may be retried in place with the same arguments,
 * `invalid_arguments` needs the model to change its arguments, `other` is anything else.
 */
export type ErrorKind = "transient" | "invalid_arguments" | "other";
