import { type HttpService, sendJson, startHttpService } from "./http-service.js";

export interface QuotaService extends HttpService {
  readonly stats: { requests: number };
}

/**
 * `POST /translate`: the daily quota is used up. Answers HTTP 403 with a structured,
 * non-recoverable error `{ error_code: "QUOTA_EXCEEDED", message, recoverable: false, suggested_action }`.
 */
export async function startQuotaService(): Promise<QuotaService> {
  const stats = { requests: 0 };
  const service = await startHttpService((_request, response) => {
    stats.requests++;
    sendJson(response, 403, {
      error_code: "QUOTA_EXCEEDED",
      message: "The API quota for this tool has been reached for today.",
      recoverable: false,
      suggested_action: "Inform the user and stop. Do not retry this tool today.",
    });
  });
  return { ...service, stats };
}
