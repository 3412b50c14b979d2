import { tool } from "@langchain/core/tools";
import { z } from "zod";
import { ensureOk, requestJson } from "./request-json.js";
import { observeExecution, type ToolHooks } from "./tool-hooks.js";

/** `api_call({endpoint})`: a GET on the (flaky) orders API. Read-only, so safe to repeat. */
export function createApiCallTool(baseUrl: string, hooks: ToolHooks = {}) {
  return tool(
    (args, config) =>
      observeExecution(hooks, "api_call", args, async () => {
        const path = args.endpoint.startsWith("/") ? args.endpoint : `/${args.endpoint}`;
        return ensureOk(await requestJson(new URL(`/api${path}`, baseUrl).toString(), { signal: config?.signal, timeoutMs: 5_000 }));
      }),
    {
      name: "api_call",
      description: "Reads one endpoint of the orders API (GET). Read-only. Returns the endpoint's JSON.",
      schema: z.object({ endpoint: z.string().describe("Path of the endpoint, e.g. /orders/today") }),
      metadata: { effect: "read" },
    },
  );
}
