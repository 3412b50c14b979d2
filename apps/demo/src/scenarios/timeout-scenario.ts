import { jsonOf } from "../model/conversation.js";
import { createReportTool } from "../tools/report-tool.js";
import { expectEqual, type Scenario } from "./scenario.js";
import { latestResult, reportedError } from "./script-helpers.js";

const PERIOD = "2025-W14";

/** Scenario 7: a hung tool call is cut off by `attemptTimeoutMs`, its signal aborted, and retried in place. */
export const timeoutScenario: Scenario = {
  id: 7,
  title: "Attempt timeout: a hung report call is cut off and retried in place",
  shortName: "hung tool, timeout",
  intro: (timing) => [
    "The reporting service never answers the first request (a stuck query); the next one works.",
    `generate_report has no timeout of its own. The plugin gives each attempt ${timing.reportTimeoutMs} ms:`,
    `tools: { generate_report: { attemptTimeoutMs: ${timing.reportTimeoutMs} } }. Past it, the attempt's context.signal aborts`,
    "and the attempt fails with TIMEOUT (transient): retried in place after the backoff, no extra model call.",
  ],
  pluginOptions: (timing) => ({ tools: { generate_report: { attemptTimeoutMs: timing.reportTimeoutMs } } }),
  serviceFaults: { reportHangs: 1 },
  tools: (services, hooks) => [createReportTool(services.report.url, hooks)],
  script: (messages) => {
    const result = latestResult(messages);
    if (!result) return { toolCalls: [{ name: "generate_report", args: { period: PERIOD } }] };
    if (result.status === "error") return { text: `I could not get the report: ${reportedError(result)}` };
    const report = jsonOf(result) as { orders?: number; revenue_eur?: number; top_product?: string } | undefined;
    return {
      text:
        `Week 14 of 2025: ${report?.orders ?? "?"} orders, ${report?.revenue_eur ?? "?"} EUR of revenue; ` +
        `the best seller was ${report?.top_product ?? "?"}.`,
    };
  },
  turns: [{ user: "Can I have the sales report for week 14 of 2025?" }],
  evaluate: (stats, services) => {
    const problems: string[] = [];
    expectEqual(problems, "attempts timed out", stats.attemptsTimedOut, 1);
    expectEqual(problems, "tool signals aborted", stats.signalsAborted, 1);
    expectEqual(problems, "retries in place", stats.retriesInPlace, 1);
    expectEqual(problems, "reflections", stats.reflections, 0);
    expectEqual(problems, "generate_report executions", stats.executionsByTool.generate_report ?? 0, 2);
    expectEqual(problems, "model calls", stats.modelCalls, 2);
    expectEqual(problems, "report requests", services.report.stats.requests, 2);
    // The tool honoured its signal: the service saw the hung request's client hang up.
    expectEqual(problems, "hung requests abandoned by the tool", services.report.stats.abandoned, 1);
    const retry = stats.events.find((event) => event.type === "retry");
    if (retry?.type !== "retry" || retry.fields.error_code !== "TIMEOUT" || retry.fields.mode !== "in_place")
      problems.push("the timeout was not retried in place as TIMEOUT");
    if (!stats.events.some((event) => event.type === "retry_succeeded" && event.fields.attempt === 2))
      problems.push('no "retry succeeded" event with attempt=2');
    if (!/1284 orders/.test(stats.finalAnswer)) problems.push(`answer: ${stats.finalAnswer}`);
    return {
      outcome: problems.length === 0 ? "hung attempt cut off, retried: report delivered" : "unexpected",
      problems,
    };
  },
};
