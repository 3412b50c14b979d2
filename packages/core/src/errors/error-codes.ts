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
  /**
   * A write whose earlier run under this key started and never reported a result (its process
   * stopped, or a Redis failover lost the result): it may have taken effect. Not run again, not
   * recoverable: the outcome must be checked. Only stores that can tell answer it (Redis with `replicas`).
   */
  WRITE_IN_DOUBT: "WRITE_IN_DOUBT",
  /** HTTP 401 or a credential error (invalid or expired API key, unauthenticated): the model cannot fix it; not recoverable, counted by the breaker. */
  UNAUTHORIZED: "UNAUTHORIZED",
  /**
   * A permission refusal about what the arguments name (HTTP 403, "Access denied - path outside
   * allowed directories", `EACCES`): reflected, so that the model may choose another; never retried
   * in place; counted by the breaker only when the row's previous failure was one too.
   */
  PERMISSION_DENIED: "PERMISSION_DENIED",
  /** More calls of one tool running at once than its `maxConcurrent`: refused without running. */
  OVERLOADED: "OVERLOADED",
  /** An identical call that already failed `repeatedCallLimit` times in this scope: refused without running. */
  REPEATED_CALL: "REPEATED_CALL",
  /**
   * A transient failure not retried in place because the tool's retry budget (`retryBudget`) is
   * spent: recoverable, the same call again after `retry_after_ms` (when the window has room).
   */
  RETRY_BUDGET_SPENT: "RETRY_BUDGET_SPENT",
} as const;

export type StandardErrorCode = (typeof ErrorCodes)[keyof typeof ErrorCodes];

/**
 * How a failure is handled: `transient` may be retried in place with the same arguments,
 * `invalid_arguments` needs the model to change its arguments, `other` is anything else.
 */
export type ErrorKind = "transient" | "invalid_arguments" | "other";

/**
 * Whether `value` carries `brand` (a `Symbol.for` key set to `true`): how the package's classes
 * recognise their instances across copies of the package (two installs, the CommonJS entry points).
 * Never throws, also for a proxy whose traps do.
 */
export function hasBrand(value: unknown, brand: symbol): boolean {
  if (!isObject(value)) return false;
  try {
    return (value as Record<symbol, unknown>)[brand] === true;
  } catch {
    return false;
  }
}

/** An object (not `null`): a value whose members can be read. Arrays and class instances count; functions do not. */
export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null;
}

/** An object that is not an array (what `details` may be, what an options object must be). */
export function isNonArrayObject(value: unknown): value is Record<string, unknown> {
  return isObject(value) && !Array.isArray(value);
}
