import { tool } from "@langchain/core/tools";
import { z } from "zod";
import { ensureOk, requestJson } from "./request-json.js";
import { observeExecution, type ToolHooks } from "./tool-hooks.js";

/** The weather service's answer for `{city, units}`: `{temperature, condition}`; throws an `HttpError` otherwise. */
async function fetchWeather(baseUrl: string, args: { city: string; units: string }, signal?: AbortSignal): Promise<unknown> {
  const url = new URL("/weather", baseUrl);
  url.searchParams.set("city", args.city);
  url.searchParams.set("units", args.units);
  return ensureOk(await requestJson(url.toString(), { signal, timeoutMs: 5_000 }));
}

/** What `get_weather` tells the model it does (every adapter's engine gives its host's tool the same). */
const WEATHER_TOOL_DESCRIPTION =
  "Current temperature and condition for one city. Use it for current weather only, not forecasts. Returns {temperature, condition}.";

/**
 * `get_weather({city, units})`. `units` is a free string on purpose: the reference example is the
 * service (not the schema) rejecting `kelvin`, so that the reflection prompt has work to do.
 */
export function createWeatherTool(baseUrl: string, hooks: ToolHooks = {}) {
  return tool((args, config) => observeExecution(hooks, "get_weather", args, () => fetchWeather(baseUrl, args, config?.signal)), {
    name: "get_weather",
    description: WEATHER_TOOL_DESCRIPTION,
    schema: z.object({
      city: z.string().describe("City name, e.g. NYC, London, Paris"),
      units: z.string().describe("Temperature units"),
    }),
    metadata: { effect: "read" },
  });
}
