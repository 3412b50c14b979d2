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
} as const;

export type StandardErrorCode = (typeof ErrorCodes)[keyof typeof ErrorCodes];

/**
 * How a failure is handled: `transient` may be retried in place with the same arguments,
 * `invalid_arguments` needs the model to change its arguments, `other` is anything else.
 */
export type ErrorKind = "transient" | "invalid_arguments" | "other";
