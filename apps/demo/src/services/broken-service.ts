import { type HttpService, sendJson, startHttpService } from "./http-service.js";

export interface BrokenService extends HttpService {
  readonly stats: { requests: number; failures: number };
  /** From now on the service answers 200 (the on-call engineer fixed it). */
  repair(): void;
  readonly repaired: boolean;
}

/** `GET /inventory`: HTTP 500 on every request until `repair()`, then `{"items":128}`. */
export async function startBrokenService(): Promise<BrokenService> {
  const stats = { requests: 0, failures: 0 };
  let repaired = false;
  const service = await startHttpService((_request, response) => {
    stats.requests++;
    if (!repaired) {
      stats.failures++;
      return sendJson(response, 500, { error: "Internal Server Error: database connection pool exhausted" });
    }
    sendJson(response, 200, { items: 128, warehouse: "east" });
  });
  return {
    ...service,
    stats,
    repair: () => {
      repaired = true;
    },
    get repaired() {
      return repaired;
    },
  };
}
