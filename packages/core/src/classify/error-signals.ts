import { asDelay } from "../errors/tool-error.js";

// What a failure says about itself, read field by field, never throwing: its message as text, its
// HTTP status and system code, whether it can be read at all, and its `Retry-After` hint.

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

/** The error's own HTTP status: `status`, `statusCode` or `response.status`. */
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
 * Turns anything a tool threw or returned into one line-safe text: strings as they are, errors by
 * their message, other values as JSON (circular references and BigInts handled), never throwing.
 */
export function errorMessageOf(error: unknown): string {
  if (typeof error === "string") return error;
  if (error === undefined) return "the tool failed without an error message (undefined)";
  if (error === null) return "the tool failed without an error message (null)";
  if (typeof error === "object") return readMessage(error) ?? safeJson(error);
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

// The `Retry-After` hint of a failure: its own fields, or the header where HTTP clients keep it.

/** Bounds of the `Retry-After` lookup in a plain header record. */
const MAX_HEADER_KEYS = 256;
const MAX_HEADER_VALUE_LENGTH = 64;

/** A header's value (the first of a list), as text; undefined when it is too long or not text. */
function headerValue(value: unknown): string | undefined {
  const first: unknown = Array.isArray(value) ? value[0] : value;
  if (typeof first === "string") return first.length <= MAX_HEADER_VALUE_LENGTH ? first : undefined;
  if (typeof first === "number" && Number.isFinite(first)) return String(first);
  return undefined;
}

/** The `Retry-After` header of a `Headers`-like object (`get`) or a plain record (any case), never throwing, bounded. */
function header(headers: unknown): string | undefined {
  if (typeof headers !== "object" || headers === null) return undefined;
  try {
    const bag = headers as Bag;
    const get = bag.get;
    if (typeof get === "function") return headerValue(get.call(headers, "retry-after"));
    // Node's IncomingHttpHeaders (lower case) and hand-made records first, then any case.
    const direct = bag["retry-after"] ?? bag["Retry-After"];
    if (direct !== undefined) return headerValue(direct);
    let seen = 0;
    for (const key in bag) {
      if (++seen > MAX_HEADER_KEYS) break;
      if (key.toLowerCase() === "retry-after" && Object.hasOwn(bag, key)) return headerValue(bag[key]);
    }
  } catch {
    // A hostile headers object: no hint.
  }
  return undefined;
}

/** The `Retry-After` header on one error: `headers`, `response.headers` (fetch, axios), `responseHeaders` (Vercel AI SDK). */
function retryAfterHeaderOn(error: Bag | undefined): string | undefined {
  return header(error?.headers) ?? header((error?.response as Bag | undefined)?.headers) ?? header(error?.responseHeaders);
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
    const holder = error as Bag;
    const own = asDelay(holder.retryAfterMs) ?? asDelay(holder.retry_after_ms);
    if (own !== undefined) return own;
    value = retryAfterHeaderOn(holder) ?? retryAfterHeaderOn(holder.cause as Bag | undefined);
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
