import type { StructuredToolInterface } from "@langchain/core/tools";
import type { Clock, RetryReflectOptions } from "@retry-reflect/core";
import type { CallInfo, RetryReflectEvent } from "@retry-reflect/core/events";
import type { ChatScript } from "../model/scripted-chat-model.js";
import type { Transcript } from "../output/transcript.js";
import type { ScenarioStats } from "../runner/scenario-stats.js";
import type { DemoServices, ServiceFaults } from "../services/start-services.js";
import type { ToolHooks } from "../tools/tool-hooks.js";

/** Durations the demo may shorten, so that it ends in seconds. */
export interface DemoTiming {
  /** How long scenario 3's open circuit stays open. The library's default is 1000. */
  readonly circuitBreakerResetMs: number;
  /**
   * Scenario 3's patience (`patienceMs`): shorter than its open time (unlike the defaults' 15000
   * and 1000, with which every call waits for the probe), so that a call meeting a fresh open
   * circuit is turned away at once and one meeting it near its end waits for the probe. The
   * library's default is 15000.
   */
  readonly circuitPatienceMs: number;
  /** Client timeout of `send_email` (scenario 4's lost response). */
  readonly emailTimeoutMs: number;
  /** `attemptTimeoutMs` of `generate_report` (scenario 7's hung call). The library's default is 10000, then 30000, then 60000. */
  readonly reportTimeoutMs: number;
}

export const DEFAULT_TIMING: DemoTiming = {
  circuitBreakerResetMs: 2_000,
  circuitPatienceMs: 1_000,
  emailTimeoutMs: 500,
  reportTimeoutMs: 1_000,
};

/** What a scenario's steps can use. */
export interface ScenarioEnvironment {
  readonly services: DemoServices;
  readonly transcript: Transcript;
  readonly clock: Clock;
  readonly timing: DemoTiming;
  /** The breaker state of a tool in this scenario's plugin. */
  readonly circuitState: (toolName: string) => string;
}

/** One user request, answered by one agent run (its own thread, so its own retry scope). */
export interface ScenarioTurn {
  /** Runs before the user speaks: repair a service, wait for the breaker's reset. */
  readonly before?: (environment: ScenarioEnvironment) => Promise<void> | void;
  readonly user: string;
  /** Continue the previous turn's conversation (same thread) instead of starting a new one. */
  readonly continues?: boolean;
}

export interface ScenarioVerdict {
  /** One line for the summary table. */
  readonly outcome: string;
  /** What did not happen as expected; empty when the scenario ended as expected. */
  readonly problems: readonly string[];
}

/** What the summary table, the headings and the traces need of any scenario. */
export interface ScenarioInfo {
  readonly id: number;
  readonly title: string;
  /** A few words for the summary table. */
  readonly shortName: string;
}

/** What a scenario's narrator can read. */
export interface NarratorContext {
  /** The scenario's clock (the plugin's). */
  readonly clock: Clock;
  readonly timing: DemoTiming;
}

/** A scenario's own narrator: lines under the plugin's log lines that say what they mean in this scenario. */
export interface ScenarioNarrator {
  /** A logical call of an in-scope tool starts. */
  callStarted?(call: CallInfo): void;
  /** The narrator's lines under `event`'s log line. */
  after(event: RetryReflectEvent): readonly string[];
}

export interface Scenario extends ScenarioInfo {
  /** What the reader should watch for, shown under the heading. */
  readonly intro: (timing: DemoTiming) => readonly string[];
  /** Plugin options on top of the demo's shared ones (`DEMO_PLUGIN_OPTIONS`). */
  readonly pluginOptions?: (timing: DemoTiming) => RetryReflectOptions;
  /** Faults of the local services for this scenario. @default the services' defaults */
  readonly serviceFaults?: ServiceFaults;
  readonly tools: (services: DemoServices, hooks: ToolHooks, timing: DemoTiming) => StructuredToolInterface[];
  /** The scripted model's behaviour. */
  readonly script: ChatScript;
  readonly turns: readonly ScenarioTurn[];
  readonly evaluate: (stats: ScenarioStats, services: DemoServices) => ScenarioVerdict;
  /** The scenario's own narrator, made for each play (it may keep state). */
  readonly narrator?: (context: NarratorContext) => ScenarioNarrator;
  /**
   * Its waits are always simulated (virtual time), even when the demo runs on real time: they
   * are the defaults' own (seconds of backoff), too long to wait for in a demo of seconds.
   */
  readonly simulatedTime?: boolean;
}

/** `problem` when `actual` differs from `expected`. */
export function expectEqual(problems: string[], label: string, actual: unknown, expected: unknown): void {
  if (actual !== expected) problems.push(`${label}: expected ${String(expected)}, got ${String(actual)}`);
}
