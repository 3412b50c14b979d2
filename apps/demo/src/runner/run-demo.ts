import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import type { TracerProvider } from "@opentelemetry/api";
import { type Clock, systemClock } from "@retry-reflect/core";
import type { RetryReflectObserver } from "@retry-reflect/core/events";
import { ScriptedChatModel } from "../model/scripted-chat-model.js";
import type { Style } from "../output/style.js";
import { renderSummaryTable } from "../output/summary-table.js";
import { type LineSink, Transcript } from "../output/transcript.js";
import { ALL_SCENARIOS } from "../scenarios/all-scenarios.js";
import { REPLICAS_SCENARIO_ID, replicasScript } from "../scenarios/replicas-scenario.js";
import { DEFAULT_TIMING, type DemoTiming, type Scenario } from "../scenarios/scenario.js";
import { coreEngine } from "./core-engine.js";
import { DEMO_PLUGIN_OPTIONS, describeDefaults } from "./demo-plugin-options.js";
import { describeRedisUrl, REDIS_HOW_TO } from "./redis-connection.js";
import { runReplicasScenario } from "./run-replicas-scenario.js";
import { runScenario, type ScenarioResult } from "./run-scenario.js";
import type { TurnEngine } from "./turn-engine.js";

export interface DemoOptions {
  /** Where lines go. */
  readonly sink: LineSink;
  readonly style: Style;
  /** Scenario numbers to play, in order. @default all of them */
  readonly scenarioIds?: readonly number[];
  /** The plugin's clock. @default systemClock (real time) */
  readonly clock?: Clock;
  /** Says on screen how time passes, e.g. "virtual time". @default "real time" */
  readonly clockLabel?: string;
  readonly timing?: Partial<DemoTiming>;
  /** The agent loop. @default the core loop (`plugin.execute`) */
  readonly engine?: TurnEngine;
  /** Shown on screen: which agent loop runs. */
  readonly engineLabel?: string;
  /** Shown on screen: what the tools are. @default LangChain tools calling the local services */
  readonly toolsLabel?: string;
  /** A real model instead of the scripted one. */
  readonly model?: { readonly label: string; readonly create: () => BaseChatModel };
  /** Observers added to each scenario's plugin (the OpenTelemetry observer). */
  readonly observers?: readonly RetryReflectObserver[];
  /** When set, each scenario gets a root span from this provider. */
  readonly tracerProvider?: TracerProvider;
  /**
   * The Redis of scenario 9 (two replicas share it), `REDIS_URL` in the CLI. Without it scenario 9
   * is skipped, with a note under the summary, and asking for it by number throws.
   */
  readonly redisUrl?: string;
}

export interface DemoResult {
  readonly results: readonly ScenarioResult[];
  /** True when every scenario ended as expected. */
  readonly ok: boolean;
}

function scriptedModel(scenario: Scenario): BaseChatModel {
  return new ScriptedChatModel({ script: scenario.script });
}

/** Selects scenarios by number; throws for an unknown one. */
export function selectScenarios(ids: readonly number[] | undefined): Scenario[] {
  if (!ids || ids.length === 0) return [...ALL_SCENARIOS];
  return ids.map((id) => {
    const scenario = ALL_SCENARIOS.find((candidate) => candidate.id === id);
    if (!scenario) throw new Error(`unknown scenario ${id}: choose 1 to ${ALL_SCENARIOS.length}`);
    return scenario;
  });
}

/** A scenario to play: one of the offline ones, or scenario 9 (its own runner). */
export type PlannedScenario = { readonly kind: "offline"; readonly scenario: Scenario } | { readonly kind: "replicas" };

/** What scenario 9 needs, when it is asked for without it. */
export const REDIS_URL_NEEDED = `scenario ${REPLICAS_SCENARIO_ID} (two replicas share one Redis) needs REDIS_URL, e.g. REDIS_URL=redis://localhost:6379; start a Redis with ${REDIS_HOW_TO}`;

/**
 * The scenarios to play, in order: by default the eight offline ones, then scenario 9 when a Redis
 * is given. Throws for an unknown number, and for 9 without `redisUrl`.
 */
export function planScenarios(ids: readonly number[] | undefined, redisUrl: string | undefined): PlannedScenario[] {
  if (!ids || ids.length === 0) {
    const offline = ALL_SCENARIOS.map((scenario): PlannedScenario => ({ kind: "offline", scenario }));
    return redisUrl === undefined ? offline : [...offline, { kind: "replicas" }];
  }
  return ids.map((id): PlannedScenario => {
    if (id !== REPLICAS_SCENARIO_ID) return { kind: "offline", scenario: selectScenarios([id])[0] as Scenario };
    if (redisUrl === undefined) throw new Error(REDIS_URL_NEEDED);
    return { kind: "replicas" };
  });
}

/** Plays the scenarios with their transcripts, then prints the summary table. */
export async function runDemo(options: DemoOptions): Promise<DemoResult> {
  const { style } = options;
  const transcript = new Transcript(options.sink, style);
  const timing: DemoTiming = { ...DEFAULT_TIMING, ...options.timing };
  const planned = planScenarios(options.scenarioIds, options.redisUrl);
  const redisUrl = options.redisUrl;
  const clockLabel = options.clockLabel ?? "real time";

  transcript.line(style.bold("retry-reflect demo"));
  transcript.note(
    options.model
      ? `Model: ${options.model.label} (a real model: its choices may differ from the scripted expectations).`
      : "Model: SCRIPTED (no LLM): a deterministic script reads each tool result and reflection, and decides.",
  );
  transcript.note(options.toolsLabel ?? "Tools: LangChain tools calling real HTTP services on 127.0.0.1, with injected faults.");
  transcript.note(`Agent loop: ${options.engineLabel ?? "core plugin.execute loop"}. Waits: ${clockLabel}.`);
  const [defaults, moreDefaults] = describeDefaults();
  transcript.note(`Plugin: the library's defaults: ${defaults}`);
  transcript.note(`        ${moreDefaults}`);
  transcript.note(
    `        plus excludeTools=[${DEMO_PLUGIN_OPTIONS.excludeTools.join(", ")}] toolEffects={send_email: ${DEMO_PLUGIN_OPTIONS.toolEffects.send_email}}; ` +
      "a scenario's own options are in its introduction.",
  );
  if (redisUrl !== undefined && planned.some((entry) => entry.kind === "replicas")) {
    transcript.note(`Redis: ${describeRedisUrl(redisUrl)}, for scenario ${REPLICAS_SCENARIO_ID} (two replicas share it).`);
  }

  const results: ScenarioResult[] = [];
  const tracer = options.tracerProvider?.getTracer("retry-reflect-demo");
  const model = options.model;
  for (const entry of planned) {
    const shared = {
      transcript,
      clock: options.clock ?? systemClock,
      timing,
      engine: options.engine ?? coreEngine,
      observers: options.observers,
      tracer,
    };
    if (entry.kind === "replicas") {
      results.push(
        await runReplicasScenario({
          ...shared,
          redisUrl: redisUrl as string,
          createModel: model !== undefined ? () => model.create() : () => new ScriptedChatModel({ script: replicasScript }),
        }),
      );
    } else {
      results.push(
        await runScenario(entry.scenario, { ...shared, createModel: model !== undefined ? () => model.create() : scriptedModel }),
      );
    }
  }

  transcript.heading("Summary");
  for (const line of renderSummaryTable(results, style)) transcript.line(line);
  const failed = results.filter((result) => !result.ok);
  transcript.line();
  if (redisUrl === undefined && (options.scenarioIds ?? []).length === 0) {
    transcript.note(`Scenario ${REPLICAS_SCENARIO_ID} (two replicas share one Redis) was skipped: REDIS_URL is not set.`);
    transcript.note("To play it: docker compose -f packages/redis/compose.yaml up -d (or any Redis 7: redis-server),");
    transcript.note("then REDIS_URL=redis://localhost:6379 npm run demo");
    transcript.line();
  }
  if (failed.length === 0) {
    transcript.line(
      style.green(results.length === 1 ? "The 1 scenario ended as expected." : `All ${results.length} scenarios ended as expected.`),
    );
  } else {
    transcript.line(
      style.red(
        results.length === 1
          ? "The 1 scenario did not end as expected:"
          : `${failed.length} of ${results.length} scenarios did not end as expected:`,
      ),
    );
    for (const result of failed) {
      for (const problem of result.verdict.problems) transcript.line(style.red(`  scenario ${result.scenario.id}: ${problem}`));
    }
  }
  return { results, ok: failed.length === 0 };
}
