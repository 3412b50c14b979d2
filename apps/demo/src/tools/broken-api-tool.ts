import { tool } from "@langchain/core/tools";
import { z } from "zod";
import { ensureOk, requestJson } from "./request-json.js";
import { observeExecution, type ToolHooks } from "./tool-hooks.js";

/** `broken_api({warehouse})`: reads stock from the inventory API, which is down until repaired. */
export function createBrokenApiTool(baseUrl: string, hooks: ToolHooks = {}) {
  return tool(
    (args, config) =>
      observeExecution(hooks, "broken_api", args, async () => {
        const url = new URL("/inventory", baseUrl);
        url.searchParams.set("warehouse", args.warehouse);
        return ensureOk(await requestJson(url.toString(), { signal: config?.signal, timeoutMs: 5_000 }));
      }),
    {
      name: "broken_api",
      description: "Reads the stock level of one warehouse from the inventory API. Read-only.",
      schema: z.object({ warehouse: z.string().describe("Warehouse name, e.g. east") }),
      metadata: { effect: "read" },
    },
  );
}
