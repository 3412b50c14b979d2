import { structuredErrorOf } from "../model/conversation.js";
import { createTranslateTool } from "../tools/translate-tool.js";
import { expectEqual, type Scenario } from "./scenario.js";
import { latestResult, mustStop, reportedError } from "./script-helpers.js";

/** Scenario 5: a non-recoverable QUOTA_EXCEEDED: the model is told to stop and tells the user. */
export const quotaScenario: Scenario = {
  id: 5,
  title: "Not recoverable: QUOTA_EXCEEDED stops at once",
  shortName: "QUOTA_EXCEEDED",
  intro: () => [
    "The translation API returns a structured error { error_code, message, recoverable, suggested_action }: QUOTA_EXCEEDED, recoverable: false.",
    "No retry, no reflection: the model is told to inform the user and stop.",
  ],
  tools: (services, hooks) => [createTranslateTool(services.quota.url, hooks)],
  script: (messages) => {
    const result = latestResult(messages);
    if (!result) return { toolCalls: [{ name: "translate_text", args: { text: "Good morning, team!", target_language: "fr" } }] };
    if (mustStop(result)) {
      const code = structuredErrorOf(result)?.error_code ?? "an error";
      return {
        text: `I can't translate this today: the translation service reports ${code} (${reportedError(result)}). Please try again tomorrow.`,
      };
    }
    if (result.status === "error")
      return { toolCalls: [{ name: "translate_text", args: { text: "Good morning, team!", target_language: "fr" } }] };
    return { text: "Bonjour à toute l'équipe !" };
  },
  turns: [{ user: "Translate 'Good morning, team!' into French." }],
  evaluate: (stats, services) => {
    const problems: string[] = [];
    expectEqual(problems, "tool executions", stats.toolExecutions, 1);
    expectEqual(problems, "translation API requests", services.quota.stats.requests, 1);
    expectEqual(problems, "model calls", stats.modelCalls, 2);
    expectEqual(problems, "retries", stats.retriesInPlace + stats.reflections, 0);
    const result = stats.toolResults[0];
    if (result?.status !== "error" || !result.content.includes("QUOTA_EXCEEDED")) problems.push("the model did not receive QUOTA_EXCEEDED");
    if (!/QUOTA_EXCEEDED/.test(stats.finalAnswer)) problems.push(`answer: ${stats.finalAnswer}`);
    return { outcome: problems.length === 0 ? "stopped; the user is told about the quota" : "unexpected", problems };
  },
};
