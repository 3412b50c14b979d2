import { ErrorCodes } from "../errors/error-codes.js";
import { createToolError, isToolErrorShape, readToolErrorShape, ToolError, unreadableErrorInit } from "../errors/tool-error.js";
import { DEFAULT_SUGGESTED_ACTIONS } from "../texts/model-texts.js";
import { errorMessageOf, field, httpStatus, readable, retryAfterMsOf, systemCode } from "./error-signals.js";

// What a failure is: the rules its name, codes, status and message are matched against (network
// codes, validation names, status, credential, permission and bad-input wording, an engine's words
// for a programming mistake), and the classification they make.

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

/**
 * fetch's opaque network failure (a `TypeError`): Node/undici "fetch failed", Chrome "Failed to fetch",
 * Firefox "NetworkError when attempting to fetch resource.", Safari "Load failed".
 */
const FETCH_FAILED = /fetch failed|failed to fetch|network ?error|load failed|socket hang up/i;

const VALIDATION_NAMES = new Set(["ZodError", "ValidationError", "ToolInputParsingException", "InputValidationError", "SchemaError"]);

/** Messages that name bad input. */
const BAD_INPUT =
  /\b(invalid|must be|must not|expected|not supported|unsupported|supported:|is required|are required|missing (?:required )?(?:argument|parameter|field)|malformed|out of range|not allowed|unknown (?:argument|parameter|field|option))/i;

/**
 * An HTTP status said to be one: after `HTTP`, `HTTP/1.1`, `status`, `status code`, `statusCode`
 * (`HTTP 503`, `status: 502`, axios' `Request failed with status code 500`), or before its reason
 * phrase (`503 Service Unavailable`, got's `Response code 429 (Too Many Requests)`). A bare number
 * (`order 503 not found`) is not one.
 */
const STATUS_IN_TEXT =
  /\b(?:HTTP(?:\/\d(?:\.\d)?)?|status(?:[ _-]?code)?(?: of)?)\s*[:=]?\s*([1-5]\d\d)\b|\b([1-5]\d\d)\s*[-:(]?\s*(?:Service Unavailable|Too Many Requests|Bad Gateway|Gateway Time-?out|Internal Server Error|Unauthori[sz]ed|Forbidden|Bad Request|Unprocessable (?:Entity|Content)|Request Time-?out)\b/i;

/** Messages of missing, invalid or expired credentials: the model cannot fix them. */
const CREDENTIALS =
  /\b(?:unauthori[sz]ed|unauthenticated|not authenticated|(?:invalid|incorrect|missing|expired|revoked)[ _-]?api[ _-]?key|api[ _-]?key (?:is )?(?:not valid|invalid|expired|revoked)|(?:invalid|expired|revoked)[ _-]?(?:(?:access|auth|bearer|refresh)[ _-]?)?token|(?:(?:access|auth|bearer|refresh) )?token (?:has |is )?expired|(?:invalid|missing)[ _-]?credentials|authentication (?:failed|required|error))\b/i;

/**
 * Messages of a permission refused for what the call names (a path, a resource): another argument
 * may be allowed (`Access denied - path outside allowed directories`, `permission denied: /etc`,
 * `EACCES: permission denied, open '/root/x'`, `Forbidden`).
 */
const PERMISSION =
  /\b(?:permission[ _-]denied|access[ _-](?:is[ _-])?denied|forbidden|operation not permitted|insufficient permissions?|outside (?:of )?(?:the )?allowed (?:directories|directory|paths?|roots?))\b/i;

/** System codes of a permission refused for a path. */
const PERMISSION_CODES: ReadonlySet<string> = new Set(["EACCES", "EPERM"]);

/**
 * How engines word a programming mistake in a `TypeError` (V8, SpiderMonkey, JavaScriptCore): a
 * property of `undefined`, a call of a non-function, a bad destructuring, a circular `JSON.stringify`...
 */
const CODE_TYPE_ERROR =
  /^Cannot (?:read|set|create|add|define|redefine|delete|assign to read only) propert|^Cannot destructure|^Cannot convert undefined or null|^Cannot mix BigInt|^Assignment to constant|^Converting circular structure|^Do not know how to serialize a BigInt|is not (?:a function|a constructor|iterable|an object)|cannot be invoked without 'new'|called on incompatible receiver|\bis (?:undefined|null)$/;

/**
 * A fault in the tool's own code, which other arguments cannot fix: a `ReferenceError`, an
 * `EvalError`, a stack overflow, a `SyntaxError` of code (not of JSON data, nor one that names bad
 * input such as an invalid regular expression), and a `TypeError` in an engine's words for a
 * programming mistake (`CODE_TYPE_ERROR`, without a system code). Any other `TypeError` (a tool's
 * own "units should be a string") is left to the other rules.
 */
function isToolCodeFault(name: string, text: string, code: string | undefined): boolean {
  switch (name) {
    case "ReferenceError":
    case "EvalError":
      return true;
    case "RangeError":
    case "InternalError": // SpiderMonkey's "too much recursion"
      return text.includes("call stack size exceeded") || text.includes("too much recursion");
    case "SyntaxError":
      return !text.includes("JSON") && !BAD_INPUT.test(text);
    case "TypeError":
      return code === undefined && CODE_TYPE_ERROR.test(text);
    default:
      return false;
  }
}

/** True when a tool's returned value means failure: a `ToolError`, the `{ error_code, message }` error shape, or MCP `isError: true`. */
export function isReturnedFailure(value: unknown): boolean {
  return ToolError.isInstance(value) || isToolErrorShape(value) || field(value, "isError") === true;
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
  if (shape !== undefined) return createToolError(shape);
  if (!readable(error)) return createToolError(unreadableErrorInit(error));
  const message = errorMessageOf(error);
  const name = field(error, "name");
  const status = httpStatus(error);
  const code = systemCode(error);
  const fail = (as: keyof typeof DEFAULT_SUGGESTED_ACTIONS) => failure(as, message, error);

  const timedOut =
    name === "TimeoutError" || code === "ETIMEDOUT" || code === "UND_ERR_CONNECT_TIMEOUT" || code === "UND_ERR_HEADERS_TIMEOUT";
  if (timedOut && status !== 429) return fail(ErrorCodes.TIMEOUT);
  const byStatus = transientCode(status);
  if (byStatus !== undefined) return fail(byStatus);
  if (code !== undefined && NETWORK_CODES.has(code)) return fail(ErrorCodes.TRANSIENT);
  // Not when its cause carries a code that is not a network hiccup (ENOTFOUND, an expired certificate): repeating cannot help.
  if (name === "TypeError" && code === undefined && FETCH_FAILED.test(message)) return fail(ErrorCodes.TRANSIENT);

  // Only the start of a huge message is read. A status field wins: then the text is not read for one.
  const text = message.length > 2000 ? message.slice(0, 2000) : message;
  let said = status;
  if (status === undefined) {
    const statusHint = STATUS_IN_TEXT.exec(text);
    if (statusHint !== null) {
      said = Number(statusHint[1] ?? statusHint[2]);
      const byText = transientCode(said);
      if (byText !== undefined) return fail(byText);
    }
  }
  // Credentials the model cannot fix win over a permission it may (another path, another resource).
  const credentials = CREDENTIALS.test(text);
  if (said === 401 || (said === 403 && credentials)) return fail(ErrorCodes.UNAUTHORIZED);
  if (said === 403) return fail(ErrorCodes.PERMISSION_DENIED);
  if (name !== "Error" && typeof name === "string") {
    // A fault of the tool's code: the unreadable failure's code, action and `details: { fault: "tool_code" }`, with its own message.
    if (isToolCodeFault(name, text, code)) return createToolError({ ...unreadableErrorInit(error), message });
    if (VALIDATION_NAMES.has(name)) return fail(ErrorCodes.INVALID_ARGUMENTS);
  }
  if (credentials) return fail(ErrorCodes.UNAUTHORIZED);
  if ((code !== undefined && PERMISSION_CODES.has(code)) || PERMISSION.test(text)) return fail(ErrorCodes.PERMISSION_DENIED);
  if (said === 400 || said === 422 || BAD_INPUT.test(text)) return fail(ErrorCodes.INVALID_ARGUMENTS);
  return fail(ErrorCodes.TOOL_FAILED);
}

/** The transient code of an HTTP status: 429, 408 and 5xx (not 501/505); any other, undefined. */
function transientCode(status: number | undefined): "RATE_LIMITED" | "TIMEOUT" | "TRANSIENT" | undefined {
  if (status === 429) return ErrorCodes.RATE_LIMITED;
  if (status === 408) return ErrorCodes.TIMEOUT;
  if (status !== undefined && status >= 500 && status !== 501 && status !== 505) return ErrorCodes.TRANSIENT;
  return undefined;
}

/** A failure of `code` with its default action: recoverable but for `UNAUTHORIZED`; a transient one with its `Retry-After` hint. */
function failure(code: keyof typeof DEFAULT_SUGGESTED_ACTIONS, message: string, cause: unknown): ToolError {
  const transient = code === ErrorCodes.TRANSIENT || code === ErrorCodes.TIMEOUT || code === ErrorCodes.RATE_LIMITED;
  return createToolError({
    code,
    message,
    recoverable: code !== ErrorCodes.UNAUTHORIZED,
    suggestedAction: DEFAULT_SUGGESTED_ACTIONS[code],
    retryAfterMs: transient ? retryAfterMsOf(cause) : undefined,
    cause,
  });
}
