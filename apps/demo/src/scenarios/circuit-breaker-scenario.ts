import type { BaseMessage } from "@langchain/core/messages";
import { jsonOf } from "../model/conversation.js";
import type { ScriptedReply } from "../model/scripted-chat-model.js";
import { createBrokenApiTool } from "../tools/broken-api-tool.js";
import { type DemoTiming, expectEqual, type Scenario } from "./scenario.js";
import { latestResult, mustStop, reportedError, temporaryWaitSeconds } from "./script-helpers.js";

/** Consecutive failures that open the breaker (scenario 9 uses the same); the library's default is 10. */
export const THRESHOLD = 5;

/** How long after the repair the user asks again: the circuit then has half the call's patience left. */
function askAgainAfterMs(timing: DemoTiming): number {
  return Math.max(0, timing.circuitBreakerResetMs - timing.circuitPatienceMs / 2);
}

/**
 * The inventory questions' script (scenario 9's replicas use it too): call `broken_api` once;
 * tell the user what the plugin said: the stock, the tool being temporarily unavailable (with
 * the wait), or the failure.
 */
export function inventoryScript(messages: readonly BaseMessage[]): ScriptedReply {
  const result = latestResult(messages);
  if (!result) return { toolCalls: [{ name: "broken_api", args: { warehouse: "east" } }] };
  if (result.status === "error") {
    const wait = temporaryWaitSeconds(result);
    if (wait !== undefined && !mustStop(result))
      return {
        text: `The inventory API is temporarily unavailable (${reportedError(result).replace(/\.$/, "")}); it may work again in about ${wait} s. Please ask me again then.`,
      };
    return { text: `I can't read the inventory right now: ${reportedError(result)}` };
  }
  const body = jsonOf(result) as { items?: number } | undefined;
  return { text: `The east warehouse has ${body?.items ?? "?"} items.` };
}

/**
 * Scenario 3: a broken tool opens its breaker; a call that meets the fresh open circuit is turned
 * away at once with the wait; after the repair, a call that meets it near its end waits for the
 * half-open probe, which closes it.
 */
export const circuitBreakerScenario: Scenario = {
  id: 3,
  title: "Circuit breaker: a broken tool opens it, a waiting call's probe closes it",
  shortName: "circuit breaker",
  intro: (timing) => [
    "The inventory API answers HTTP 500 every time, until it is repaired. This scenario's options, on top of the defaults:",
    `circuitBreakerThreshold: ${THRESHOLD} (default 10), so that two requests open the breaker, and circuitBreakerResetMs: ${timing.circuitBreakerResetMs}`,
    `with patienceMs: ${timing.circuitPatienceMs} (defaults 1000 and 15000, with which a call would always wait for the probe): the open time longer than the patience.`,
    "So a call that meets the freshly opened circuit is turned away at once, told when the tool may work again; a call",
    "that meets it when its probe is due within the call's patience waits for the probe (waitForRecovery, on by default).",
    "Each request is a new agent run (its own retry scope); the breaker is shared by all runs.",
  ],
  pluginOptions: (timing) => ({
    circuitBreakerThreshold: THRESHOLD,
    circuitBreakerResetMs: timing.circuitBreakerResetMs,
    patienceMs: timing.circuitPatienceMs,
  }),
  tools: (services, hooks) => [createBrokenApiTool(services.broken.url, hooks)],
  script: inventoryScript,
  turns: [
    { user: "How many items are in the east warehouse?" },
    { user: "Please try the east warehouse again." },
    { user: "And now? Any luck with the east warehouse?" },
    {
      before: async (environment) => {
        const { timing } = environment;
        const after = askAgainAfterMs(timing);
        environment.services.broken.repair();
        environment.transcript.note(
          `The on-call engineer repairs the inventory API (the breaker is still ${environment.circuitState("broken_api")}).`,
        );
        environment.transcript.note(
          `The user asks again ${after} ms later: the circuit then lets its probe through in about ` +
            `${timing.circuitBreakerResetMs - after} ms, within the call's patience.`,
        );
        await environment.clock.sleep(after);
      },
      user: "The inventory team says it is fixed. How many items are in the east warehouse?",
    },
  ],
  narrator: ({ timing }) => {
    const patience = timing.circuitPatienceMs;
    /** The failure just logged opened the circuit. */
    let opened = false;
    return {
      after(event) {
        switch (event.type) {
          case "circuit_opened":
            opened = true;
            return [];
          case "retry": {
            const justOpened = opened;
            opened = false;
            if (event.fields.mode !== "reflect") return [];
            return justOpened
              ? [
                  `(the circuit's open time, ${timing.circuitBreakerResetMs} ms, outlasts the call's patience (${patience} ms): the call does not wait for it;`,
                  " the model is told the tool is temporarily unavailable, and when it may work again)",
                ]
              : [
                  `(the ${event.fields.max} retries in place of maxRetries are spent, and the next attempt would start past the call's patience`,
                  ` (${patience} ms): the call ends, and the model is told the tool is temporarily unavailable, with the wait)`,
                ];
          }
          case "call_rejected":
            return [
              `(the circuit stays open for another ${event.fields.retry_after_ms ?? "?"} ms, longer than the call's patience (${patience} ms):`,
              " turned away at once, without running the tool; the model is told when it may work again, not to stop)",
            ];
          case "waiting_for_recovery":
            return [
              `(the circuit lets its probe through in ${event.fields.wait_ms} ms, within the call's patience (${patience} ms): the call waits`,
              " for it instead of failing fast, and is the probe)",
            ];
          case "circuit_closed":
            return ["(the probe succeeded: the circuit is closed, and the call that waited for it gets the answer)"];
          default:
            return [];
        }
      },
    };
  },
  evaluate: (stats) => {
    const problems: string[] = [];
    expectEqual(problems, "breaker transitions", stats.breakerTransitions.join(" → "), "open → half-open → closed");
    expectEqual(problems, "calls turned away by the open circuit", stats.callsRejected, 1);
    expectEqual(problems, "calls that waited for recovery", stats.waitsForRecovery, 1);
    const opened = stats.events.find((event) => event.type === "circuit_opened");
    if (opened?.type !== "circuit_opened" || opened.fields.failures !== THRESHOLD)
      problems.push(`the breaker did not open after ${THRESHOLD} failures`);
    expectEqual(problems, "temporary texts", stats.temporary, 3);
    expectEqual(problems, "reflections", stats.reflections, 0);
    if (stats.toolResults.some((result) => /do not call/i.test(result.content))) problems.push('the model was told "do not call"');
    expectEqual(problems, "broken_api executions", stats.executionsByTool.broken_api ?? 0, 6);
    expectEqual(problems, "model calls", stats.modelCalls, 8);
    if (!/128 items/.test(stats.finalAnswer)) problems.push(`answer: ${stats.finalAnswer}`);
    return {
      outcome: problems.length === 0 ? "turned away while open, told the wait; a waiting call's probe closed it; answered" : "unexpected",
      problems,
    };
  },
};
