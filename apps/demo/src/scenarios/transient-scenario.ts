import { jsonOf } from "../model/conversation.js";
import { createApiCallTool } from "../tools/api-call-tool.js";
import { expectEqual, type Scenario } from "./scenario.js";
import { latestResult, reportedError } from "./script-helpers.js";

/** Scenario 2: 503, 503, 429 + Retry-After, then success: retried in place, no extra model call. */
export const transientScenario: Scenario = {
  id: 2,
  title: "Transient failures retried in place (503, 503, 429 + Retry-After)",
  shortName: "transient, in place",
  intro: () => [
    "The orders API answers 503, 503, then 429 with `Retry-After: 3`, then works.",
    "api_call is read-only, so the plugin repeats the same call in place after a backoff: 500 ms,",
    "1000 ms, then 3000 ms (the 2000 ms backoff raised to the server's Retry-After). No extra model call.",
  ],
  tools: (services, hooks) => [createApiCallTool(services.flakyApi.url, hooks)],
  script: (messages) => {
    const result = latestResult(messages);
    if (!result) return { toolCalls: [{ name: "api_call", args: { endpoint: "/orders/today" } }] };
    if (result.status === "error") return { text: `The orders API is failing: ${reportedError(result)}` };
    const body = jsonOf(result) as { orders?: number } | undefined;
    return { text: `${body?.orders ?? "?"} orders came in today.` };
  },
  turns: [{ user: "How many orders came in today?" }],
  evaluate: (stats, services) => {
    const problems: string[] = [];
    expectEqual(problems, "retries in place", stats.retriesInPlace, 3);
    expectEqual(problems, "reflections", stats.reflections, 0);
    expectEqual(problems, "model calls", stats.modelCalls, 2);
    expectEqual(problems, "tool executions", stats.toolExecutions, 4);
    expectEqual(problems, "orders API requests", services.flakyApi.stats.requests, 4);
    const rateLimited = stats.events.find((event) => event.type === "retry" && event.fields.error_code === "RATE_LIMITED");
    if (rateLimited?.type !== "retry" || rateLimited.fields.backoff_ms !== 3000) {
      problems.push("the 429 was not retried after its Retry-After (3000 ms)");
    }
    if (!/^42 orders/.test(stats.finalAnswer)) problems.push(`answer: ${stats.finalAnswer}`);
    return { outcome: problems.length === 0 ? "answered: 42 orders, no extra model call" : "unexpected", problems };
  },
};
