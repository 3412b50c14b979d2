import { DEFAULT_OPTIONS } from "@retry-reflect/core";
import { jsonOf } from "../model/conversation.js";
import { DEFAULT_SHIPPING_OUTAGE_MS } from "../services/start-services.js";
import { createTrackOrderTool } from "../tools/track-order-tool.js";
import { expectEqual, type Scenario } from "./scenario.js";
import { latestResult, mustStop, reportedError, temporaryWaitSeconds } from "./script-helpers.js";

const ORDER_ID = "1042";

/** Seconds, for the narrator: `11.5`, `15`. */
function seconds(ms: number): string {
  return String(Math.round(ms / 100) / 10);
}

/**
 * Scenario 8 (issue 51): the shipping API is down for about 10 s and comes back. With the
 * defaults, no options: the transient failures are retried in place within the call's patience
 * (15 s), and the agent's answer arrives without the model being told to stop.
 */
export const outageScenario: Scenario = {
  id: 8,
  title: "Outage: a tool is down for 10 s, comes back, and the agent finishes",
  shortName: "10 s outage",
  intro: () => [
    `The shipping API is down (HTTP 503, a deploy) for ${DEFAULT_SHIPPING_OUTAGE_MS / 1000} s from the first request, then works again.`,
    "No options: the library's defaults. A transient failure is retried in place while the next attempt starts within",
    `the call's patience (patienceMs: ${DEFAULT_OPTIONS.patienceMs}), the backoff doubling from ${DEFAULT_OPTIONS.initialBackoffMs} ms up to maxBackoffMs: ${DEFAULT_OPTIONS.maxBackoffMs};`,
    `maxRetries (${DEFAULT_OPTIONS.maxRetries}) is only the floor. The breaker's threshold (${DEFAULT_OPTIONS.circuitBreakerThreshold}) is above the attempts one patient call makes.`,
  ],
  simulatedTime: true,
  tools: (services, hooks) => [createTrackOrderTool(services.shipping.url, hooks)],
  script: (messages) => {
    const result = latestResult(messages);
    if (!result) return { toolCalls: [{ name: "track_order", args: { order_id: ORDER_ID } }] };
    if (result.status === "error") {
      const wait = temporaryWaitSeconds(result);
      if (wait !== undefined && !mustStop(result))
        return { text: `The shipping API is temporarily unavailable; it may work again in about ${wait} s. Please ask me again then.` };
      return { text: `Sorry, I could not track order ${ORDER_ID}: ${reportedError(result)}` };
    }
    const shipment = jsonOf(result) as { status?: string; carrier?: string; eta?: string } | undefined;
    return {
      text: `Your order ${ORDER_ID} is ${shipment?.status ?? "?"} with ${shipment?.carrier ?? "?"}; it should arrive on ${shipment?.eta ?? "?"}.`,
    };
  },
  turns: [{ user: `Where is my order ${ORDER_ID}?` }],
  narrator: ({ clock }) => {
    let startedAt = clock.now();
    return {
      callStarted() {
        startedAt = clock.now();
      },
      after(event) {
        if (event.type === "retry" && event.fields.mode === "in_place" && event.fields.attempt > event.fields.max) {
          const next = clock.now() - startedAt + event.fields.backoff_ms;
          const doubled = DEFAULT_OPTIONS.initialBackoffMs * DEFAULT_OPTIONS.backoffMultiplier ** (event.fields.attempt - 1);
          const capped = doubled > event.fields.backoff_ms ? ` (its backoff capped at maxBackoffMs)` : "";
          return [
            `(retry ${event.fields.attempt} in place, past maxRetries=${event.fields.max}: the next attempt starts ${seconds(next)} s after the call did${capped},`,
            ` within its patience of ${seconds(DEFAULT_OPTIONS.patienceMs)} s; the model is not asked)`,
          ];
        }
        if (event.type === "retry_succeeded") {
          return [
            `(the shipping API came back; attempt ${event.fields.attempt} answered ${seconds(clock.now() - startedAt)} s after the call started:`,
            " the model gets the result, and was never told to stop)",
          ];
        }
        return [];
      },
    };
  },
  evaluate: (stats, services) => {
    const problems: string[] = [];
    expectEqual(problems, "retries in place", stats.retriesInPlace, 5);
    expectEqual(problems, "tool executions", stats.toolExecutions, 6);
    expectEqual(problems, "shipping API requests", services.shipping.stats.requests, 6);
    expectEqual(problems, "requests the outage failed", services.shipping.stats.failures, 5);
    expectEqual(problems, "model calls", stats.modelCalls, 2);
    expectEqual(problems, "reflections", stats.reflections, 0);
    expectEqual(problems, "temporary texts", stats.temporary, 0);
    expectEqual(problems, "breaker transitions", stats.breakerTransitions.length, 0);
    const backoffs = stats.events.flatMap((event) => (event.type === "retry" ? [event.fields.backoff_ms] : []));
    expectEqual(problems, "backoffs", backoffs.join(", "), "500, 1000, 2000, 4000, 4000");
    if (!stats.events.some((event) => event.type === "retry_succeeded" && event.fields.attempt === 6))
      problems.push('no "retry succeeded" event with attempt=6');
    if (stats.toolResults.some((result) => result.status === "error")) problems.push("the model was handed a failure");
    if (!/in transit/.test(stats.finalAnswer)) problems.push(`answer: ${stats.finalAnswer}`);
    return {
      outcome: problems.length === 0 ? "tool back after 10 s, 5 retries in place: answered, never told to stop" : "unexpected",
      problems,
    };
  },
};
