import { jsonOf } from "../model/conversation.js";
import { createApiCallTool } from "../tools/api-call-tool.js";
import { createExitLoopTool } from "../tools/exit-loop-tool.js";
import { expectEqual, type Scenario } from "./scenario.js";
import { latestResult, reportedError } from "./script-helpers.js";

/** Scenario 6: the control-flow tool `exit_loop` is excluded: the plugin leaves it untouched. */
export const exitLoopScenario: Scenario = {
  id: 6,
  title: "Excluded control-flow tool: exit_loop passes through untouched",
  shortName: "excluded exit_loop",
  intro: () => [
    'excludeTools: ["exit_loop"]. api_call is handled by the plugin; exit_loop runs as a plain call:',
    "no attempt tracking, no breaker, no events, no span. It ends the agent loop (returnDirect).",
  ],
  serviceFaults: { flakyFaults: [] },
  tools: (services, hooks) => [createApiCallTool(services.flakyApi.url, hooks), createExitLoopTool(hooks)],
  script: (messages) => {
    const result = latestResult(messages);
    if (!result) return { toolCalls: [{ name: "api_call", args: { endpoint: "/orders/today" } }] };
    if (result.status === "error") return { text: `The orders API failed: ${reportedError(result)}` };
    const body = jsonOf(result) as { orders?: number } | undefined;
    return { text: "(task complete)", toolCalls: [{ name: "exit_loop", args: { reason: `orders checked: ${body?.orders ?? "?"}` } }] };
  },
  turns: [{ user: "Check today's orders, then end the loop." }],
  evaluate: (stats) => {
    const problems: string[] = [];
    expectEqual(problems, "exit_loop executions", stats.executionsByTool.exit_loop ?? 0, 1);
    expectEqual(problems, "exit_loop calls seen by the plugin", stats.callsHandledByTool.exit_loop ?? 0, 0);
    expectEqual(problems, "api_call calls seen by the plugin", stats.callsHandledByTool.api_call ?? 0, 1);
    expectEqual(problems, "events about exit_loop", stats.events.filter((event) => event.toolName === "exit_loop").length, 0);
    expectEqual(problems, "model calls", stats.modelCalls, 2);
    const last = stats.toolResults[stats.toolResults.length - 1];
    if (last?.toolName !== "exit_loop" || last.content !== "Loop ended: orders checked: 42")
      problems.push(`last tool result: ${last?.content ?? "none"}`);
    return { outcome: problems.length === 0 ? "loop ended by exit_loop; plugin not involved" : "unexpected", problems };
  },
};
