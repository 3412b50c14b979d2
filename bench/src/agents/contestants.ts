// The contestants, each configured as its documentation recommends.

import { ToolInputParsingException } from "@langchain/core/tools";
import type { Clock } from "@retry-reflect/core";
import { DEFAULT_OPTIONS, type RetryReflectOptions, RetryReflectPlugin } from "@retry-reflect/core";
import { seededRandom } from "@retry-reflect/core/testing";
import { retryReflectMiddleware } from "@retry-reflect/langchain";
import { type AgentMiddleware, createMiddleware, ToolInvocationError, ToolMessage, toolRetryMiddleware } from "langchain";
import { FleetStore } from "./fleet-store.js";

export interface Contestant {
  readonly name: string;
  readonly description: string;
  /** Fresh middleware for one episode (no state carried from the one before). */
  readonly middleware: (clock: Clock) => AgentMiddleware[];
  /** Only these cells (by name); default: every cell. */
  readonly cells?: readonly string[];
  /**
   * The middleware of many agents in one process (the load section's fleet): what the process
   * shares is made once per fleet, and each agent gets its middleware from it. retry-reflect's:
   * one plugin (its breakers and retry budget are per process, as a user runs it). Default:
   * `middleware` per agent (nothing shared: the peers keep no state beyond one run).
   */
  readonly fleet?: (clock: Clock) => () => AgentMiddleware[];
}

/** The random source of a fleet's plugin (the spread of a spent budget's waits): seeded, so that a run is reproducible. */
const fleetRandom = (replica: number) => seededRandom(0x5eed_f1ee + replica);

/** retry-reflect with `options`: a plugin per episode in the grid, one plugin per process in a fleet. */
function ours(options: Partial<RetryReflectOptions> = {}): Pick<Contestant, "middleware" | "fleet"> {
  return {
    middleware: (clock) => [retryReflectMiddleware(RetryReflectPlugin.create({ clock, ...options }))],
    fleet: (clock) => {
      const plugin = RetryReflectPlugin.create({ clock, random: fleetRandom(0), ...options });
      return () => [retryReflectMiddleware(plugin)];
    },
  };
}

/**
 * retry-reflect with `options` as `replicas` processes of one service: in a fleet, a plugin per
 * replica, the agents dealt to the replicas in turn as they arrive; with `shared`, all over one
 * breaker store (`FleetStore`, what `@retry-reflect/redis` shares: the circuits and the retry
 * budget), else each with its own circuits and budget in memory. In
 * the grid, a plugin per episode (as `ours`).
 */
function oursOnReplicas(
  options: Partial<RetryReflectOptions>,
  replicas: number,
  shared: boolean,
): Pick<Contestant, "middleware" | "fleet"> {
  return {
    middleware: ours(options).middleware,
    fleet: (clock) => {
      const store = new FleetStore(clock);
      const plugins = Array.from({ length: replicas }, (_, replica) =>
        RetryReflectPlugin.create({ clock, random: fleetRandom(replica), ...(shared ? { circuitBreakerStore: store } : {}), ...options }),
      );
      let next = 0;
      return () => [retryReflectMiddleware(plugins[next++ % replicas] as RetryReflectPlugin)];
    },
  };
}

/**
 * An ADK-style reflect-and-retry, as Google ADK documents its `ReflectAndRetryToolPlugin`: it
 * counts consecutive failures per tool within the invocation (a success resets that tool's count),
 * answers each failure with its fixed reflection guidance (the error, the arguments, "retry
 * attempt n of max", "do not repeat the exact same call"), and once `maxRetries` is exceeded raises
 * the error (`throw_exception_if_retry_exceeded`, default true), which ends the run. It never
 * retries in place: every retry is a model round trip. Its text is paraphrased here, not copied.
 */
export function adkStyleReflectAndRetry(options: { maxRetries?: number; throwIfExceeded?: boolean } = {}): AgentMiddleware {
  const maxRetries = options.maxRetries ?? 3;
  const throwIfExceeded = options.throwIfExceeded ?? true;
  const failures = new Map<string, number>();
  return createMiddleware({
    name: "adkStyleReflectAndRetry",
    wrapToolCall: async (request, handler) => {
      const name = request.toolCall.name;
      try {
        const result = await handler(request);
        failures.delete(name);
        return result;
      } catch (error) {
        const count = (failures.get(name) ?? 0) + 1;
        failures.set(name, count);
        const details = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
        const args = JSON.stringify(request.toolCall.args, null, 2);
        if (count > maxRetries) {
          if (throwIfExceeded) throw error;
          const guidance = `The tool \`${name}\` has failed consecutively ${maxRetries} times and the retry limit has been exceeded.\n\nLast error:\n${details}\n\nDo not attempt to use the \`${name}\` tool again for this task. Try a different approach or tell the user that the task cannot be completed.`;
          return reflection(request.toolCall.id ?? "", name, details, maxRetries, guidance);
        }
        const guidance = `The call to tool \`${name}\` failed.\n\nError details:\n${details}\n\nTool arguments used:\n${args}\n\nReflection guidance:\nThis is retry attempt ${count} of ${maxRetries}. Analyze the error and the arguments you provided. Do not repeat the exact same call. Check the arguments against the tool's schema, the preconditions, another tool or approach, a simpler plan, the tool's name. Then try a corrected or different approach.`;
        return reflection(request.toolCall.id ?? "", name, details, count, guidance);
      }
    },
  });
}

function reflection(toolCallId: string, name: string, details: string, retryCount: number, guidance: string): ToolMessage {
  const content = JSON.stringify({
    response_type: "ERROR_HANDLED_BY_REFLECT_AND_RETRY_PLUGIN",
    error_details: details,
    retry_count: retryCount,
    reflection_guidance: guidance,
  });
  return new ToolMessage({ content, tool_call_id: toolCallId, name, status: "error" });
}

/** What the tool itself threw, under LangChain's `ToolInvocationError` (which the tool node wraps it in). */
function toolErrorOf(error: Error): Error {
  return ToolInvocationError.isInstance(error) ? error.toolError : error;
}

/**
 * `toolRetryMiddleware` as a careful user sets it up: the arguments failing the tool's schema are
 * not retried in place (a retry cannot fix them), and the message the model gets on failure has
 * the tool's error text (the default says only "failed after n attempts with <error name>").
 */
export function carefulToolRetry(): AgentMiddleware {
  return toolRetryMiddleware({
    retryOn: (error) => !(toolErrorOf(error) instanceof ToolInputParsingException),
    onFailure: (error) => `The tool call failed: ${toolErrorOf(error).message}`,
  });
}

/** The time limit a careful user gives each tool call of a peer (the + timeouts row's). */
export const PEER_TOOL_TIMEOUT_MS = 10_000;

/**
 * A per-tool time limit, as a user adds one to a peer that has none: the call fails with a timeout
 * error after `ms` of the episode's clock (the tool itself goes on: nothing can stop it). Placed
 * inside the peer's middleware, so that the peer sees the timeout as the tool's error.
 */
export function toolTimeout(clock: Clock, ms: number): AgentMiddleware {
  return createMiddleware({
    name: "toolTimeout",
    wrapToolCall: async (request, handler) => {
      const cancel = new AbortController();
      const timedOut = clock.sleep(ms, cancel.signal).then(
        () => {
          throw new Error(`Timed out: the tool '${request.toolCall.name}' did not answer within ${ms} ms`);
        },
        () => new Promise<never>(() => {}), // cancelled: the tool answered first
      );
      try {
        return await Promise.race([handler(request), timedOut]);
      } finally {
        cancel.abort();
      }
    },
  });
}

/** The codes of a last failure that may pass: an exhaustion on one of these is a transient exhaustion. */
const PASSING = new Set(["TRANSIENT", "RATE_LIMITED", "TIMEOUT"]);

/**
 * A candidate text, measured before any change of the core: retry-reflect's stop after a transient
 * exhaustion (RETRIES_EXHAUSTED whose last failure was transient) and its open-circuit refusal,
 * rewritten (text and suggested action alike) to say that the tool may work again soon and may be
 * called again, instead of "do not call it again". Placed outside retryReflectMiddleware.
 */
export function retryLaterText(): AgentMiddleware {
  return createMiddleware({
    name: "retryLaterText",
    wrapToolCall: async (request, handler) => {
      const result = await handler(request);
      if (!ToolMessage.isInstance(result) || typeof result.content !== "string") return result;
      const at = result.content.lastIndexOf('\n\n{"error_code":');
      if (at < 0) return result;
      let error: Record<string, unknown>;
      try {
        error = JSON.parse(result.content.slice(at + 2)) as Record<string, unknown>;
      } catch {
        return result;
      }
      const last = (error.details as Record<string, unknown> | undefined)?.last_error_code;
      const passing = error.error_code === "CIRCUIT_OPEN" || (error.error_code === "RETRIES_EXHAUSTED" && PASSING.has(String(last)));
      if (!passing) return result;
      const name = request.toolCall.name;
      const action = `Call '${name}' again with the same arguments in a moment, or tell the user it is unavailable now.`;
      const text = `The tool '${name}' did not complete this call: ${JSON.stringify(String(error.message))}. It failed repeatedly and may work again shortly. ${action}`;
      const content = `${text}\n\n${JSON.stringify({ ...error, recoverable: true, suggested_action: action })}`;
      return new ToolMessage({ content, tool_call_id: result.tool_call_id, name, status: "error" });
    },
  });
}

/** The family of a contestant (its library, whatever the setup): a perception cue must be met in the texts of two families at least. */
export function familyOf(name: string): string {
  for (const family of ["retry-reflect", "toolRetryMiddleware", "ADK-style"]) if (name.startsWith(family)) return family;
  return name;
}

export const CONTESTANTS: readonly Contestant[] = [
  { name: "no middleware", description: "createAgent as it comes: a tool error goes to the model as text", middleware: () => [] },
  {
    name: "toolRetryMiddleware",
    description:
      "LangChain's `toolRetryMiddleware()` with its defaults (2 retries in place, 1 s × 2^n backoff with jitter, then a message)",
    middleware: () => [toolRetryMiddleware()],
  },
  {
    name: "ADK-style reflect-and-retry",
    description: "Google ADK's documented `ReflectAndRetryToolPlugin(max_retries=3)` behaviour, as a LangChain middleware",
    middleware: () => [adkStyleReflectAndRetry()],
  },
  {
    name: "toolRetryMiddleware (careful)",
    description:
      "`toolRetryMiddleware` as a careful user sets it up: `retryOn` skips arguments that fail the tool's schema (no retry in place), `onFailure` gives the model the tool's error text",
    middleware: () => [carefulToolRetry()],
  },
  {
    name: "ADK-style reflect-and-retry (no raise)",
    description:
      "the same ADK-style behaviour with `throw_exception_if_retry_exceeded=False`: past the limit, a stop reflection instead of the raise",
    middleware: () => [adkStyleReflectAndRetry({ throwIfExceeded: false })],
  },
  {
    name: "retry-reflect",
    description: '`retryReflectMiddleware` with the core\'s defaults; send_email declares `metadata: { effect: "write" }`',
    ...ours(),
  },
  {
    name: "retry-reflect + timeouts",
    description:
      'the same plus `attemptTimeoutMs: 10_000` and, for send_email, `idempotency: { derive: "always" }` (the core README\'s recipes)',
    ...ours({ attemptTimeoutMs: 10_000, tools: { send_email: { idempotency: { derive: "always" } } } }),
  },
  {
    name: "retry-reflect, nothing declared",
    description:
      "the core's defaults with send_email's declaration undone (`toolEffects: { send_email: \"read\" }`, which wins over its metadata, the core's default effect): what a user who declares nothing gets",
    ...ours({ toolEffects: { send_email: "read" } }),
  },
];

/** The cells where an attempt can last long enough for a time limit of 30 s or 60 s to matter. */
export const TIMEOUT_CELLS: readonly string[] = ["hang", "slow-but-fine"];

/** A configuration of retry-reflect for the choice of `attemptTimeoutMs`'s default (DESIGN Part 3): the core's defaults and that one option. */
const timeoutCandidate = (ms: number): Contestant => ({
  name: `retry-reflect (attemptTimeoutMs: ${ms.toLocaleString("en-US").replace(/,/g, "_")})`,
  description: `the core's defaults with \`attemptTimeoutMs: ${ms.toLocaleString("en-US").replace(/,/g, "_")}\`${ms === 0 ? " (no time limit)" : ""}, a candidate for its default; run only in ${TIMEOUT_CELLS.join(" and ")} (elsewhere no tool takes more than 0.5 s, so the limit never fires)`,
  cells: TIMEOUT_CELLS,
  middleware: (clock) => [retryReflectMiddleware(RetryReflectPlugin.create({ clock, attemptTimeoutMs: ms }))],
});

/**
 * The candidates for `attemptTimeoutMs`'s default, beside the defaults' row: 30 s and 60 s. While
 * the core has no default, the \`retry-reflect\` row is the "no time limit" candidate; once it
 * has one, that candidate is an explicit `attemptTimeoutMs: 0` (which turns it off).
 */
export const TIMEOUT_CANDIDATES: readonly Contestant[] = [
  ...(DEFAULT_OPTIONS.attemptTimeoutMs === undefined ? [] : [timeoutCandidate(0)]),
  timeoutCandidate(30_000),
  timeoutCandidate(60_000),
];

/** The row of the "no time limit" candidate: the defaults' row while the core has no default attempt timeout. */
export const NO_TIMEOUT_ROW =
  TIMEOUT_CANDIDATES.find((candidate) => candidate.name.endsWith("attemptTimeoutMs: 0)"))?.name ?? "retry-reflect";

/** The cells where what happens after a transient exhaustion decides the task. */
export const EXHAUSTION_CELLS: readonly string[] = ["explicit-transient", "outage", "down-for-good"];

const exhaustionCandidate = (label: string, options: Partial<RetryReflectOptions>, retryLater = false): Contestant => ({
  name: `retry-reflect (${label})`,
  description: `the core's defaults with ${label}${retryLater ? " (the text put in by a middleware around retry-reflect's, `retryLaterText`, to measure it before changing the core)" : ""}, a candidate for what follows a transient exhaustion; run only in ${EXHAUSTION_CELLS.join(", ")}`,
  cells: EXHAUSTION_CELLS,
  middleware: (clock) => [
    ...(retryLater ? [retryLaterText()] : []),
    retryReflectMiddleware(RetryReflectPlugin.create({ clock, ...options })),
  ],
});

/**
 * What follows a transient exhaustion (DESIGN Part 3 "Exhaustion ends"; issue 24): a longer budget
 * in place; a short `exhaustedResetMs` and circuit reset, so that a model that ignores the stop can
 * come back; and the same with a text that says the tool may work again (no stop instruction).
 */
export const EXHAUSTION_CANDIDATES: readonly Contestant[] = [
  exhaustionCandidate("maxRetries: 6, circuitBreakerThreshold: 8", { maxRetries: 6, circuitBreakerThreshold: 8 }),
  exhaustionCandidate("exhaustedResetMs: 1_000, circuitBreakerResetMs: 5_000", { exhaustedResetMs: 1_000, circuitBreakerResetMs: 5_000 }),
  exhaustionCandidate(
    "exhaustedResetMs: 1_000, circuitBreakerResetMs: 5_000, a may-work-again text",
    { exhaustedResetMs: 1_000, circuitBreakerResetMs: 5_000 },
    true,
  ),
];

/** The peers with the per-tool time limit a careful user adds (they have none of their own), in the cells where an attempt can last that long. */
export const PEERS_WITH_TIMEOUTS: readonly Contestant[] = [
  {
    name: `toolRetryMiddleware (careful) + ${PEER_TOOL_TIMEOUT_MS / 1000} s tool timeout`,
    description: `the careful toolRetryMiddleware with a ${PEER_TOOL_TIMEOUT_MS / 1000} s time limit per tool call inside it (a timeout is retried in place); run only in ${TIMEOUT_CELLS.join(" and ")}`,
    cells: TIMEOUT_CELLS,
    middleware: (clock) => [carefulToolRetry(), toolTimeout(clock, PEER_TOOL_TIMEOUT_MS)],
  },
  {
    name: `ADK-style (no raise) + ${PEER_TOOL_TIMEOUT_MS / 1000} s tool timeout`,
    description: `ADK-style without the raise, with a ${PEER_TOOL_TIMEOUT_MS / 1000} s time limit per tool call inside it (a timeout is reflected); run only in ${TIMEOUT_CELLS.join(" and ")}`,
    cells: TIMEOUT_CELLS,
    middleware: (clock) => [adkStyleReflectAndRetry({ throwIfExceeded: false }), toolTimeout(clock, PEER_TOOL_TIMEOUT_MS)],
  },
];

/** The cells of the retry budget's candidates: the load sections only (in the grid's cells, no tool is called often enough for a budget to be spent). */
export const BUDGET_CELLS: readonly string[] = ["degraded-under-load", "degraded-under-load-collapse"];

const budgetCandidate = (label: string, options: Partial<RetryReflectOptions>, why: string): Contestant => ({
  name: `retry-reflect (${label})`,
  description: `the core's defaults with \`${label}\`${why}; run only in the load section`,
  cells: BUDGET_CELLS,
  ...ours(options),
});

/** The core README's recipe for many agents on one service: a failure-rate breaker, a budget, a minute's spread. */
const FLEET_RECIPE: Partial<RetryReflectOptions> = {
  circuitBreakerFailureRate: 0.9,
  retryBudget: { minPerSecond: 0.1 },
  maxBackoffMs: 60_000,
};

/**
 * retry-reflect with a retry budget (DESIGN Part 3 "Retry budget"; issue 26), for the load
 * section, beside the defaults (no budget): `retryBudget: {}` (ratio 0.1, minPerSecond 1,
 * windowMs 10_000), and a floor small beside a fleet's calls (`minPerSecond: 0.1`: one retry in
 * 10 s whatever the calls, against the default's ten). Then the same three with the breaker on a
 * failure rate of 90 % instead of five failures in a row: a service that fails half its calls
 * because it is overloaded opens a consecutive-count breaker that one process shares within
 * seconds, and its stop text ends the tasks of every agent; these rows measure the budget apart.
 * Then the same pair with `maxBackoffMs: 60_000`: the calls a spent budget turns away come back
 * spread over [the window's wait, maxBackoffMs], and a minute spreads a fleet's re-calls past the
 * arrival of its agents; and that recipe split over 4 replicas sharing a breaker store (the
 * fleet-wide setup) and over 4 sharing nothing. Last, the budget with a breaker of 50 failures in
 * a row, for the record: a longer row of failures in place of the rate.
 */
export const BUDGET_CANDIDATES: readonly Contestant[] = [
  budgetCandidate("retryBudget: {}", { retryBudget: {} }, " (in any 10 s, in-place retries ≤ 10 % of the calls + 10)"),
  budgetCandidate(
    "retryBudget: { minPerSecond: 0.1 }",
    { retryBudget: { minPerSecond: 0.1 } },
    " (in any 10 s, in-place retries ≤ 10 % of the calls + 1)",
  ),
  budgetCandidate(
    "circuitBreakerFailureRate: 0.9",
    { circuitBreakerFailureRate: 0.9 },
    " (the circuit opens when 90 % of the calls in 60 s fail, at least 10 calls; no budget)",
  ),
  budgetCandidate("circuitBreakerFailureRate: 0.9, retryBudget: {}", { circuitBreakerFailureRate: 0.9, retryBudget: {} }, ""),
  budgetCandidate(
    "circuitBreakerFailureRate: 0.9, retryBudget: { minPerSecond: 0.1 }",
    { circuitBreakerFailureRate: 0.9, retryBudget: { minPerSecond: 0.1 } },
    "",
  ),
  budgetCandidate(
    "circuitBreakerFailureRate: 0.9, retryBudget: { minPerSecond: 0.1 }, maxBackoffMs: 60_000",
    FLEET_RECIPE,
    " (the calls a spent budget turns away come back spread over up to a minute, not 30 s)",
  ),
  {
    name: "retry-reflect (circuitBreakerFailureRate: 0.9, retryBudget: { minPerSecond: 0.1 }, maxBackoffMs: 60_000, 4 replicas sharing a breaker store)",
    description:
      "the row above split over 4 plugins (4 replicas of one service, the agents dealt in turn) over one shared breaker store: the failure rate and the budget are the fleet's; run only in the load section",
    cells: BUDGET_CELLS,
    ...oursOnReplicas(FLEET_RECIPE, 4, true),
  },
  {
    name: "retry-reflect (circuitBreakerFailureRate: 0.9, retryBudget: { minPerSecond: 0.1 }, maxBackoffMs: 60_000, 4 replicas, nothing shared)",
    description:
      "the same 4 replicas with no breaker store: each keeps its own circuits and budget in memory, judged on its own calls; run only in the load section",
    cells: BUDGET_CELLS,
    ...oursOnReplicas(FLEET_RECIPE, 4, false),
  },
  budgetCandidate(
    "circuitBreakerThreshold: 50, retryBudget: { minPerSecond: 0.1 }",
    { circuitBreakerThreshold: 50, retryBudget: { minPerSecond: 0.1 } },
    " (50 failures in a row in place of the rate: a row that a service failing half its calls rarely reaches)",
  ),
];
