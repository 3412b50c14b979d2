import { errorMessageOf } from "../cleaning/error-message-of.js";
import { ErrorCodes } from "../errors/error-codes.js";
import { createToolError, isToolErrorShape, readToolErrorShape, ToolError, unreadableErrorInit } from "../errors/tool-error.js";
import { DEFAULT_SUGGESTED_ACTIONS, TOOL_CODE_FAULT_ACTION } from "../texts/model-texts.js";
import {
  BAD_INPUT,
  CREDENTIALS,
  field,
  httpStatus,
  isToolCodeFault,
  NETWORK_CODES,
  readable,
  STATUS_IN_TEXT,
  STATUS_OR_CREDENTIALS,
  systemCode,
  TEXT_HINTS,
  VALIDATION_NAMES,
} from "./error-signals.js";
import { retryAfterMsOf } from "./retry-after.js";

export { DEFAULT_SUGGESTED_ACTIONS, retryAfterMsOf };

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
 * - HTTP 401/403: `UNAUTHORIZED`, not recoverable (the model cannot fix credentials);
 * - a fault in the tool's own code (`ReferenceError`, a stack overflow, a `TypeError` of a programming
 *   mistake, a `SyntaxError` of code): `TOOL_FAILED`, not recoverable, `details: { fault: "tool_code" }`;
 * - validation errors: `INVALID_ARGUMENTS`;
 * - credential messages ("invalid api key", "unauthorized", "forbidden", "token expired", ...): `UNAUTHORIZED`;
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

  // Only the start of a huge message is read. One scan finds the first status, credential or
  // bad-input hint; most messages have none. After a hint, the other kinds may still follow.
  const text = message.length > 2000 ? message.slice(0, 2000) : message;
  const hint = TEXT_HINTS.exec(text);
  let said = status;
  // Whether credentials were found, and whether that is known without another scan.
  let credentials = false;
  let credentialsKnown = hint === null;
  if (hint !== null) {
    // A status field wins: then the text is not read for one.
    let statusHint: RegExpExecArray | null = null;
    let statusKnown = status !== undefined;
    if (hint[3] !== undefined) {
      credentials = credentialsKnown = true;
    } else if (hint[4] === undefined) {
      statusHint = hint;
      statusKnown = true;
    } else {
      // Bad input first: one scan for either of the others (the usual answer is neither).
      const next = STATUS_OR_CREDENTIALS.exec(text);
      if (next === null) statusKnown = credentialsKnown = true;
      else if (next[3] === undefined) {
        statusHint = next;
        statusKnown = true;
      } else credentials = credentialsKnown = true;
    }
    if (!statusKnown) statusHint = STATUS_IN_TEXT.exec(text);
    if (status === undefined && statusHint !== null) {
      said = Number(statusHint[1] ?? statusHint[2]);
      const byText = transientOfStatus(said, message, error);
      if (byText !== undefined) return byText;
    }
  }
  if (said === 401 || said === 403) return unauthorized(message, error);
  if (name !== "Error" && typeof name === "string") {
    if (isToolCodeFault(name, text, code)) return toolCodeFault(message, error);
    if (VALIDATION_NAMES.has(name)) return invalid(message, error);
  }
  if (credentials || (!credentialsKnown && CREDENTIALS.test(text))) return unauthorized(message, error);
  if (said === 400 || said === 422) return invalid(message, error);
  if (hint !== null && (hint[4] !== undefined || BAD_INPUT.test(text))) return invalid(message, error);
  return toolFailed(message, error);
}

function toolFailed(message: string, cause: unknown): ToolError {
  return createToolError({
    code: ErrorCodes.TOOL_FAILED,
    message,
    recoverable: true,
    suggestedAction: DEFAULT_SUGGESTED_ACTIONS.TOOL_FAILED,
    cause,
  });
}

/** A status stated in the text, as the same status field: 429, 408 and 5xx (not 501/505) are transient; any other, undefined. */
function transientOfStatus(status: number | undefined, message: string, error: unknown): ToolError | undefined {
  if (status === undefined) return undefined;
  if (status === 429) return transient(ErrorCodes.RATE_LIMITED, message, error);
  if (status === 408) return transient(ErrorCodes.TIMEOUT, message, error);
  if (status >= 500 && status !== 501 && status !== 505) return transient(ErrorCodes.TRANSIENT, message, error);
  return undefined;
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

function unauthorized(message: string, cause: unknown): ToolError {
  return createToolError({
    code: ErrorCodes.UNAUTHORIZED,
    message,
    recoverable: false,
    suggestedAction: DEFAULT_SUGGESTED_ACTIONS.UNAUTHORIZED,
    kind: "other",
    cause,
  });
}

function toolCodeFault(message: string, cause: unknown): ToolError {
  return createToolError({
    code: ErrorCodes.TOOL_FAILED,
    message,
    recoverable: false,
    suggestedAction: TOOL_CODE_FAULT_ACTION,
    details: { fault: TOOL_CODE_FAULT },
    kind: "other",
    cause,
  });
}
