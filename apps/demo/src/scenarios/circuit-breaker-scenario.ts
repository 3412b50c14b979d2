import { jsonOf } from "../model/conversation.js";
import { createBrokenApiTool } from "../tools/broken-api-tool.js";
import { expectEqual, type Scenario } from "./scenario.js";
import { latestResult, reportedError } from "./script-helpers.js";

/** Consecutive failures that open the breaker (scenario 8 uses the same). */
export const THRESHOLD = 5;

/** Scenario 3: a broken tool opens its breaker, calls fail fast, the half-open probe closes it. */
export const circuitBreakerScenario: Scenario = {
  id: 3,
  title: "Circuit breaker: a broken tool opens it, the half-open probe closes it",
  shortName: "circuit breaker",
  intro: (timing) => [
    `The inventory API answers HTTP 500 every time. The breaker opens after ${THRESHOLD} consecutive failures.`,
    `circuitBreakerResetMs is shortened to ${timing.circuitBreakerResetMs} ms for this demo (default 60000).`,
    "Each request is a new agent run (its own retry scope); the breaker is shared by all runs.",
  ],
  pluginOptions: (timing) => ({ circuitBreakerThreshold: THRESHOLD, circuitBreakerResetMs: timing.circuitBreakerResetMs }),
  tools: (services, hooks) => [createBrokenApiTool(services.broken.url, hooks)],
  script: (messages) => {
    const result = latestResult(messages);
    if (!result) return { toolCalls: [{ name: "broken_api", args: { warehouse: "east" } }] };
    if (result.status === "error") return { text: `I can't read the inventory right now: ${reportedError(result)}` };
    const body = jsonOf(result) as { items?: number } | undefined;
    return { text: `The east warehouse has ${body?.items ?? "?"} items.` };
  },
  turns: [
    { user: "How many items are in the east warehouse?" },
    { user: "Please try the east warehouse again." },
    { user: "And now? Any luck with the east warehouse?" },
    {
      before: async (environment) => {
        environment.services.broken.repair();
        environment.transcript.note("The on-call engineer repairs the inventory API.");
        environment.transcript.note(
          `Waiting ${environment.timing.circuitBreakerResetMs} ms for the breaker's reset ` +
            `(state now: ${environment.circuitState("broken_api")}).`,
        );
        await environment.clock.sleep(environment.timing.circuitBreakerResetMs);
        environment.transcript.note(`Reset elapsed: broken_api is ${environment.circuitState("broken_api")}; the next call is the probe.`);
      },
      user: "The inventory team says it is fixed. How many items are in the east warehouse?",
    },
  ],
  evaluate: (stats) => {
    const problems: string[] = [];
    expectEqual(problems, "breaker transitions", stats.breakerTransitions.join(" → "), "open → half-open → closed");
    if (stats.callsRejected < 1) problems.push("no call failed fast on the open circuit");
    const opened = stats.events.find((event) => event.type === "circuit_opened");
    if (opened?.type !== "circuit_opened" || opened.fields.failures !== THRESHOLD)
      problems.push(`the breaker did not open after ${THRESHOLD} failures`);
    expectEqual(problems, "model calls", stats.modelCalls, 8);
    if (!/128 items/.test(stats.finalAnswer)) problems.push(`answer: ${stats.finalAnswer}`);
    return { outcome: problems.length === 0 ? "failed fast while open; probe closed it; answered" : "unexpected", problems };
  },
};
