// One episode: a task, a cell of faults, a contestant, a seed → what happened.
import { AIMessage, HumanMessage } from "@langchain/core/messages";
import { type Clock, systemClock } from "@retry-reflect/core";
import { seededRandom } from "@retry-reflect/core/testing";
import { createAgent } from "langchain";
import type { Cell } from "./cells.js";
import type { Contestant } from "./contestants.js";
import { MODEL_PROFILE, type ModelProfile } from "./model-profile.js";
import { countModelCalls, judgeAnswer, mentionsNumber, type RealModelChoice, SYSTEM_PROMPT } from "./real-model.js";
import { Brain, SimulatedModel } from "./simulated-model.js";
import { type EpisodeEnd, runEpisode, runRealEpisode, VirtualClock } from "./virtual-time.js";
import { type Task, World } from "./world.js";

/** The user waits this long for an answer, then gives up on the agent. */
export const DEADLINE_MS = 180_000;
/** LangGraph's recursion limit for one run (each model call and each tool step is a step). */
export const RECURSION_LIMIT = 80;

export type Outcome = "answered" | "wrong-answer" | "gave-up" | "crashed" | "deadline" | "step-limit";

export interface EpisodeResult {
  readonly success: boolean;
  readonly outcome: Outcome;
  readonly modelCalls: number;
  readonly toolExecutions: number;
  readonly duplicates: number;
  /** Time to finish: virtual with the simulated model, real with a real one. */
  readonly virtualMs: number;
  /** A deadline episode whose run was still pending after the deadline's abort (a wait outlived it). */
  readonly outlived?: true;
}

export type AgentResult = { messages: unknown[] };

/** How an episode runs, beyond its cell, contestant, task and seed. */
export interface EpisodeOptions {
  /** A real model instead of the simulated one (then time is `clock`'s). */
  readonly model?: RealModelChoice;
  /** The clock of a real-model episode: the system clock; a test passes one that does not wait. */
  readonly clock?: Clock;
  /** The simulated model's numbers (default: model-profile.ts). */
  readonly profile?: ModelProfile;
  /** Called with the text of each failed tool message the simulated model reads (what the perception test collects). */
  readonly onFailureText?: (text: string) => void;
}

/**
 * Runs one episode with the simulated model on virtual time, or, given `options.model`, with a
 * real model on `options.clock`.
 */
export async function runAgentEpisode(
  cell: Cell,
  contestant: Contestant,
  task: Task,
  seed: number,
  options: EpisodeOptions = {},
): Promise<EpisodeResult> {
  const { model, clock: realClock = systemClock, profile = MODEL_PROFILE, onFailureText } = options;
  const virtual = model === undefined ? new VirtualClock() : undefined;
  const clock = virtual ?? realClock;
  const started = clock.now();
  const world = new World(task, cell, clock, seededRandom(seed ^ 0x5bd1e995), seed);
  const counter = { calls: 0 };
  const brain = model === undefined ? new Brain(task, cell, clock, seededRandom(seed ^ 0x27d4eb2f), profile, onFailureText) : undefined;
  const agent = createAgent({
    model: brain !== undefined ? new SimulatedModel(brain) : (model as RealModelChoice).create(),
    tools: world.tools,
    ...(brain === undefined ? { systemPrompt: SYSTEM_PROMPT } : {}),
    middleware: [...(brain === undefined ? [countModelCalls(counter)] : []), ...contestant.middleware(clock)],
  });
  const start = (signal: AbortSignal) =>
    agent.invoke({ messages: [new HumanMessage(task.prompt)] }, { signal, recursionLimit: RECURSION_LIMIT }) as Promise<AgentResult>;
  const end: EpisodeEnd<AgentResult> =
    virtual !== undefined
      ? await runEpisode(virtual, seededRandom(seed ^ 0x165667b1), DEADLINE_MS, start)
      : await runRealEpisode(DEADLINE_MS, start);

  const modelCalls = brain?.modelCalls ?? counter.calls;
  return scoreEpisode(cell, task, world, end, modelCalls, clock.now() - started, brain === undefined);
}

/**
 * What an episode's end means: its outcome (the final answer read as the simulated model writes it,
 * or judged for a real model's text) and whether the task succeeded (the answer, and for a write
 * exactly one right email in the world's outbox).
 */
export function scoreEpisode(
  cell: Cell,
  task: Task,
  world: World,
  end: EpisodeEnd<AgentResult>,
  modelCalls: number,
  virtualMs: number,
  realModel = false,
): EpisodeResult {
  let outcome: Outcome;
  if (end.kind === "deadline") outcome = "deadline";
  else if (end.kind === "threw") outcome = isRecursionError(end.error) ? "step-limit" : "crashed";
  else {
    const last = end.value.messages.at(-1);
    const text = last !== undefined && AIMessage.isInstance(last) ? String(last.content) : "";
    if (realModel) outcome = judgeAnswer(text, task);
    else if (text.startsWith("UNABLE")) outcome = "gave-up";
    else outcome = text.startsWith(`ANSWER: ${task.temperature} °C`) ? "answered" : "wrong-answer";
  }
  const emails = world.outbox.filter((email) => email.to === task.recipient);
  const rightEmail = emails.some((email) => mentionsNumber(email.body, task.temperature));
  const duplicates = Math.max(0, emails.length - 1);
  const success = cell.unsolvable
    ? outcome === "gave-up" && emails.length === 0
    : outcome === "answered" && (task.kind !== "write" || (rightEmail && emails.length === 1));
  const toolExecutions = Object.values(world.executions).reduce((sum, count) => sum + count, 0);
  const outlived = end.kind === "deadline" && end.unwound === false;
  return { success, outcome, modelCalls, toolExecutions, duplicates, virtualMs, ...(outlived ? { outlived } : {}) };
}

function isRecursionError(error: unknown): boolean {
  return error instanceof Error && (error.name === "GraphRecursionError" || /recursion limit/i.test(error.message));
}
