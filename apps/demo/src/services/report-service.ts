import { type HttpService, sendJson, startHttpService } from "./http-service.js";

export interface ReportServiceStats {
  requests: number;
  /** Requests the service held without ever answering (its injected hang). */
  hung: number;
  /** Held requests whose client hung up (the tool aborted its request). */
  abandoned: number;
  /** Reports answered. */
  answered: number;
}

export interface ReportService extends HttpService {
  readonly stats: ReportServiceStats;
}

/**
 * `GET /report?period=2025-W14` → `{"period":"2025-W14","orders":1284,"revenue_eur":98250,...}`.
 * The first `hangs` requests are held: no answer ever comes (a stuck query on the reporting
 * database). When the client gives up and closes the connection, the request counts as abandoned.
 * `onHeld` is told each time a request is held (the demo's virtual time may then move on).
 */
export async function startReportService(hangs = 1, onHeld?: () => void): Promise<ReportService> {
  const stats: ReportServiceStats = { requests: 0, hung: 0, abandoned: 0, answered: 0 };
  let hangsLeft = hangs;
  const service = await startHttpService((request, response) => {
    stats.requests++;
    const url = new URL(request.url ?? "/", "http://localhost");
    if (url.pathname !== "/report") return sendJson(response, 404, { error: `No route ${url.pathname}` });
    if (hangsLeft > 0) {
      hangsLeft--;
      stats.hung++;
      // Never answered: the response stays open until the client hangs up (or the service closes).
      response.on("close", () => {
        if (!response.writableEnded) stats.abandoned++;
      });
      onHeld?.();
      return;
    }
    stats.answered++;
    sendJson(response, 200, {
      period: url.searchParams.get("period") ?? "?",
      orders: 1284,
      revenue_eur: 98_250,
      top_product: "espresso beans",
    });
  });
  return { ...service, stats };
}
