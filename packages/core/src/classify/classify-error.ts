import { ErrorCodes } from "../errors/error-codes.js";
import { createToolError, isToolErrorShape, ToolError, toolErrorInitOf } from "../errors/tool-error.js";
import { errorMessageOf } from "../reflection/clean-error-text.js";
import { DEFAULT_SUGGESTED_ACTIONS } from "../texts/model-texts.js";

export { DEFAULT_SUGGESTED_ACTIONS };

const NETWORK_CODES = new Set([
  "ECONNRESET",
  "ECONNREFUSED",
  "ECONNABORTED",
  "ETIMEDOUT",
  "EPIPE",
  "EAI_AGAIN",
  "ENETUNREACH",
  "ENETDOWN",
  "EHOSTUNREACH",
  "EHOSTDOWN",
  "ENOTCONN",
  "ESOCKETTIMEDOUT",
  "UND_ERR_SOCKET",
  "UND_ERR_CONNECT_TIMEOUT",
  "UND_ERR_HEADERS_TIMEOUT",
  "UND_ERR_BODY_TIMEOUT",
  "UND_ERR_CLOSED",
]);

const VALIDATION_NAMES = new Set(["ZodError", "ValidationError", "ToolInputParsingException", "InputValidationError", "SchemaError"]);

/** Messages that name bad input. */
const BAD_INPUT =
  /\b(invalid|must be|must not|expected|not supported|unsupported|supported:|is required|are required|missing (?:required )?(?:argument|parameter|field)|malformed|out of range|not allowed|unknown (?:argument|parameter|field|option))/i;

type Bag = Record<string, unknown>;

function field(value: unknown, key: string): unknown {
  if (typeof value !== "object" || value === null) return undefined;
  try {
    return (value as Bag)[key];
  } catch {
    return undefined;
  }
}

function asDelay(candidate: unknown): number | undefined {
  return typeof candidate === "number" && Number.isFinite(candidate) && candidate >= 0 ? candidate : undefined;
}

function asStatus(candidate: unknown): number | undefined {
  return typeof candidate === "number" && candidate >= 100 && candidate <= 599 ? candidate : undefined;
}

// Read field by field, without building arrays: this runs on every failure.
function httpStatus(error: unknown): number | undefined {
  return asStatus(field(error, "status")) ?? asStatus(field(error, "statusCode")) ?? asStatus(field(field(error, "response"), "status"));
}

function systemCode(error: unknown): string | undefined {
  const own = field(error, "code");
  if (typeof own === "string") return own;
  const ofCause = field(field(error, "cause"), "code");
  return typeof ofCause === "string" ? ofCause : undefined;
}

function headerValue(value: unknown): string | undefined {
  if (typeof value === "string") return value;
  if (typeof value === "number" && Number.isFinite(value)) return String(value);
  return undefined;
}

function header(headers: unknown, name: string): string | undefined {
  if (typeof headers !== "object" || headers === null) return undefined;
  const get = field(headers, "get");
  if (typeof get === "function") {
    try {
      return headerValue(get.call(headers, name));
    } catch {
      return undefined;
    }
  }
  try {
    for (const [key, value] of Object.entries(headers as Bag)) {
      if (key.toLowerCase() === name) return headerValue(Array.isArray(value) ? value[0] : value);
    }
  } catch {
    // A hostile headers object: no hint.
  }
  return undefined;
}

/**
 * A `Retry-After` hint in ms: from `retryAfterMs` / `retry_after_ms` on the error, or a
 * `Retry-After` header (seconds or an HTTP date) on `error.headers` / `error.response.headers`.
 */
export function retryAfterMsOf(error: unknown, wallClockNow: () => number = Date.now): number | undefined {
  const own = asDelay(field(error, "retryAfterMs")) ?? asDelay(field(error, "retry_after_ms"));
  if (own !== undefined) return own;
  const value = header(field(error, "headers"), "retry-after") ?? header(field(field(error, "response"), "headers"), "retry-after");
  if (value === undefined) return undefined;
  const trimmed = value.trim();
  if (/^\d+(\.\d+)?$/.test(trimmed)) return Math.round(Number(trimmed) * 1000);
  // An HTTP date starts with a day name ("Wed, 21 Oct 2015 07:28:00 GMT"). Anything else is
  // ignored: Date.parse is lenient and reads "-5" as a date in 2001.
  if (!/^[A-Za-z]{3}/.test(trimmed)) return undefined;
  const date = Date.parse(trimmed);
  return Number.isNaN(date) ? undefined : Math.max(0, date - wallClockNow());
}

function isMcpErrorResult(value: unknown): boolean {
  return field(value, "isError") === true;
}

/** True when a tool's returned value means failure: a `ToolError`, the seed's error shape, or MCP `isError: true`. */
export function isReturnedFailure(value: unknown): boolean {
  if (typeof value !== "object" || value === null) return false;
  return ToolError.isInstance(value) || isToolErrorShape(value) || isMcpErrorResult(value);
}

/**
 * The default classification of anything a tool threw or returned as a failure:
 * - a `ToolError` (any copy) or the seed's plain shape keeps its own code and flags;
 * - network errors, timeouts, HTTP 408/429/5xx: transient (`TRANSIENT`, `TIMEOUT`, `RATE_LIMITED`), with `Retry-After`;
 * - validation errors, HTTP 400/422, and messages that name bad input: `INVALID_ARGUMENTS`;
 * - anything else: `TOOL_FAILED`, recoverable.
 */
export function classifyError(error: unknown): ToolError {
  if (ToolError.isInstance(error)) return error;
  if (isToolErrorShape(error)) return createToolError(toolErrorInitOf(error, error));
  const message = errorMessageOf(error);
  const name = field(error, "name");
  const status = httpStatus(error);
  const code = systemCode(error);

  if (status === 429) return transient(ErrorCodes.RATE_LIMITED, message, error);
  if (
    status === 408 ||
    name === "TimeoutError" ||
    code === "ETIMEDOUT" ||
    code === "UND_ERR_CONNECT_TIMEOUT" ||
    code === "UND_ERR_HEADERS_TIMEOUT"
  ) {
    return transient(ErrorCodes.TIMEOUT, message, error);
  }
  if (status !== undefined && status >= 500 && status !== 501 && status !== 505) return transient(ErrorCodes.TRANSIENT, message, error);
  if (code !== undefined && NETWORK_CODES.has(code)) return transient(ErrorCodes.TRANSIENT, message, error);
  // fetch's opaque network failure: Node/undici "fetch failed", Chrome "Failed to fetch", Firefox
  // "NetworkError when attempting to fetch resource.", Safari "Load failed". Not when its cause carries
  // a code that is not a network hiccup (ENOTFOUND, an expired certificate): repeating cannot help.
  if (
    name === "TypeError" &&
    code === undefined &&
    /fetch failed|failed to fetch|network ?error|load failed|socket hang up/i.test(message)
  ) {
    return transient(ErrorCodes.TRANSIENT, message, error);
  }
  if (typeof name === "string" && VALIDATION_NAMES.has(name)) return invalid(message, error);
  if (status === 400 || status === 422) return invalid(message, error);
  if (BAD_INPUT.test(message.slice(0, 2000))) return invalid(message, error);
  return createToolError({
    code: ErrorCodes.TOOL_FAILED,
    message,
    recoverable: true,
    suggestedAction: DEFAULT_SUGGESTED_ACTIONS.TOOL_FAILED,
    cause: error,
  });
}

function transient(code: "TRANSIENT" | "TIMEOUT" | "RATE_LIMITED", message: string, cause: unknown): ToolError {
  return createToolError({
    code,
    message,
    recoverable: true,
    suggestedAction: DEFAULT_SUGGESTED_ACTIONS[code],
    retryAfterMs: retryAfterMsOf(cause),
    kind: "transient",
    cause,
  });
}

function invalid(message: string, cause: unknown): ToolError {
  return createToolError({
    code: ErrorCodes.INVALID_ARGUMENTS,
    message,
    recoverable: true,
    suggestedAction: DEFAULT_SUGGESTED_ACTIONS.INVALID_ARGUMENTS,
    kind: "invalid_arguments",
    cause,
  });
}
