import { type BaseMessage, HumanMessage } from "@langchain/core/messages";
import { jsonOf, textOf } from "../model/conversation.js";
import type { ChatScript } from "../model/scripted-chat-model.js";
import { inventoryScript, THRESHOLD } from "./circuit-breaker-scenario.js";
import type { ScenarioInfo } from "./scenario.js";
import { latestResult, reportedError } from "./script-helpers.js";

/** Scenario 9 is played only when REDIS_URL is set; it is not in `ALL_SCENARIOS` (the offline ones). */
export const REPLICAS_SCENARIO_ID = 9;

/** The breaker threshold of both replicas: as in scenario 3 (the default is 10). */
export const REPLICAS_THRESHOLD = THRESHOLD;

/**
 * How long the replicas' open circuit stays open (`circuitBreakerResetMs`; the default is 1000):
 * longer than a call's patience (15000), so that B's call is turned away at once. With the default,
 * B's call would wait for the circuit's probe, and the probe would reach the inventory API.
 */
export const REPLICAS_RESET_MS = 60_000;

/** The welcome email; its key comes from the request (the customer), so a redelivered request carries the same one. */
export const WELCOME_EMAIL = {
  to: "ada@example.com",
  subject: "Welcome to Example Shop",
  body: "Hi Ada, your account is ready. Your first order ships free.",
  idempotency_key: "welcome-customer-4711",
};

/** The user's requests of scenario 9, in order. */
export const REPLICAS_REQUESTS = {
  welcome: "Send the welcome email to our new customer Ada (ada@example.com, customer 4711).",
  inventory: "How many items are in the east warehouse?",
};

function lastUserText(messages: readonly BaseMessage[]): string {
  for (let index = messages.length - 1; index >= 0; index--) {
    const message = messages[index];
    if (message !== undefined && HumanMessage.isInstance(message)) return textOf(message);
  }
  return "";
}

/**
 * Both replicas run the same (scripted) model: the welcome email is one `send_email` with the
 * customer's key; the inventory questions are scenario 3's script.
 */
export const replicasScript: ChatScript = (messages) => {
  if (!/welcome email/i.test(lastUserText(messages))) return inventoryScript(messages);
  const result = latestResult(messages);
  if (!result) return { toolCalls: [{ name: "send_email", args: WELCOME_EMAIL }] };
  if (result.status === "error") return { text: `I could not send the welcome email: ${reportedError(result)}` };
  const sent = jsonOf(result) as { id?: string } | undefined;
  return { text: `The welcome email is sent to ada@example.com (message ${sent?.id ?? "?"}).` };
};

/** Scenario 9 (its runner is `runReplicasScenario`: two plugins, two Redis clients). */
export const replicasScenario: ScenarioInfo & { readonly intro: (redis: string, prefix: string) => readonly string[] } = {
  id: REPLICAS_SCENARIO_ID,
  title: "Two replicas share one Redis: one email, one circuit",
  shortName: "two replicas, Redis",
  intro: (redis, prefix) => [
    "Two replicas of the agent service, A and B, in this one process: each has its own plugin and its own",
    `Redis client, over redisStores({ client, prefix }) on ${redis}; they share only Redis.`,
    `prefix: ${prefix} (fresh for this run: no other run's keys; deleted at the end).`,
    "(a) A sends a welcome email (send_email: a write with an idempotency_key), then is stopped before it",
    "    acknowledges the request; the queue delivers the same request again, to B. Both runs take the request's",
    "    id as the write's namespace, so the stored result is B's to replay (another request's never would be).",
    `(b) The inventory API answers HTTP 500 every time. A's call retries in place within its patience (the defaults), and its`,
    `    ${REPLICAS_THRESHOLD}th failure in a row opens the circuit (circuitBreakerThreshold: ${REPLICAS_THRESHOLD}, default 10); then B is asked.`,
    `    The circuit stays open circuitBreakerResetMs: ${REPLICAS_RESET_MS} (default 1000), longer than a call's patience, so a call`,
    "    that meets it is turned away at once, told the wait (with the default, it would wait for the circuit's probe).",
  ],
};
