import { ErrorCodes } from "../errors/error-codes.js";
import {
  createToolError,
  isToolErrorShape,
  readToolErrorShape,
  ToolError,
  type ToolErrorInit,
  unreadableErrorInit,
} from "../errors/tool-error.js";
import { DEFAULT_SUGGESTED_ACTIONS, TOOL_CODE_FAULT_ACTION } from "../texts/model-texts.js";
import {
  BAD_INPUT,
  CREDENTIALS,
  errorMessageOf,
  field,
  httpStatus,
  isToolCodeFault,
  NETWORK_CODES,
  PERMISSION,
  PERMISSION_CODES,
  readable,
  STATUS_IN_TEXT,
  systemCode,
  TEXT_HINTS,
  VALIDATION_NAMES,
} from "./error-signals.js";

export { DEFAULT_SUGGESTED_ACTIONS };

/** Marks a failure in the tool's own code (`details` of its `TOOL_FAILED`). */
const TOOL_CODE_FAULT = "tool_code";

function isMcpErrorResult(value: unknown): boolean {
  return field(value, "isError") === true;
}

/** True when a tool's returned value means failure: a `ToolError`, the `{ error_code, message }` error shape, or MCP `isError: true`. */
export function isReturnedFailure(value: unknown): boolean {
  if (typeof value !== "object" || value === null) return false;
  return ToolError.isInstance(value) || isToolErrorShape(value) || isMcpErrorResult(value);
}

/**
 * The default classification of anything a tool threw or returned as a failure, first rule first:
 * - a `ToolError` (any copy) or the plain error shape keeps its own code and flags;
 * - network errors, timeouts, HTTP 408/429/5xx (not 501/505): transient (`TRANSIENT`, `TIMEOUT`,
 *   `RATE_LIMITED`), with `Retry-After`;
 * - HTTP 401 (or 403 with a credential message): `UNAUTHORIZED`, not recoverable (the model cannot fix credentials);
 * - HTTP 403: `PERMISSION_DENIED`, reflected (another argument may be allowed);
 * - a fault in the tool's own code (`ReferenceError`, a stack overflow, a `TypeError` of a programming
 *   mistake, a `SyntaxError` of code): `TOOL_FAILED`, not recoverable, `details: { fault: "tool_code" }`;
 * - validation errors: `INVALID_ARGUMENTS`;
 * - credential messages ("invalid api key", "unauthorized", "unauthenticated", "token expired", ...): `UNAUTHORIZED`;
 * - permission refusals about what the call names ("Access denied - path outside allowed
 *   directories", "permission denied", "forbidden", `EACCES`/`EPERM`): `PERMISSION_DENIED`, reflected;
 * - HTTP 400/422, and messages that name bad input: `INVALID_ARGUMENTS`;
 * - anything else: `TOOL_FAILED`, recoverable;
 * - a failure that cannot be read at all (reading its `message` throws: a getter, a proxy trap, a
 *   revoked proxy), or an error shape whose members throw or whose `message` is not a string
 *   (`error_code` and `recoverable` say it is the shape): `TOOL_FAILED`, not
 *   recoverable, in the library's words (`details: { fault: "tool_code" }`).
 * The status is the error's own (`status`, `statusCode`, `response.status`), else one its
 * message states (`HTTP 503`, `status code 429`, `503 Service Unavailable`).
 */
export function classifyError(error: unknown): ToolError {
  if (ToolError.isInstance(error)) return error;
  // The plain shape, each member read once (a member that changes type between reads is caught here).
  const shape = readToolErrorShape(error, error);
  if (shape !== undefined) return createToolError(shape === "unreadable" ? unreadableErrorInit(error) : shape);
  if (!readable(error)) return createToolError(unreadableErrorInit(error));
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

  // Only the start of a huge message is read. One scan says whether it holds a status, credential,
  // permission or bad-input hint at all; most messages have none. Only then is each kind looked for.
  const text = message.length > 2000 ? message.slice(0, 2000) : message;
  const hinted = TEXT_HINTS.test(text);
  let said = status;
  // A status field wins: then the text is not read for one.
  if (hinted && status === undefined) {
    const statusHint = STATUS_IN_TEXT.exec(text);
    if (statusHint !== null) {
      said = Number(statusHint[1] ?? statusHint[2]);
      const byText = transientOfStatus(said, message, error);
      if (byText !== undefined) return byText;
    }
  }
  // Credentials the model cannot fix win over a permission it may (another path, another resource).
  const credentials = hinted && CREDENTIALS.test(text);
  if (said === 401 || (said === 403 && credentials)) return unauthorized(message, error);
  if (said === 403) return permissionDenied(message, error);
  if (name !== "Error" && typeof name === "string") {
    if (isToolCodeFault(name, text, code)) return toolCodeFault(message, error);
    if (VALIDATION_NAMES.has(name)) return invalid(message, error);
  }
  if (credentials) return unauthorized(message, error);
  if ((code !== undefined && PERMISSION_CODES.has(code)) || (hinted && PERMISSION.test(text))) return permissionDenied(message, error);
  if (said === 400 || said === 422) return invalid(message, error);
  if (hinted && BAD_INPUT.test(text)) return invalid(message, error);
  return toolFailed(message, error);
}

/** A status stated in the text, as the same status field: 429, 408 and 5xx (not 501/505) are transient; any other, undefined. */
function transientOfStatus(status: number | undefined, message: string, error: unknown): ToolError | undefined {
  if (status === undefined) return undefined;
  if (status === 429) return transient(ErrorCodes.RATE_LIMITED, message, error);
  if (status === 408) return transient(ErrorCodes.TIMEOUT, message, error);
  if (status >= 500 && status !== 501 && status !== 505) return transient(ErrorCodes.TRANSIENT, message, error);
  return undefined;
}

/** A failure of `code`, with its default action and kind unless `init` says otherwise. */
function failure(code: keyof typeof DEFAULT_SUGGESTED_ACTIONS, message: string, cause: unknown, init?: Partial<ToolErrorInit>): ToolError {
  return createToolError({ code, message, recoverable: true, suggestedAction: DEFAULT_SUGGESTED_ACTIONS[code], cause, ...init });
}

type Make = (message: string, cause: unknown) => ToolError;
const transient = (code: "TRANSIENT" | "TIMEOUT" | "RATE_LIMITED", message: string, cause: unknown): ToolError =>
  failure(code, message, cause, { retryAfterMs: retryAfterMsOf(cause) });
const toolFailed: Make = (message, cause) => failure(ErrorCodes.TOOL_FAILED, message, cause);
const invalid: Make = (message, cause) => failure(ErrorCodes.INVALID_ARGUMENTS, message, cause);
const permissionDenied: Make = (message, cause) => failure(ErrorCodes.PERMISSION_DENIED, message, cause);
const unauthorized: Make = (message, cause) => failure(ErrorCodes.UNAUTHORIZED, message, cause, { recoverable: false });
const toolCodeFault: Make = (message, cause) =>
  failure(ErrorCodes.TOOL_FAILED, message, cause, {
    recoverable: false,
    suggestedAction: TOOL_CODE_FAULT_ACTION,
    details: { fault: TOOL_CODE_FAULT },
  });

// The `Retry-After` hint of a failure: its own fields, or the header where HTTP clients keep it.
// Runs on every transient failure: named reads, bounded, never throwing.

function asDelay(candidate: unknown): number | undefined {
  return typeof candidate === "number" && Number.isFinite(candidate) && candidate >= 0 ? candidate : undefined;
}

/** Bounds of the `Retry-After` lookup in a plain header record. */
const MAX_HEADER_KEYS = 256;
const MAX_HEADER_VALUE_LENGTH = 64;

function headerValue(value: unknown): string | undefined {
  if (typeof value === "string") return value.length <= MAX_HEADER_VALUE_LENGTH ? value : undefined;
  if (typeof value === "number" && Number.isFinite(value)) return String(value);
  return undefined;
}

function listValue(value: unknown): string | undefined {
  return headerValue(Array.isArray(value) ? value[0] : value);
}

/** The `Retry-After` header of a `Headers`-like object (`get`) or a plain record (any case), never throwing, bounded. */
function header(headers: unknown): string | undefined {
  if (typeof headers !== "object" || headers === null) return undefined;
  try {
    const bag = headers as Record<string, unknown>;
    const get = bag.get;
    if (typeof get === "function") return headerValue(get.call(headers, "retry-after"));
    // Node's IncomingHttpHeaders (lower case) and hand-made records first, then any case.
    const direct = bag["retry-after"] ?? bag["Retry-After"];
    if (direct !== undefined) return listValue(direct);
    let seen = 0;
    for (const key in bag) {
      if (++seen > MAX_HEADER_KEYS) break;
      if (key.length === 11 && key.toLowerCase() === "retry-after" && Object.hasOwn(bag, key)) return listValue(bag[key]);
    }
  } catch {
    // A hostile headers object: no hint.
  }
  return undefined;
}

/** Where clients keep a `Retry-After` hint. */
interface RetryHints {
  readonly retryAfterMs?: unknown;
  readonly retry_after_ms?: unknown;
  readonly headers?: unknown;
  readonly response?: unknown;
  readonly responseHeaders?: unknown;
  readonly cause?: unknown;
}

/** The `Retry-After` header on one error: `headers`, `response.headers` (fetch, axios), `responseHeaders` (Vercel AI SDK). */
function retryAfterHeaderOn(error: unknown): string | undefined {
  if (typeof error !== "object" || error === null) return undefined;
  const holder = error as RetryHints;
  const response = holder.response;
  return (
    header(holder.headers) ??
    (typeof response === "object" && response !== null ? header((response as RetryHints).headers) : undefined) ??
    header(holder.responseHeaders)
  );
}

/**
 * A `Retry-After` hint in ms: from `retryAfterMs` / `retry_after_ms` on the error, or a
 * `Retry-After` header (seconds or an HTTP date) on `error.headers`, `error.response.headers`
 * (a record or a `Headers`), `error.responseHeaders`, or the same places of `error.cause`.
 * Never throws; a header record is searched for at most 256 keys, a value of more than 64
 * characters is ignored.
 */
export function retryAfterMsOf(error: unknown, wallClockNow: () => number = Date.now): number | undefined {
  if (typeof error !== "object" || error === null) return undefined;
  let value: string | undefined;
  try {
    // Named reads (not `field`): this runs on every transient failure.
    const holder = error as RetryHints;
    const own = asDelay(holder.retryAfterMs) ?? asDelay(holder.retry_after_ms);
    if (own !== undefined) return own;
    value = retryAfterHeaderOn(holder) ?? retryAfterHeaderOn(holder.cause);
  } catch {
    return undefined; // a getter or proxy trap that throws: no hint
  }
  if (value === undefined) return undefined;
  const trimmed = value.trim();
  if (/^\d+(\.\d+)?$/.test(trimmed)) return Math.round(Number(trimmed) * 1000);
  // An HTTP date starts with a day name ("Wed, 21 Oct 2015 07:28:00 GMT"). Anything else is
  // ignored: Date.parse is lenient and reads "-5" as a date in 2001.
  if (!/^[A-Za-z]{3}/.test(trimmed)) return undefined;
  const date = Date.parse(trimmed);
  return Number.isNaN(date) ? undefined : Math.max(0, date - wallClockNow());
}
