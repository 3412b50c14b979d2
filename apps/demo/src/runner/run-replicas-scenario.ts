import { randomBytes } from "node:crypto";
import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { HumanMessage } from "@langchain/core/messages";
import type { StructuredToolInterface } from "@langchain/core/tools";
import { SpanStatusCode, type Tracer } from "@opentelemetry/api";
import { type Clock, consoleLogger, DEFAULT_OPTIONS, RetryReflectPlugin } from "@retry-reflect/core";
import type { RetryReflectEvent, RetryReflectObserver } from "@retry-reflect/core/events";
import { type RedisStores, redisStores } from "@retry-reflect/redis";
import { textOf } from "../model/conversation.js";
import { EventNotes } from "../output/event-notes.js";
import type { Transcript } from "../output/transcript.js";
import { REPLICAS_REQUESTS, REPLICAS_RESET_MS, REPLICAS_THRESHOLD, replicasScenario } from "../scenarios/replicas-scenario.js";
import { type DemoTiming, expectEqual, type ScenarioVerdict } from "../scenarios/scenario.js";
import { startBrokenService } from "../services/broken-service.js";
import { startEmailService } from "../services/email-service.js";
import { createBrokenApiTool } from "../tools/broken-api-tool.js";
import { createSendEmailTool } from "../tools/send-email-tool.js";
import { DEMO_PLUGIN_OPTIONS, SYSTEM_PROMPT } from "./demo-plugin-options.js";
import {
  closeRedis,
  connectRedis,
  type DemoRedisClient,
  deleteKeys,
  describeRedisUrl,
  errorMessage,
  REDIS_CONNECT_TIMEOUT_MS,
} from "./redis-connection.js";
import type { ScenarioResult } from "./run-scenario.js";
import { countingHooks, createScenarioStats, type ScenarioStats, statsObserver } from "./scenario-stats.js";
import type { TurnEngine, TurnReporter } from "./turn-engine.js";
import { realWorkGate } from "./virtual-clock.js";

// Scenario 9's own runner: two replicas of the agent service in this one process, each with its own
// Redis client, `redisStores` and plugin, sharing only Redis (and the outside world: the email
// service and the inventory API). The other scenarios' runner has one plugin per scenario.

/** Bounds every store call (`commandTimeoutMs`): a Redis that stops answering fails a call, it never hangs it. */
const STORE_TIMEOUT_MS = 500;
/**
 * The queue's id of the welcome request: the namespace of its write, so that a redelivery replays on
 * whichever replica gets it (each delivery is a new agent run on a thread of its own).
 */
const WELCOME_REQUEST_ID = "request/welcome-customer-4711";
/** How long replica B's view may take to learn of the circuit A opened (Redis publishes it; measured 1-6 ms on loopback). */
const LEARN_TIMEOUT_MS = 2_000;
/** How long the replicas' subscriptions to circuit changes may take. */
const SUBSCRIBE_TIMEOUT_MS = 3_000;

export interface ReplicasRunConfig {
  readonly transcript: Transcript;
  /** The plugins' clock (the stores' local views keep the system clock: Redis judges open times in real time). */
  readonly clock: Clock;
  readonly timing: DemoTiming;
  readonly engine: TurnEngine;
  readonly redisUrl: string;
  /** A model per replica. */
  readonly createModel: () => BaseChatModel;
  readonly observers?: readonly RetryReflectObserver[];
  readonly tracer?: Tracer;
  /** @default REDIS_CONNECT_TIMEOUT_MS */
  readonly connectTimeoutMs?: number;
  /** @default a fresh random `retry-reflect-demo:<hex>:` */
  readonly prefix?: string;
}

/** What the outside world saw, and what the replicas learned. */
export interface ReplicasFacts {
  readonly prefix: string;
  redisConnected: boolean;
  emailsDelivered: number;
  emailRequests: number;
  inventoryRequests: number;
  /** Requests the inventory API got while replica B handled its call. */
  inventoryRequestsFromB: number;
  /** How long after A's failure opened the circuit B's view read it open; undefined when it never did. */
  bLearnedOpenAfterMs: number | undefined;
  /** Keys of this run deleted from Redis at the end; undefined when they could not be. */
  keysDeleted: number | undefined;
}

export interface ReplicasScenarioResult extends ScenarioResult {
  /** Each replica's own counts (`stats` adds them up). */
  readonly replicas: { readonly A: ScenarioStats; readonly B: ScenarioStats };
  readonly facts: ReplicasFacts;
}

type ReplicaName = "A" | "B";

interface Replica {
  readonly name: ReplicaName;
  readonly plugin: RetryReflectPlugin;
  readonly stats: ScenarioStats;
  readonly tools: readonly StructuredToolInterface[];
  readonly model: BaseChatModel;
}

/** Plays scenario 9 against the Redis at `config.redisUrl`; a Redis that cannot be reached fails it within seconds. */
export async function runReplicasScenario(config: ReplicasRunConfig): Promise<ReplicasScenarioResult> {
  const { id, shortName } = replicasScenario;
  if (!config.tracer) return runUntraced(config);
  return config.tracer.startActiveSpan(`scenario ${id}: ${shortName}`, async (span) => {
    try {
      const result = await runUntraced(config);
      span.setAttribute("retry_reflect_demo.scenario", id);
      span.setAttribute("retry_reflect_demo.outcome", result.verdict.outcome);
      if (!result.ok) span.setStatus({ code: SpanStatusCode.ERROR, message: result.verdict.problems.join("; ") });
      return result;
    } catch (error) {
      span.setStatus({ code: SpanStatusCode.ERROR, message: errorMessage(error) });
      throw error;
    } finally {
      span.end();
    }
  });
}

/** `1 email`, `2 emails`. */
function plural(count: number, noun: string): string {
  return `${count} ${noun}${count === 1 ? "" : "s"}`;
}

/** `never`, `once`, `3 times`. */
function times(count: number): string {
  return count === 0 ? "never" : count === 1 ? "once" : `${count} times`;
}

function withTimeout<T>(promise: Promise<T>, ms: number, message: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(message)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/** Resolves with the ms until `plugin`'s view of `tool` reads open (polled, no I/O), or undefined after `timeoutMs`. */
function watchForOpen(plugin: RetryReflectPlugin, tool: string, since: number, timeoutMs: number): Promise<number | undefined> {
  return new Promise((resolve) => {
    const poll = () => {
      if (plugin.circuitState(tool) === "open") return resolve(performance.now() - since);
      if (performance.now() - since > timeoutMs) return resolve(undefined);
      setTimeout(poll, 1);
    };
    poll();
  });
}

async function runUntraced(config: ReplicasRunConfig): Promise<ReplicasScenarioResult> {
  const { transcript, clock, timing } = config;
  const style = transcript.style;
  const prefix = config.prefix ?? `retry-reflect-demo:${randomBytes(4).toString("hex")}:`;
  const redis = describeRedisUrl(config.redisUrl);
  const stats = createScenarioStats();
  const own: Record<ReplicaName, ScenarioStats> = { A: createScenarioStats(), B: createScenarioStats() };
  const facts: ReplicasFacts = {
    prefix,
    redisConnected: false,
    emailsDelivered: 0,
    emailRequests: 0,
    inventoryRequests: 0,
    inventoryRequestsFromB: 0,
    bLearnedOpenAfterMs: undefined,
    keysDeleted: undefined,
  };
  const problems: string[] = [];

  transcript.heading(`Scenario ${replicasScenario.id} · ${replicasScenario.title}`);
  for (const line of replicasScenario.intro(redis, prefix)) transcript.note(line);

  const realWork = realWorkGate(clock);
  const [email, broken] = await Promise.all([startEmailService("none", realWork.requestHeld), startBrokenService()]);
  const clients: DemoRedisClient[] = [];
  const stores: RedisStores[] = [];
  const replicas = new Map<ReplicaName, Replica>();
  let learned: Promise<number | undefined> | undefined;

  /** The failure just logged opened the circuit. */
  let justOpened = false;
  /** The narrator's lines under the log lines that only this scenario has. */
  const narrate = (name: ReplicaName, event: RetryReflectEvent) => {
    const opened = justOpened;
    justOpened = false;
    if (event.type === "circuit_opened") {
      justOpened = true;
      transcript.note(
        `(the ${event.fields.failures} failures in a row are counted in Redis: this one opened the circuit there, and Redis tells every replica)`,
      );
      const other = replicas.get(name === "A" ? "B" : "A");
      if (other) learned = watchForOpen(other.plugin, event.fields.tool_name, performance.now(), LEARN_TIMEOUT_MS);
    } else if (event.type === "retry" && event.fields.mode === "reflect" && opened) {
      transcript.note(
        `(the circuit stays open ${event.fields.backoff_ms} ms, longer than the call's patience (${DEFAULT_OPTIONS.patienceMs} ms): ` +
          "the call ends, and the model is told the tool is temporarily unavailable, with the wait)",
      );
    } else if (event.type === "call_rejected") {
      transcript.note(
        `(turned away at once by replica ${name}'s own view of the circuit, which Redis had updated: the inventory API never saw this call;`,
      );
      transcript.note(" the circuit's remaining time outlasts the call's patience, so the call does not wait for it)");
    } else if (event.type === "store_error") {
      transcript.note(`(replica ${name} could not use Redis at ${redis} for ${event.fields.operation}: ${event.fields.error})`);
    }
  };

  const createReplica = (name: ReplicaName, client: DemoRedisClient): Replica => {
    const notes = new EventNotes(transcript);
    const shared = redisStores({ client, prefix, commandTimeoutMs: STORE_TIMEOUT_MS });
    stores.push(shared);
    const plugin = RetryReflectPlugin.create({
      ...DEMO_PLUGIN_OPTIONS,
      circuitBreakerThreshold: REPLICAS_THRESHOLD,
      circuitBreakerResetMs: REPLICAS_RESET_MS,
      clock,
      idempotency: { store: shared.idempotency },
      circuitBreakerStore: shared.circuitBreaker,
      observers: [
        statsObserver(stats),
        statsObserver(own[name]),
        consoleLogger({
          write: (line, event) => {
            transcript.log(line, event.level);
            notes.after(event);
            narrate(name, event);
          },
        }),
        ...(realWork.observer ? [realWork.observer] : []),
        ...(config.observers ?? []),
      ],
    });
    const hooks = countingHooks(
      stats,
      countingHooks(own[name], {
        onToolError: (_toolName, message) => transcript.toolError(message),
        onAbort: (toolName) => notes.toolAborted(toolName),
      }),
    );
    const tools = [createSendEmailTool(email.url, hooks, timing.emailTimeoutMs), createBrokenApiTool(broken.url, hooks)];
    return { name, plugin, stats: own[name], tools, model: config.createModel() };
  };

  const reporterFor = (replica: Replica): TurnReporter => {
    let replaysBefore = 0;
    let emailRequestsBefore = 0;
    return {
      modelReplied(message) {
        stats.modelCalls++;
        replica.stats.modelCalls++;
        const text = textOf(message);
        const calls = message.tool_calls ?? [];
        if (calls.length > 0) transcript.modelCalls(calls, text || undefined);
        else {
          transcript.modelSays(text);
          stats.finalAnswer = text;
          replica.stats.finalAnswer = text;
        }
      },
      toolCallStarted() {
        replaysBefore = replica.stats.guardReplays;
        emailRequestsBefore = email.stats.requests;
      },
      toolCallEnded(message) {
        const content = textOf(message);
        const status = message.status === "error" ? "error" : "success";
        const record = { toolName: message.name ?? "?", status, content } as const;
        stats.toolResults.push(record);
        replica.stats.toolResults.push(record);
        if (status === "error") return transcript.pluginInjects(content);
        if (replica.stats.guardReplays > replaysBefore) {
          const other = replicas.get(replica.name === "A" ? "B" : "A");
          const by =
            other !== undefined && (other.stats.executionsByTool.send_email ?? 0) > 0 ? `replica ${other.name}` : "an earlier call";
          transcript.note(
            email.stats.requests === emailRequestsBefore
              ? `(answered from Redis, where ${by} stored this key's result: send_email did not run on replica ${replica.name}, and the email service got no request)`
              : `(answered from Redis, where ${by} stored this key's result)`,
          );
        }
        transcript.toolSuccess(content);
      },
    };
  };

  /** `namespace`: the queue's request id, for a request that may be delivered twice (its write replays on either replica). */
  const turn = async (replica: Replica, user: string, run: number, label: string, namespace?: string) => {
    const threadId = `scenario-${replicasScenario.id}-run-${run}`;
    transcript.note(`— replica ${replica.name} · agent run ${threadId} · ${label} —`);
    transcript.user(user);
    const input = {
      model: replica.model,
      tools: replica.tools,
      plugin: replica.plugin,
      messages: [new HumanMessage(user)],
      threadId,
      namespace,
      systemPrompt: SYSTEM_PROMPT,
      reporter: reporterFor(replica),
    };
    if (!config.tracer) return void (await config.engine(input));
    await config.tracer.startActiveSpan(
      "invoke_agent demo_agent",
      {
        attributes: {
          "gen_ai.operation.name": "invoke_agent",
          "gen_ai.agent.name": "demo_agent",
          "gen_ai.conversation.id": threadId,
          "retry_reflect_demo.replica": replica.name,
        },
      },
      async (span) => {
        try {
          await config.engine(input);
        } catch (error) {
          span.setStatus({ code: SpanStatusCode.ERROR, message: errorMessage(error) });
          throw error;
        } finally {
          span.end();
        }
      },
    );
  };

  try {
    const timeoutMs = config.connectTimeoutMs ?? REDIS_CONNECT_TIMEOUT_MS;
    const connections = await Promise.allSettled(
      (["A", "B"] as const).map((name) => connectRedis(config.redisUrl, `retry-reflect-demo-replica-${name}`, timeoutMs)),
    );
    for (const connection of connections) if (connection.status === "fulfilled") clients.push(connection.value.client);
    const refused = connections.find((connection) => connection.status === "rejected");
    if (refused) throw refused.reason;
    facts.redisConnected = true;

    const a = createReplica("A", clients[0] as DemoRedisClient);
    const b = createReplica("B", clients[1] as DemoRedisClient);
    replicas.set("A", a).set("B", b);
    const channel = `${prefix}circuits`;
    await withTimeout(
      Promise.all(stores.map((each) => each.circuitBreaker.subscribed)),
      SUBSCRIBE_TIMEOUT_MS,
      `the replicas could not subscribe to ${channel} on ${redis} within ${SUBSCRIBE_TIMEOUT_MS} ms`,
    ).catch((error: unknown) => {
      throw new Error(`the replicas could not subscribe to ${channel} on ${redis}: ${errorMessage(error)}`);
    });
    transcript.note(`Replicas A and B are connected (one client each) and subscribed to ${channel}.`);

    // (a) One write, two replicas.
    transcript.line();
    transcript.note("(a) The welcome email.");
    await turn(a, REPLICAS_REQUESTS.welcome, 1, "takes the request from the queue", WELCOME_REQUEST_ID);
    transcript.note("Replica A is stopped (a deploy) before it acknowledges the request: its answer never reaches the user.");
    transcript.note("The queue delivers the same request again, to replica B. The model sends the same email, with the same key.");
    await turn(b, REPLICAS_REQUESTS.welcome, 2, "the same request, delivered again", WELCOME_REQUEST_ID);
    transcript.note(
      `The email service delivered ${plural(email.stats.sent, "email")}, in ${plural(email.stats.requests, "request")}: ` +
        `replica A's send_email ran ${times(a.stats.executionsByTool.send_email ?? 0)}, replica B's ${times(b.stats.executionsByTool.send_email ?? 0)}.`,
    );

    // (b) One circuit, two replicas.
    transcript.line();
    transcript.note(`(b) The inventory API is down: HTTP 500 every time. Replica A is asked first.`);
    await turn(a, REPLICAS_REQUESTS.inventory, 3, "a user asks replica A");
    facts.bLearnedOpenAfterMs = await (learned ?? Promise.resolve(undefined));
    const state = b.plugin.circuitState("broken_api");
    transcript.note(
      facts.bLearnedOpenAfterMs === undefined
        ? `Replica B has not called broken_api; its view of the circuit reads ${state}: it heard nothing from Redis.`
        : `Replica B has not called broken_api, yet its view of the circuit already reads ${state}: Redis told it, ` +
            `within ${Math.max(1, Math.ceil(facts.bLearnedOpenAfterMs))} ms of the failure on replica A.`,
    );
    const inventoryBefore = broken.stats.requests;
    await turn(b, REPLICAS_REQUESTS.inventory, 4, "another user asks replica B");
    facts.inventoryRequestsFromB = broken.stats.requests - inventoryBefore;
    transcript.note(
      `The inventory API got ${broken.stats.requests} requests in all: ${inventoryBefore} from replica A, ${facts.inventoryRequestsFromB} from replica B.`,
    );
  } catch (error) {
    const message = errorMessage(error);
    problems.push(facts.redisConnected ? `stopped: ${message}` : message);
    transcript.line(style.red(`✗ ${message}`));
  } finally {
    facts.emailsDelivered = email.stats.sent;
    facts.emailRequests = email.stats.requests;
    facts.inventoryRequests = broken.stats.requests;
    if (facts.redisConnected) {
      try {
        facts.keysDeleted = await deleteKeys(clients[0] as DemoRedisClient, prefix);
      } catch (error) {
        transcript.note(`(could not delete this run's keys under ${prefix}: ${errorMessage(error)}; they expire by themselves)`);
      }
    }
    await Promise.all(stores.map((each) => withTimeout(each.close(), 1_000, "stores.close()").catch(() => {})));
    await Promise.all(clients.map((client) => closeRedis(client)));
    await Promise.all([email.close(), broken.close()]);
    if (facts.redisConnected) {
      transcript.note(
        `Replicas stopped: stores.close() on both, both Redis clients closed` +
          (facts.keysDeleted === undefined ? "." : `, this run's ${facts.keysDeleted} keys deleted.`),
      );
    }
  }

  stats.emailsSent = email.stats.sent;
  stats.serviceDeduplicated = email.stats.deduplicated;
  if (problems.length === 0) problems.push(...evaluate(own, stats, facts, redis));
  const verdict: ScenarioVerdict = {
    outcome:
      problems.length === 0
        ? "1 email from 2 replicas; B turned away at once by A's open circuit"
        : !facts.redisConnected
          ? "Redis unreachable (REDIS_URL)"
          : stats.events.some((event) => event.type === "store_error")
            ? "Redis failed during the run (REDIS_URL)"
            : "unexpected",
    problems,
  };
  return { scenario: replicasScenario, stats, verdict, ok: problems.length === 0, replicas: own, facts };
}

function evaluate(own: Record<ReplicaName, ScenarioStats>, stats: ScenarioStats, facts: ReplicasFacts, redis: string): string[] {
  const problems: string[] = [];
  // First the cause, when Redis failed mid-run: the other problems follow from it.
  const storeErrors = stats.events.filter(
    (event): event is Extract<RetryReflectEvent, { type: "store_error" }> => event.type === "store_error",
  );
  if (storeErrors.length > 0)
    problems.push(
      `Redis at ${redis} failed during the run: ${storeErrors.length} store error(s), the first: ${storeErrors[0]?.fields.operation}: ${storeErrors[0]?.fields.error}`,
    );
  const { A, B } = own;
  // (a)
  expectEqual(problems, "emails the email service delivered", facts.emailsDelivered, 1);
  expectEqual(problems, "requests to the email service", facts.emailRequests, 1);
  expectEqual(problems, "send_email runs on replica A", A.executionsByTool.send_email ?? 0, 1);
  expectEqual(problems, "send_email runs on replica B", B.executionsByTool.send_email ?? 0, 0);
  expectEqual(problems, "replays from Redis on replica B", B.guardReplays, 1);
  // (b)
  expectEqual(problems, "breaker transitions on replica A", A.breakerTransitions.join(" → ") || "none", "open");
  expectEqual(problems, "breaker transitions on replica B", B.breakerTransitions.join(" → ") || "none", "none");
  const opened = A.events.find((event) => event.type === "circuit_opened");
  if (opened?.type !== "circuit_opened" || opened.fields.failures !== REPLICAS_THRESHOLD)
    problems.push(`the circuit did not open after ${REPLICAS_THRESHOLD} failures on replica A`);
  if (facts.bLearnedOpenAfterMs === undefined)
    problems.push(`replica B did not learn from Redis within ${LEARN_TIMEOUT_MS} ms that the circuit was open`);
  expectEqual(problems, "inventory API requests while replica B handled its call", facts.inventoryRequestsFromB, 0);
  expectEqual(problems, "broken_api runs on replica B", B.executionsByTool.broken_api ?? 0, 0);
  expectEqual(problems, "calls replica B turned away", B.callsRejected, 1);
  expectEqual(problems, "inventory API requests", facts.inventoryRequests, REPLICAS_THRESHOLD);
  expectEqual(problems, "calls told the tool is temporarily unavailable", stats.temporary, 2);
  if (stats.toolResults.some((result) => /do not call/i.test(result.content))) problems.push('a model was told "do not call"');
  expectEqual(problems, "model calls", stats.modelCalls, 8);
  return problems;
}
