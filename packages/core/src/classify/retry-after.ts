// The `Retry-After` hint of a failure: its own fields, or the header where HTTP clients keep it.
// Runs on every transient failure: named reads, bounded, never throwing.

type Bag = Record<string, unknown>;

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
    const bag = headers as Bag;
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
