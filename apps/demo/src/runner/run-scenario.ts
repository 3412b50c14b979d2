import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { type BaseMessage, HumanMessage } from "@langchain/core/messages";
import { SpanStatusCode, type Tracer } from "@opentelemetry/api";
import { type Clock, consoleLogger, RetryReflectPlugin } from "@retry-reflect/core";
import type { CallInfo, RetryReflectObserver } from "@retry-reflect/core/events";
import { textOf } from "../model/conversation.js";
import { EventNotes } from "../output/event-notes.js";
import type { Transcript } from "../output/transcript.js";
import type { DemoTiming, Scenario, ScenarioEnvironment, ScenarioInfo, ScenarioVerdict } from "../scenarios/scenario.js";
import { startServices } from "../services/start-services.js";
import { DEMO_PLUGIN_OPTIONS, SYSTEM_PROMPT } from "./demo-plugin-options.js";
import { countingHooks, createScenarioStats, type ScenarioStats, statsObserver } from "./scenario-stats.js";
import type { TurnEngine, TurnReporter } from "./turn-engine.js";
import { createVirtualClock, isVirtualClock, realWorkGate } from "./virtual-clock.js";

export interface ScenarioRunConfig {
  readonly transcript: Transcript;
  /** The plugin's clock, also used for the demo's own waits (the breaker reset). */
  readonly clock: Clock;
  readonly timing: DemoTiming;
  readonly engine: TurnEngine;
  readonly createModel: (scenario: Scenario) => BaseChatModel;
  /** Observers added to every scenario's plugin (OpenTelemetry). */
  readonly observers?: readonly RetryReflectObserver[];
  /** When set, each scenario runs inside a root span `scenario N: ...`. */
  readonly tracer?: Tracer;
}

export interface ScenarioResult {
  readonly scenario: ScenarioInfo;
  readonly stats: ScenarioStats;
  readonly verdict: ScenarioVerdict;
  /** True when the scenario ended as expected. */
  readonly ok: boolean;
}

/** Runs one scenario: its services, a fresh plugin, every turn through `engine`, then its verdict. */
export async function runScenario(scenario: Scenario, config: ScenarioRunConfig): Promise<ScenarioResult> {
  if (!config.tracer) return runScenarioUntraced(scenario, config);
  return config.tracer.startActiveSpan(`scenario ${scenario.id}: ${scenario.shortName}`, async (span) => {
    try {
      const result = await runScenarioUntraced(scenario, config);
      span.setAttribute("retry_reflect_demo.scenario", scenario.id);
      span.setAttribute("retry_reflect_demo.outcome", result.verdict.outcome);
      if (!result.ok) span.setStatus({ code: SpanStatusCode.ERROR, message: result.verdict.problems.join("; ") });
      return result;
    } catch (error) {
      span.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.message : String(error) });
      throw error;
    } finally {
      span.end();
    }
  });
}

async function runScenarioUntraced(scenario: Scenario, config: ScenarioRunConfig): Promise<ScenarioResult> {
  const { transcript, timing } = config;
  // A scenario whose waits are the defaults' own (seconds) simulates them even on real time.
  const simulated = scenario.simulatedTime === true && !isVirtualClock(config.clock);
  const clock = simulated ? createVirtualClock(config.clock.now()) : config.clock;
  const stats = createScenarioStats();
  // On virtual time, a tool's real HTTP exchange holds the clock (a timer raced against it must not win by default).
  const realWork = realWorkGate(clock);
  const services = await startServices(scenario.serviceFaults, { requestHeld: realWork.requestHeld, now: () => clock.now() });
  try {
    transcript.heading(`Scenario ${scenario.id} · ${scenario.title}`);
    for (const line of scenario.intro(timing)) transcript.note(line);
    if (simulated) {
      transcript.note("Its waits are simulated on virtual time, as with --fast (the rest of the demo waits in real time),");
      transcript.note("so that seconds of backoff do not hold the demo up; the log lines show the times the plugin chose.");
    }

    const notes = new EventNotes(transcript);
    const narrator = scenario.narrator?.({ clock, timing });
    const plugin = RetryReflectPlugin.create({
      ...DEMO_PLUGIN_OPTIONS,
      ...scenario.pluginOptions?.(timing),
      clock,
      observers: [
        statsObserver(stats),
        ...(narrator?.callStarted ? [{ onCallStart: (call: CallInfo) => narrator.callStarted?.(call) }] : []),
        consoleLogger({
          write: (line, event) => {
            transcript.log(line, event.level);
            notes.after(event);
            for (const note of narrator?.after(event) ?? []) transcript.note(note);
          },
        }),
        ...(realWork.observer ? [realWork.observer] : []),
        ...(config.observers ?? []),
      ],
    });
    const hooks = countingHooks(stats, {
      onToolError: (_toolName, message) => transcript.toolError(message),
      onAbort: (toolName) => notes.toolAborted(toolName),
    });
    const tools = scenario.tools(services, hooks, timing);
    const model = config.createModel(scenario);
    const environment: ScenarioEnvironment = {
      services,
      transcript,
      clock,
      timing,
      circuitState: (toolName) => plugin.circuitState(toolName),
    };

    let replaysBefore = 0;
    let dedupesBefore = 0;
    const reporter: TurnReporter = {
      modelReplied(message) {
        stats.modelCalls++;
        const text = textOf(message);
        const calls = message.tool_calls ?? [];
        if (calls.length > 0) transcript.modelCalls(calls, text || undefined);
        else {
          transcript.modelSays(text);
          stats.finalAnswer = text;
        }
      },
      toolCallStarted() {
        replaysBefore = stats.guardReplays;
        dedupesBefore = services.email.stats.deduplicated;
      },
      toolCallEnded(message) {
        const content = textOf(message);
        const status = message.status === "error" ? "error" : "success";
        stats.toolResults.push({ toolName: message.name ?? "?", status, content });
        if (status === "error") return transcript.pluginInjects(content);
        if (stats.guardReplays > replaysBefore) {
          transcript.note("(answered by the plugin's idempotency guard: the tool did not run again)");
        } else if (services.email.stats.deduplicated > dedupesBefore) {
          transcript.note("(the email service recognised the Idempotency-Key and did not send again)");
        }
        transcript.toolSuccess(content);
      },
    };

    let conversation: BaseMessage[] = [];
    let threadId = "";
    for (const [index, turn] of scenario.turns.entries()) {
      await turn.before?.(environment);
      if (!turn.continues || threadId === "") {
        conversation = [];
        threadId = `scenario-${scenario.id}-run-${index + 1}`;
      }
      if (scenario.turns.length > 1)
        transcript.note(turn.continues ? `— same conversation (${threadId}), next message —` : `— agent run ${threadId} —`);
      transcript.user(turn.user);
      const input = {
        model,
        tools,
        plugin,
        messages: [...conversation, new HumanMessage(turn.user)],
        threadId,
        systemPrompt: SYSTEM_PROMPT,
        reporter,
      };
      conversation = config.tracer ? await tracedTurn(config.tracer, threadId, () => config.engine(input)) : await config.engine(input);
    }
    stats.emailsSent = services.email.stats.sent;
    stats.serviceDeduplicated = services.email.stats.deduplicated;
    const verdict = scenario.evaluate(stats, services);
    return { scenario, stats, verdict, ok: verdict.problems.length === 0 };
  } finally {
    await services.close();
  }
}

/** One agent run as an `invoke_agent` span, so that Jaeger groups its tool spans per run. */
function tracedTurn<T>(tracer: Tracer, threadId: string, run: () => Promise<T>): Promise<T> {
  return tracer.startActiveSpan(
    "invoke_agent demo_agent",
    { attributes: { "gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "demo_agent", "gen_ai.conversation.id": threadId } },
    async (span) => {
      try {
        return await run();
      } catch (error) {
        span.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.message : String(error) });
        throw error;
      } finally {
        span.end();
      }
    },
  );
}
