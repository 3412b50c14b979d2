/**
 * An HTTP answer the tool treats as a failure. Carries the status and the `Retry-After` hint
 * so that the engine's classifier sees a 429/5xx as transient and honours the hint.
 */
export class HttpError extends Error {
  readonly status: number;
  /** `Retry-After`, converted to milliseconds. */
  readonly retryAfterMs: number | undefined;
  readonly headers: Readonly<Record<string, string>>;

  constructor(init: { status: number; message: string; headers?: Record<string, string>; retryAfterMs?: number }) {
    super(init.message);
    this.name = "HttpError";
    this.status = init.status;
    this.headers = init.headers ?? {};
    this.retryAfterMs = init.retryAfterMs;
  }
}

/** `Retry-After` as seconds or an HTTP date, in milliseconds; undefined when absent or unreadable. */
export function parseRetryAfter(value: string | null, now: number = Date.now()): number | undefined {
  if (value === null || value.trim() === "") return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}
