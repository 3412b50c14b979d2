import { type HttpService, sendJson, startHttpService } from "./http-service.js";

const SUPPORTED_UNITS = ["celsius", "fahrenheit"] as const;

/** Current conditions in celsius, by lower-cased city name. */
const CONDITIONS: Readonly<Record<string, { temperature: number; condition: string }>> = {
  nyc: { temperature: 22, condition: "sunny" },
  london: { temperature: 14, condition: "drizzle" },
  paris: { temperature: 18, condition: "cloudy" },
};

export interface WeatherService extends HttpService {
  readonly stats: { requests: number };
}

/**
 * `GET /weather?city=NYC&units=celsius` → `{"temperature":22,"condition":"sunny"}`.
 * Rejects any other unit with HTTP 400 and the reference example's message
 * `Invalid units. Supported: celsius, fahrenheit`.
 */
export async function startWeatherService(): Promise<WeatherService> {
  const stats = { requests: 0 };
  const service = await startHttpService((request, response) => {
    stats.requests++;
    const url = new URL(request.url ?? "/", "http://localhost");
    if (url.pathname !== "/weather") return sendJson(response, 404, { error: `No route ${url.pathname}` });
    const units = url.searchParams.get("units") ?? "celsius";
    if (!(SUPPORTED_UNITS as readonly string[]).includes(units)) {
      return sendJson(response, 400, { error: `Invalid units. Supported: ${SUPPORTED_UNITS.join(", ")}` });
    }
    const city = (url.searchParams.get("city") ?? "").trim().toLowerCase();
    const conditions = CONDITIONS[city];
    if (!conditions) {
      return sendJson(response, 404, { error: `Unknown city '${city}'. Known: ${Object.keys(CONDITIONS).join(", ")}` });
    }
    const temperature = units === "fahrenheit" ? Math.round((conditions.temperature * 9) / 5 + 32) : conditions.temperature;
    sendJson(response, 200, { temperature, condition: conditions.condition });
  });
  return { ...service, stats };
}
