// What a failure says about itself, for the classifier: its message as text, its HTTP status and
// system code (read field by field, never throwing), whether it can be read at all, and the rules
// its name and message are matched against (network codes, validation names, status, credential
// and bad-input wording, an engine's words for a programming mistake).

export const NETWORK_CODES = new Set([
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

export const VALIDATION_NAMES = new Set([
  "ZodError",
  "ValidationError",
  "ToolInputParsingException",
  "InputValidationError",
  "SchemaError",
]);

/** Messages that name bad input. */
export const BAD_INPUT =
  /\b(invalid|must be|must not|expected|not supported|unsupported|supported:|is required|are required|missing (?:required )?(?:argument|parameter|field)|malformed|out of range|not allowed|unknown (?:argument|parameter|field|option))/i;

/**
 * An HTTP status said to be one: after `HTTP`, `HTTP/1.1`, `status`, `status code`, `statusCode`
 * (`HTTP 503`, `status: 502`, axios' `Request failed with status code 500`), or before its reason
 * phrase (`503 Service Unavailable`, got's `Response code 429 (Too Many Requests)`). A bare number
 * (`order 503 not found`) is not one.
 */
export const STATUS_IN_TEXT =
  /\b(?:HTTP(?:\/\d(?:\.\d)?)?|status(?:[ _-]?code)?(?: of)?)\s*[:=]?\s*([1-5]\d\d)\b|\b([1-5]\d\d)\s*[-:(]?\s*(?:Service Unavailable|Too Many Requests|Bad Gateway|Gateway Time-?out|Internal Server Error|Unauthori[sz]ed|Forbidden|Bad Request|Unprocessable (?:Entity|Content)|Request Time-?out)\b/i;

/** Messages of missing, invalid or expired credentials: the model cannot fix them. */
export const CREDENTIALS =
  /\b(?:unauthori[sz]ed|unauthenticated|not authenticated|(?:invalid|incorrect|missing|expired|revoked)[ _-]?api[ _-]?key|api[ _-]?key (?:is )?(?:not valid|invalid|expired|revoked)|(?:invalid|expired|revoked)[ _-]?(?:(?:access|auth|bearer|refresh)[ _-]?)?token|(?:(?:access|auth|bearer|refresh) )?token (?:has |is )?expired|(?:invalid|missing)[ _-]?credentials|authentication (?:failed|required|error))\b/i;

/**
 * Messages of a permission refused for what the call names (a path, a resource): another argument
 * may be allowed (`Access denied - path outside allowed directories`, `permission denied: /etc`,
 * `EACCES: permission denied, open '/root/x'`, `Forbidden`).
 */
export const PERMISSION =
  /\b(?:permission[ _-]denied|access[ _-](?:is[ _-])?denied|forbidden|operation not permitted|insufficient permissions?|outside (?:of )?(?:the )?allowed (?:directories|directory|paths?|roots?))\b/i;

/** System codes of a permission refused for a path. */
export const PERMISSION_CODES: ReadonlySet<string> = new Set(["EACCES", "EPERM"]);

/**
 * `STATUS_IN_TEXT`, `CREDENTIALS`, `PERMISSION` and `BAD_INPUT` in one scan: most messages hold none
 * of them, and this runs on every failure that no status field or system code explains. Only on a
 * hit is each kind looked for on its own (several may be said).
 */
export const TEXT_HINTS = new RegExp(`${STATUS_IN_TEXT.source}|${CREDENTIALS.source}|${PERMISSION.source}|${BAD_INPUT.source}`, "i");

/**
 * How engines word a programming mistake in a `TypeError` (V8, SpiderMonkey, JavaScriptCore): a
 * property of `undefined`, a call of a non-function, a bad destructuring, a circular `JSON.stringify`...
 */
const CODE_TYPE_ERROR =
  /^Cannot (?:read|set|create|add|define|redefine|delete|assign to read only) propert|^Cannot destructure|^Cannot convert undefined or null|^Cannot mix BigInt|^Assignment to constant|^Converting circular structure|^Do not know how to serialize a BigInt|is not (?:a function|a constructor|iterable|an object)|cannot be invoked without 'new'|called on incompatible receiver|\bis (?:undefined|null)$/;

type Bag = Record<string, unknown>;

export function field(value: unknown, key: string): unknown {
  if (typeof value !== "object" || value === null) return undefined;
  try {
    return (value as Bag)[key];
  } catch {
    return undefined;
  }
}

function asStatus(candidate: unknown): number | undefined {
  return typeof candidate === "number" && candidate >= 100 && candidate <= 599 ? candidate : undefined;
}

// Read field by field, without building arrays: this runs on every failure.
export function httpStatus(error: unknown): number | undefined {
  return asStatus(field(error, "status")) ?? asStatus(field(error, "statusCode")) ?? asStatus(field(field(error, "response"), "status"));
}

export function systemCode(error: unknown): string | undefined {
  const own = field(error, "code");
  if (typeof own === "string") return own;
  const ofCause = field(field(error, "cause"), "code");
  return typeof ofCause === "string" ? ofCause : undefined;
}

/** False for an object whose `message` cannot even be read (a throwing getter, a proxy trap, a revoked proxy). */
export function readable(error: unknown): boolean {
  if (typeof error !== "object" || error === null) return true;
  try {
    void (error as Bag).message;
    return true;
  } catch {
    return false;
  }
}

/**
 * A fault in the tool's own code, which other arguments cannot fix: a `ReferenceError`, an
 * `EvalError`, a stack overflow, a `SyntaxError` of code (not of JSON data, nor one that names bad
 * input such as an invalid regular expression), and a `TypeError` in an engine's words for a
 * programming mistake (`CODE_TYPE_ERROR`, without a system code). Any other `TypeError` (a tool's
 * own "units should be a string") is left to the other rules.
 */
export function isToolCodeFault(name: string, text: string, code: string | undefined): boolean {
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

/**
 * Turns anything a tool threw or returned into one line-safe text: strings as they are, errors by
 * their message, other values as JSON (circular references and BigInts handled), never throwing.
 */
export function errorMessageOf(error: unknown): string {
  if (typeof error === "string") return error;
  if (error === undefined) return "the tool failed without an error message (undefined)";
  if (error === null) return "the tool failed without an error message (null)";
  if (typeof error === "object") {
    const message = readMessage(error);
    if (message !== undefined) return message;
    return safeJson(error);
  }
  if (typeof error === "function") return `the tool failed with a function (${error.name || "anonymous"})`;
  return String(error);
}

function readMessage(error: object): string | undefined {
  try {
    const { message, name } = error as { message?: unknown; name?: unknown };
    if (typeof message === "string" && message.length > 0) return message;
    if (error instanceof Error) return typeof name === "string" && name ? name : "Error";
    const content = (error as { content?: unknown }).content;
    if (Array.isArray(content)) {
      const texts = content
        .map((part: unknown) => (typeof part === "object" && part !== null ? (part as { text?: unknown }).text : undefined))
        .filter((text): text is string => typeof text === "string");
      if (texts.length > 0) return texts.join("\n");
    }
    if (typeof content === "string" && content.length > 0) return content;
  } catch {
    // A getter that throws: fall through to JSON.
  }
  return undefined;
}

/** JSON that never throws: BigInts as strings, circular references as "[Circular]". */
export function safeJson(value: object): string {
  const seen = new WeakSet<object>();
  try {
    const json = JSON.stringify(value, (_key, item: unknown) => {
      if (typeof item === "bigint") return item.toString();
      if (typeof item === "object" && item !== null) {
        if (seen.has(item)) return "[Circular]";
        seen.add(item);
      }
      return item;
    });
    return json === undefined ? typeTag(value) : json;
  } catch {
    return typeTag(value);
  }
}

function typeTag(value: object): string {
  try {
    return Object.prototype.toString.call(value);
  } catch {
    // A proxy whose traps throw (even on Symbol.toStringTag).
    return "[object Object]";
  }
}
