import { type HttpService, sendJson, startHttpService } from "./http-service.js";

export interface ShippingServiceStats {
  requests: number;
  /** Requests answered 503 during the outage. */
  failures: number;
  /** When the outage began: the clock's time of the first request (the outage starts with it). */
  downSince: number | undefined;
}

export interface ShippingService extends HttpService {
  readonly stats: ShippingServiceStats;
  /** How long the outage lasts from the first request, in ms. */
  readonly outageMs: number;
}

/**
 * `GET /orders/<id>/tracking` → `{"order_id":"1042","status":"in transit","carrier":"DHL","eta":"2025-04-09"}`.
 * The shipping API is down (a deploy) for `outageMs` from its first request, by `now` (the
 * scenario's clock, virtual or real): until then every request gets `503 Service Unavailable`.
 */
export async function startShippingService(outageMs: number, now: () => number): Promise<ShippingService> {
  const stats: ShippingServiceStats = { requests: 0, failures: 0, downSince: undefined };
  const service = await startHttpService((request, response) => {
    stats.requests++;
    const url = new URL(request.url ?? "/", "http://localhost");
    const match = /^\/orders\/([^/]+)\/tracking$/.exec(url.pathname);
    if (!match) return sendJson(response, 404, { error: `No route ${url.pathname}` });
    const at = now();
    stats.downSince ??= at;
    if (at - stats.downSince < outageMs) {
      stats.failures++;
      return sendJson(response, 503, { error: "Service Unavailable: the shipping API is being redeployed" });
    }
    sendJson(response, 200, { order_id: decodeURIComponent(match[1] ?? ""), status: "in transit", carrier: "DHL", eta: "2025-04-09" });
  });
  return { ...service, stats, outageMs };
}
