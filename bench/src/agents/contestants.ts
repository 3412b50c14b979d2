// The contestants: the peers, each in one fixed setup a careful user would choose (used in every
// cell, its tool timeout included), retry-reflect with the core's defaults, and information rows
// (the peers as they come) that run only when asked for. Candidates (retry-reflect with options)
// are in candidates.ts.

import { ToolInputParsingException } from "@langchain/core/tools";
import type { Clock } from "@retry-reflect/core";
import { type RetryReflectOptions, RetryReflectPlugin } from "@retry-reflect/core";
import { seededRandom } from "@retry-reflect/core/testing";
import { retryReflectMiddleware } from "@retry-reflect/langchain";
import { type AgentMiddleware, createMiddleware, ToolInvocationError, ToolMessage, toolRetryMiddleware } from "langchain";
import { FleetStore } from "./fleet-store.js";

/**
 * What a row is for: a `peer` is judged against (the best peer is the best of them); `ours` is
 * retry-reflect with the core's defaults, the row that is judged; a `candidate` is retry-reflect
 * with options, measured beside the defaults where it runs; an `information` row is shown, never
 * judged against (the peers as they come, before a careful user sets them up).
 */
export type Role = "peer" | "ours" | "candidate" | "information";

export interface Contestant {
  readonly name: string;
  readonly description: string;
  readonly role: Role;
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
export function ours(options: Partial<RetryReflectOptions> = {}): Pick<Contestant, "middleware" | "fleet"> {
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
export function oursOnReplicas(
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

/** The time limit a careful user gives each tool call of a peer. */
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

/**
 * The plain agent's time limit per tool call, as a careful user adds one to an agent with no
 * middleware (a timeout inside the tool): the call fails with the timeout error after `ms`, and
 * every failure goes to the model as LangChain's tool node writes it when no middleware is there
 * (`<error>\n Please fix your mistakes.`, or a schema error's own message). Any `wrapToolCall`
 * middleware makes the tool node let a tool's error end the run, so this one writes the message
 * itself: the model reads what it reads without it.
 */
export function plainToolTimeout(clock: Clock, ms: number): AgentMiddleware {
  const timeout = toolTimeout(clock, ms) as unknown as {
    wrapToolCall: NonNullable<Parameters<typeof createMiddleware>[0]["wrapToolCall"]>;
  };
  return createMiddleware({
    name: "plainToolTimeout",
    wrapToolCall: async (request, handler) => {
      try {
        return await timeout.wrapToolCall(request, handler);
      } catch (error) {
        if (request.runtime?.signal?.aborted) throw error;
        const { id = "", name } = request.toolCall;
        const content = ToolInvocationError.isInstance(error) ? error.message : `${error}\n Please fix your mistakes.`;
        return new ToolMessage({ content, tool_call_id: id, name, status: "error" });
      }
    },
  });
}

/** The family of a contestant (its library, whatever the setup): a perception cue must be met in the texts of two families at least. */
export function familyOf(name: string): string {
  for (const family of ["retry-reflect", "toolRetryMiddleware", "ADK-style", "no middleware"]) if (name.startsWith(family)) return family;
  return name;
}

const timeoutLabel = `${PEER_TOOL_TIMEOUT_MS / 1000} s tool timeout`;

/**
 * The peers, each in the one setup a careful user would choose, used in every cell and in the
 * load sections alike: its failure handling set up with care and a time limit per tool call
 * (none of them has one of its own), which cuts off a hung call and also a slow one that would
 * have answered. The best peer of a comparison is the best of these.
 */
export const PEERS: readonly Contestant[] = [
  {
    name: `no middleware + ${timeoutLabel}`,
    role: "peer",
    description: `createAgent with no middleware: a tool's error goes to the model as text; each tool call has a ${PEER_TOOL_TIMEOUT_MS / 1000} s time limit (\`plainToolTimeout\`: the timeout is an error like any other)`,
    middleware: (clock) => [plainToolTimeout(clock, PEER_TOOL_TIMEOUT_MS)],
  },
  {
    name: `toolRetryMiddleware (careful) + ${timeoutLabel}`,
    role: "peer",
    description: `LangChain's \`toolRetryMiddleware\` as a careful user sets it up (2 retries in place, 1 s × 2^n backoff with jitter; \`retryOn\` skips arguments that fail the tool's schema, \`onFailure\` gives the model the tool's error text), with a ${PEER_TOOL_TIMEOUT_MS / 1000} s time limit per tool call inside it (a timeout is retried in place)`,
    middleware: (clock) => [carefulToolRetry(), toolTimeout(clock, PEER_TOOL_TIMEOUT_MS)],
  },
  {
    name: `ADK-style reflect-and-retry (no raise) + ${timeoutLabel}`,
    role: "peer",
    description: `Google ADK's documented \`ReflectAndRetryToolPlugin(max_retries=3)\` behaviour as a LangChain middleware, with \`throw_exception_if_retry_exceeded=False\` (past the limit, a stop reflection instead of the raise that ends the run), with a ${PEER_TOOL_TIMEOUT_MS / 1000} s time limit per tool call inside it (a timeout is reflected)`,
    middleware: (clock) => [adkStyleReflectAndRetry({ throwIfExceeded: false }), toolTimeout(clock, PEER_TOOL_TIMEOUT_MS)],
  },
];

/** retry-reflect with the core's defaults, no options: the row that is judged. */
export const OURS: Contestant = {
  name: "retry-reflect",
  role: "ours",
  description:
    '`retryReflectMiddleware(RetryReflectPlugin.create({ clock }))`: the core\'s defaults, no options; send_email declares `metadata: { effect: "write" }`',
  ...ours(),
};

/** The peers and retry-reflect's defaults: the rows of every cell. */
export const CONTESTANTS: readonly Contestant[] = [...PEERS, OURS];

/**
 * The peers as they come and as a careful user sets them up without a timeout: information rows,
 * run only when named (`--contestants`), never the best peer.
 */
export const INFORMATION: readonly Contestant[] = [
  {
    name: "no middleware",
    role: "information",
    description: "createAgent as it comes: a tool error goes to the model as text",
    middleware: () => [],
  },
  {
    name: "toolRetryMiddleware",
    role: "information",
    description:
      "LangChain's `toolRetryMiddleware()` with its defaults (2 retries in place, 1 s × 2^n backoff with jitter, then a message without the error)",
    middleware: () => [toolRetryMiddleware()],
  },
  {
    name: "ADK-style reflect-and-retry",
    role: "information",
    description: "the ADK-style middleware with its default raise once the fourth failure in a row follows its three reflections",
    middleware: () => [adkStyleReflectAndRetry()],
  },
  {
    name: "toolRetryMiddleware (careful)",
    role: "information",
    description: "the careful toolRetryMiddleware without a tool timeout",
    middleware: () => [carefulToolRetry()],
  },
  {
    name: "ADK-style reflect-and-retry (no raise)",
    role: "information",
    description: "the ADK-style middleware without the raise and without a tool timeout",
    middleware: () => [adkStyleReflectAndRetry({ throwIfExceeded: false })],
  },
];
