import type { BaseMessage } from "@langchain/core/messages";
import { HumanMessage } from "@langchain/core/messages";
import { jsonOf, textOf } from "../model/conversation.js";
import { createSendEmailTool } from "../tools/send-email-tool.js";
import { expectEqual, type Scenario } from "./scenario.js";
import { latestResult, reportedError } from "./script-helpers.js";

const EMAIL = {
  to: "ops@example.com",
  subject: "Weekly report",
  body: "Orders are up 12% this week. Full numbers attached.",
  idempotency_key: "weekly-report-2025-w14",
};

function lastUserText(messages: readonly BaseMessage[]): string {
  for (let index = messages.length - 1; index >= 0; index--) {
    const message = messages[index];
    if (message !== undefined && HumanMessage.isInstance(message)) return textOf(message);
  }
  return "";
}

/** Scenario 4: the first response of `send_email` is lost; the email still goes out exactly once. */
export const idempotencyScenario: Scenario = {
  id: 4,
  title: "Idempotency: send_email's first response is lost, one email goes out",
  shortName: "lost email response",
  intro: (timing) => [
    `The email service sends the email, then never answers; the tool gives up after ${timing.emailTimeoutMs} ms.`,
    "send_email is a write with an idempotency_key: the plugin may repeat it in place, and the tool",
    "forwards the key as an Idempotency-Key header. Then the user asks to send it again.",
  ],
  serviceFaults: { emailLostResponse: "timeout" },
  tools: (services, hooks, timing) => [createSendEmailTool(services.email.url, hooks, timing.emailTimeoutMs)],
  script: (messages) => {
    const result = latestResult(messages);
    const again = /again/i.test(lastUserText(messages));
    if (!result) {
      return again
        ? { text: "(the same email, so the same idempotency key)", toolCalls: [{ name: "send_email", args: EMAIL }] }
        : { toolCalls: [{ name: "send_email", args: EMAIL }] };
    }
    if (result.status === "error") return { text: `I could not confirm the email: ${reportedError(result)}` };
    const sent = jsonOf(result) as { id?: string } | undefined;
    return again
      ? { text: `Done: the email service confirms message ${sent?.id ?? "?"}; it was not sent a second time.` }
      : { text: `The weekly report is sent to ops@example.com (message ${sent?.id ?? "?"}).` };
  },
  turns: [
    { user: "Send the weekly report to ops@example.com." },
    { user: "I don't see it in my inbox yet. Please send it again.", continues: true },
  ],
  evaluate: (stats, services) => {
    const problems: string[] = [];
    expectEqual(problems, "emails actually sent", services.email.stats.sent, 1);
    expectEqual(problems, "responses lost", services.email.stats.responsesLost, 1);
    expectEqual(problems, "retries in place", stats.retriesInPlace, 1);
    expectEqual(problems, "guard replays", stats.guardReplays, 1);
    expectEqual(problems, "service deduplications", stats.serviceDeduplicated, 1);
    expectEqual(problems, "send_email executions", stats.executionsByTool.send_email ?? 0, 2);
    expectEqual(problems, "model calls", stats.modelCalls, 4);
    return {
      outcome:
        problems.length === 0 ? `1 email sent, ${stats.guardReplays + stats.serviceDeduplicated} duplicates prevented` : "unexpected",
      problems,
    };
  },
};
