import { type HttpService, sendJson, startHttpService } from "./http-service.js";

/** One injected failure: an HTTP status, with `Retry-After` (seconds) for a 429. */
export interface InjectedFault {
  readonly status: number;
  readonly retryAfterSeconds?: number;
}

/** The default fault script: two 503s, then a 429 asking to wait three seconds, then success. */
export const DEFAULT_FLAKY_FAULTS: readonly InjectedFault[] = [{ status: 503 }, { status: 503 }, { status: 429, retryAfterSeconds: 3 }];

export interface FlakyApiService extends HttpService {
  readonly stats: { requests: number; failuresInjected: number };
}

const REASONS: Readonly<Record<number, string>> = {
  429: "Too Many Requests",
  500: "Internal Server Error",
  502: "Bad Gateway",
  503: "Service Unavailable",
  504: "Gateway Timeout",
};

/**
 * `GET /api/<path>`: answers the injected faults in order, then
 * `{"endpoint":"/orders/today","status":"ok","orders":42}` for every later request.
 */
export async function startFlakyApiService(faults: readonly InjectedFault[] = DEFAULT_FLAKY_FAULTS): Promise<FlakyApiService> {
  const stats = { requests: 0, failuresInjected: 0 };
  const pending = [...faults];
  const service = await startHttpService((request, response) => {
    stats.requests++;
    const url = new URL(request.url ?? "/", "http://localhost");
    const fault = pending.shift();
    if (fault) {
      stats.failuresInjected++;
      const headers: Record<string, string> = {};
      if (fault.retryAfterSeconds !== undefined) headers["retry-after"] = String(fault.retryAfterSeconds);
      return sendJson(response, fault.status, { error: REASONS[fault.status] ?? "Error" }, headers);
    }
    sendJson(response, 200, { endpoint: url.pathname.replace(/^\/api/, ""), status: "ok", orders: 42 });
  });
  return { ...service, stats };
}
