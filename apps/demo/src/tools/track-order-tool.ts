import { tool } from "@langchain/core/tools";
import { z } from "zod";
import { ensureOk, requestJson } from "./request-json.js";
import { observeExecution, type ToolHooks } from "./tool-hooks.js";

/** `track_order({order_id})`: reads an order's shipment from the shipping API (GET). Read-only, so safe to repeat. */
export function createTrackOrderTool(baseUrl: string, hooks: ToolHooks = {}) {
  return tool(
    (args, config) =>
      observeExecution(hooks, "track_order", args, async () => {
        const url = new URL(`/orders/${encodeURIComponent(args.order_id)}/tracking`, baseUrl);
        return ensureOk(await requestJson(url.toString(), { signal: config?.signal, timeoutMs: 5_000 }));
      }),
    {
      name: "track_order",
      description: "Reads where an order's shipment is, from the shipping API (GET). Read-only.",
      schema: z.object({ order_id: z.string().describe("The order number, e.g. 1042") }),
      metadata: { effect: "read" },
    },
  );
}
