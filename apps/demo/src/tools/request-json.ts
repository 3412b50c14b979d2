import { HttpError, parseRetryAfter } from "./http-error.js";

export interface JsonResponse {
  readonly status: number;
  readonly headers: Headers;
  readonly body: unknown;
}

export interface RequestJsonOptions {
  readonly method?: "GET" | "POST";
  readonly body?: unknown;
  readonly headers?: Record<string, string>;
  /** Gives up after this many milliseconds (a `TimeoutError`). */
  readonly timeoutMs?: number;
  /** The caller's signal (the agent run): its abort is rethrown as is. */
  readonly signal?: AbortSignal;
}

/** A fetch timeout, named like the platform's so that classifiers treat it as transient. */
export class RequestTimeoutError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "TimeoutError";
  }
}

/** A connection failure (reset, refused), with the system error code when there is one. */
export class NetworkError extends Error {
  readonly code: string | undefined;
  constructor(message: string, code: string | undefined, cause: unknown) {
    super(message, { cause });
    this.name = "NetworkError";
    this.code = code;
  }
}

function systemCode(error: unknown): string | undefined {
  let current: unknown = error;
  for (let depth = 0; depth < 4 && typeof current === "object" && current !== null; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === "string") return code;
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}

/** `fetch` with a timeout and a JSON body either way; throws on network errors and timeouts only. */
export async function requestJson(url: string, options: RequestJsonOptions = {}): Promise<JsonResponse> {
  const timeout = options.timeoutMs === undefined ? undefined : AbortSignal.timeout(options.timeoutMs);
  const signals = [options.signal, timeout].filter((signal): signal is AbortSignal => signal !== undefined);
  const signal = signals.length === 0 ? undefined : signals.length === 1 ? signals[0] : AbortSignal.any(signals);
  const path = new URL(url).pathname;
  let response: Response;
  try {
    response = await fetch(url, {
      method: options.method ?? "GET",
      headers: { ...(options.body === undefined ? {} : { "content-type": "application/json" }), ...options.headers },
      body: options.body === undefined ? undefined : JSON.stringify(options.body),
      signal,
    });
  } catch (error) {
    if (options.signal?.aborted) throw options.signal.reason;
    if (timeout?.aborted) throw new RequestTimeoutError(`${options.method ?? "GET"} ${path}: no response within ${options.timeoutMs} ms`);
    const code = systemCode(error);
    throw new NetworkError(`${options.method ?? "GET"} ${path}: connection failed${code ? ` (${code})` : ""}`, code, error);
  }
  const text = await response.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // not JSON: keep the text
  }
  return { status: response.status, headers: response.headers, body };
}

/** Throws an `HttpError` for a non-2xx answer, with the service's `error` text as the message. */
export function ensureOk(response: JsonResponse): unknown {
  if (response.status >= 200 && response.status < 300) return response.body;
  const body = response.body as { error?: unknown } | string;
  const detail = typeof body === "object" && body !== null && typeof body.error === "string" ? body.error : String(body);
  const headers: Record<string, string> = {};
  response.headers.forEach((value, name) => {
    headers[name] = value;
  });
  throw new HttpError({
    status: response.status,
    message: response.status >= 500 || response.status === 429 ? `HTTP ${response.status}: ${detail}` : detail,
    headers,
    retryAfterMs: parseRetryAfter(response.headers.get("retry-after")),
  });
}
