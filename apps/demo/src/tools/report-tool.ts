import { tool } from "@langchain/core/tools";
import { getToolContext } from "@retry-reflect/langchain";
import { z } from "zod";
import { ensureOk, requestJson } from "./request-json.js";
import { observeExecution, type ToolHooks } from "./tool-hooks.js";

/**
 * `generate_report({period})`: asks the reporting service for one week's sales report. Read-only.
 * It has no timeout of its own: the plugin's `attemptTimeoutMs` is its limit. It honours the
 * attempt's `context.signal` (`getToolContext()` under the middleware; the `signal` the core loop
 * passes to `invoke`): when the plugin cuts the attempt off, its HTTP request is cancelled at once
 * instead of staying open.
 */
export function createReportTool(baseUrl: string, hooks: ToolHooks = {}) {
  return tool(
    (args, config) => {
      const signal = getToolContext()?.signal ?? config?.signal;
      return observeExecution(
        hooks,
        "generate_report",
        args,
        async () => {
          const url = new URL("/report", baseUrl);
          url.searchParams.set("period", args.period);
          return ensureOk(await requestJson(url.toString(), { signal }));
        },
        signal,
      );
    },
    {
      name: "generate_report",
      description: "Generates the sales report of one ISO week (orders, revenue, top product). Read-only. Returns the report's JSON.",
      schema: z.object({ period: z.string().describe("ISO week, e.g. 2025-W14") }),
      metadata: { effect: "read" },
    },
  );
}
