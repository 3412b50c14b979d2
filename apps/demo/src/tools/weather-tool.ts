import { tool } from "@langchain/core/tools";
import { z } from "zod";
import { ensureOk, requestJson } from "./request-json.js";
import { observeExecution, type ToolHooks } from "./tool-hooks.js";

/**
 * `get_weather({city, units})`. `units` is a free string on purpose: the reference example is the
 * service (not the schema) rejecting `kelvin`, so that the reflection prompt has work to do.
 */
export function createWeatherTool(baseUrl: string, hooks: ToolHooks = {}) {
  return tool(
    (args, config) =>
      observeExecution(hooks, "get_weather", args, async () => {
        const url = new URL("/weather", baseUrl);
        url.searchParams.set("city", args.city);
        url.searchParams.set("units", args.units);
        return ensureOk(await requestJson(url.toString(), { signal: config?.signal, timeoutMs: 5_000 }));
      }),
    {
      name: "get_weather",
      description:
        "Current temperature and condition for one city. Use it for current weather only, not forecasts. " +
        "Returns {temperature, condition}.",
      schema: z.object({
        city: z.string().describe("City name, e.g. NYC, London, Paris"),
        units: z.string().describe("Temperature units"),
      }),
      metadata: { effect: "read" },
    },
  );
}
