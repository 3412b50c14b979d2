// The "degraded under load" section (issue 26): many agents at once against one service whose
// failure probability grows with its load, so that every retry a contestant sends makes the
// service fail more for every agent. One fleet per contestant: `agents` episodes that arrive over
// `arrivalMs` of virtual time, on one clock, each with its own task, model and world, all calling
// get_weather on the same LoadedService. Per fleet, the service counts the logical calls (tool
// calls the model made) and the executions (each time the service was asked, in place retries
// included): load amplification = executions / logical calls.

import { HumanMessage } from "@langchain/core/messages";
import { InjectedFault, seededRandom } from "@retry-reflect/core/testing";
import { createAgent } from "langchain";
import type { Cell } from "./cells.js";
import type { Contestant } from "./contestants.js";
import { DEADLINE_MS, type EpisodeResult, RECURSION_LIMIT, scoreEpisode } from "./episode.js";
import { MODEL_PROFILE, type ModelProfile } from "./model-profile.js";
import { hashName, mix, type Summary, summarise, type TaskRecord } from "./run-grid.js";
import { Brain, SimulatedModel } from "./simulated-model.js";
import { type EpisodeEnd, runTogether, VirtualClock } from "./virtual-time.js";
import { makeTask, TASK_KINDS, World } from "./world.js";

/** The load model: the service's capacity and how its failure probability follows its load. */
export interface LoadModel {
  /** Executions per second at which the service fails `maxFailure` of its calls (p = min(maxFailure, load / capacity)). */
  readonly capacityPerSecond: number;
  /** The most the failure probability reaches, however high the load (some calls always get through). */
  readonly maxFailure: number;
  /** The load is the executions started within this window before an execution (that one included), per second. */
  readonly windowMs: number;
}

/** One fleet: how many agents, how they arrive, the service they share. */
export interface LoadSpec extends LoadModel {
  readonly name: string;
  readonly description: string;
  /** Agents in one fleet: episodes running at once, sharing the service (one process: retry-reflect's plugin is shared). */
  readonly agents: number;
  /** The agents arrive at seeded uniform times within this span of virtual time. */
  readonly arrivalMs: number;
  /** Fleets per contestant, each with its own seed (k of pass^k). */
  readonly trials: number;
}

/** p = min(maxFailure, load / capacity): the chance that an execution meeting `loadPerSecond` fails with a 503. */
export function failureProbability(model: LoadModel, loadPerSecond: number): number {
  return Math.min(model.maxFailure, Math.max(0, loadPerSecond) / model.capacityPerSecond);
}

/** The error of an overloaded service: a 503, as a real HTTP client throws it (the same shape as the grid's injected 503s). */
export function overloaded(): InjectedFault {
  return new InjectedFault({ kind: "transient", status: 503, message: "503 Service Unavailable: overloaded", ran: false });
}

/**
 * A service shared by a fleet of agents. Each execution meets the load of the executions started
 * within the last `windowMs` (itself included), per second, and fails with a 503 with probability
 * `failureProbability(load)`, drawn from the service's seeded generator in the order the
 * executions come. A failure answers at once (the service sheds it, fn does not run); a success
 * runs fn (the tool's own latency).
 */
export class LoadedService {
  /** Logical calls: tool calls the model made. */
  calls = 0;
  /** Executions: each time the service was asked, in place retries included. */
  executions = 0;
  failures = 0;
  /** The highest load an execution met (per second). */
  peakLoad = 0;
  /** The sum of the loads executions met (for the mean). */
  private loadSum = 0;
  private readonly starts: number[] = [];
  private head = 0;

  constructor(
    readonly model: LoadModel,
    private readonly now: () => number,
    private readonly random: () => number,
  ) {}

  /** Counts one logical call. */
  countCall(): void {
    this.calls++;
  }

  /** The load an execution starting now meets (itself included), per second; records the start. */
  private arrive(): number {
    const at = this.now();
    this.starts.push(at);
    while (this.head < this.starts.length && (this.starts[this.head] ?? 0) <= at - this.model.windowMs) this.head++;
    if (this.head > 4096) {
      this.starts.splice(0, this.head);
      this.head = 0;
    }
    return ((this.starts.length - this.head) * 1000) / this.model.windowMs;
  }

  /** One execution of the service: fails as its load says, else runs `fn`. */
  async execute<R>(fn: () => Promise<R>): Promise<R> {
    this.executions++;
    const load = this.arrive();
    this.loadSum += load;
    this.peakLoad = Math.max(this.peakLoad, load);
    if (this.random() < failureProbability(this.model, load)) {
      this.failures++;
      throw overloaded();
    }
    return fn();
  }

  /** Executions per logical call (1 when nothing retries in place). */
  get amplification(): number {
    return this.calls === 0 ? 1 : this.executions / this.calls;
  }

  /** The mean load the executions met, per second. */
  get meanLoad(): number {
    return this.executions === 0 ? 0 : this.loadSum / this.executions;
  }
}

/** The tool the service serves: the fleet's agents all call it. */
export const LOADED_TOOL = "get_weather";

/**
 * Counts the logical calls of `service`'s tool at their source: each tool call the simulated model
 * makes. Not a middleware: once any `wrapToolCall` middleware exists, LangChain lets a tool's error
 * escape as fatal to the run, which would change what the plain agent does.
 */
export function countLogicalCalls(brain: Brain, service: LoadedService, tool = LOADED_TOOL): void {
  const reply = brain.reply.bind(brain);
  brain.reply = (messages, tools) => {
    const next = reply(messages, tools);
    if ("call" in next && next.call.name === tool) service.countCall();
    return next;
  };
}

/**
 * The section's fleet. 1,000 agents in 60 s (about 18 executions of get_weather per second from
 * the tasks alone, a logical call each); the capacity puts the failure probability at that load,
 * with nothing retried, near one half: the service "fails because it is overloaded" as the issue
 * describes it, and any retry (in place or by the model) makes it fail more.
 */
export const LOAD: LoadSpec = {
  name: "degraded-under-load",
  description:
    "1,000 agents arrive over 60 s and share one get_weather service; an execution fails with 503 (overloaded) with probability min(0.9, load / 36), the load being the service's executions in the last second",
  agents: 1_000,
  arrivalMs: 60_000,
  trials: 1,
  capacityPerSecond: 36,
  maxFailure: 0.9,
  windowMs: 1_000,
};

/**
 * The same fleet against a service that collapses: p = min(1, load / 36), so past its capacity it
 * answers nothing, and its answers (load × (1 − p)) fall as the load grows beyond half of it. A
 * service whose answers grew with the load past its capacity (the section above, at its 0.9 cap)
 * rewards the contestant that sends the most; this one does not (an overloaded service that spends
 * its capacity on work it then sheds, the SRE book's "cascading failure").
 */
export const COLLAPSE: LoadSpec = {
  ...LOAD,
  name: "degraded-under-load-collapse",
  description:
    "the same 1,000 agents against a service that collapses: an execution fails with 503 (overloaded) with probability min(1, load / 36), so that past its capacity nothing gets through",
  maxFailure: 1,
};

/** The load sections, in the order they run and are reported. */
export const LOADS: readonly LoadSpec[] = [LOAD, COLLAPSE];

/** `spec` with `agents` agents arriving at the same rate (`--agents`, for a quick look: the arrival span scales with them). */
export function withAgents(spec: LoadSpec, agents: number): LoadSpec {
  return agents === spec.agents ? spec : { ...spec, agents, arrivalMs: Math.round((spec.arrivalMs * agents) / spec.agents) };
}

/** The section as a cell of the grid's kind: no injected faults (the service fails by its load), every task kind. */
export function loadCell(spec: LoadSpec): Cell {
  return { name: spec.name, description: spec.description };
}

/** What one fleet did: each agent's episode, and the service's counts. */
export interface FleetRecord {
  readonly seed: number;
  readonly load: string;
  readonly contestant: string;
  readonly trial: number;
  /** Each agent's episode, by agent (= task) number. */
  readonly results: readonly EpisodeResult[];
  readonly calls: number;
  readonly executions: number;
  readonly failures: number;
  readonly peakLoad: number;
  readonly meanLoad: number;
  /** Virtual time from the first arrival to the last agent's end. */
  readonly spanMs: number;
}

/** The arrival times of a fleet's agents (ms), seeded, in agent order. */
export function arrivals(spec: LoadSpec, seed: number, trial: number): number[] {
  const random = seededRandom(mix(seed, hashName(spec.name), trial, 0xa771));
  return Array.from({ length: spec.agents }, () => Math.floor(random() * spec.arrivalMs));
}

/**
 * Runs one fleet of `contestant`: every agent on one virtual clock, each from its arrival until its
 * answer or its own deadline (DEADLINE_MS after it arrived). A contestant's `fleet` (state one
 * process shares, such as retry-reflect's plugin with its breakers and budget) is made once; other
 * contestants get fresh middleware per agent, as in the grid. Task i and its model's draws are the
 * same for every contestant.
 */
export async function runFleet(
  spec: LoadSpec,
  contestant: Contestant,
  seed: number,
  trial: number,
  options: { readonly profile?: ModelProfile; readonly onFailureText?: (text: string) => void } = {},
): Promise<FleetRecord> {
  const { profile = MODEL_PROFILE, onFailureText } = options;
  const clock = new VirtualClock();
  const cell = loadCell(spec);
  const cellSeed = hashName(spec.name);
  const service = new LoadedService(spec, clock.now, seededRandom(mix(seed, cellSeed, trial, 0x5e41ce)));
  const middlewareOf = contestant.fleet?.(clock) ?? (() => contestant.middleware(clock));
  const times = arrivals(spec, seed, trial);

  const agent = async (index: number): Promise<EpisodeResult> => {
    const arrival = times[index] ?? 0;
    await clock.sleep(arrival);
    const task = makeTask(index, TASK_KINDS[index % TASK_KINDS.length] ?? "lookup", seededRandom(mix(seed, cellSeed, index)));
    const episodeSeed = mix(seed, cellSeed, index, trial, 7);
    const world = new World(task, cell, clock, seededRandom(episodeSeed ^ 0x5bd1e995), episodeSeed, service);
    const brain = new Brain(task, cell, clock, seededRandom(episodeSeed ^ 0x27d4eb2f), profile, onFailureText);
    countLogicalCalls(brain, service);
    const run = createAgent({ model: new SimulatedModel(brain), tools: world.tools, middleware: middlewareOf() });
    const controller = new AbortController();
    const cancelDeadline = new AbortController();
    const deadline = clock.sleep(DEADLINE_MS, cancelDeadline.signal).then(
      (): EpisodeEnd<never> => {
        controller.abort(new Error("episode deadline"));
        return { kind: "deadline" };
      },
      () => new Promise<never>(() => {}),
    );
    const invoked = (
      run.invoke(
        { messages: [new HumanMessage({ content: task.prompt, id: `task-${index}` })] },
        { signal: controller.signal, recursionLimit: RECURSION_LIMIT },
      ) as Promise<{ messages: unknown[] }>
    ).then(
      (value): EpisodeEnd<{ messages: unknown[] }> => ({ kind: "settled", value }),
      (error: unknown): EpisodeEnd<{ messages: unknown[] }> => ({ kind: "threw", error }),
    );
    const end = await Promise.race([invoked, deadline]);
    cancelDeadline.abort();
    return scoreEpisode(cell, task, world, end, brain.modelCalls, clock.now() - arrival);
  };

  const random = seededRandom(mix(seed, cellSeed, trial, 0x165667b1));
  const limit = spec.arrivalMs + DEADLINE_MS + 1;
  const results = await runTogether(clock, random, limit, () => Promise.all(times.map((_, index) => agent(index))));
  if (results === undefined) throw new Error(`${spec.name}: the fleet of ${contestant.name} did not finish by ${limit} ms of virtual time`);
  return {
    seed,
    load: spec.name,
    contestant: contestant.name,
    trial,
    results,
    calls: service.calls,
    executions: service.executions,
    failures: service.failures,
    peakLoad: service.peakLoad,
    meanLoad: service.meanLoad,
    spanMs: clock.now() - Math.min(...times),
  };
}

/** One contestant's fleets, summarised: the grid's summary (by agent) and the service's figures. */
export interface LoadSummary {
  readonly summary: Summary;
  readonly fleets: number;
  readonly calls: number;
  readonly executions: number;
  /** Executions per logical call, over all of the contestant's fleets. */
  readonly amplification: number;
  /** The service's executions per task (agent): the whole load it took, the model's own re-calls included. */
  readonly executionsPerTask: number;
  /** The share of executions that failed. */
  readonly failureRate: number;
  readonly meanLoad: number;
  readonly peakLoad: number;
  /** The mean virtual time from a fleet's first arrival to its last agent's end. */
  readonly spanSeconds: number;
}

/** The summary of one contestant's fleets (each fleet a trial of every agent's task). */
export function summariseLoad(spec: LoadSpec, contestant: string, fleets: readonly FleetRecord[]): LoadSummary {
  const mine = fleets.filter((fleet) => fleet.load === spec.name && fleet.contestant === contestant).sort((a, b) => a.trial - b.trial);
  const agents = Math.max(0, ...mine.map((fleet) => fleet.results.length));
  const seed = mine[0]?.seed ?? 0;
  const records: TaskRecord[] = Array.from({ length: agents }, (_, task) => ({
    seed,
    cell: spec.name,
    contestant,
    task,
    results: mine.flatMap((fleet) => (fleet.results[task] === undefined ? [] : [fleet.results[task]])),
  }));
  const sum = (pick: (fleet: FleetRecord) => number) => mine.reduce((total, fleet) => total + pick(fleet), 0);
  const calls = sum((fleet) => fleet.calls);
  const executions = sum((fleet) => fleet.executions);
  const episodes = sum((fleet) => fleet.results.length);
  return {
    summary: summarise(spec.name, contestant, records, seed),
    fleets: mine.length,
    calls,
    executions,
    amplification: calls === 0 ? 1 : executions / calls,
    executionsPerTask: executions / Math.max(1, episodes),
    failureRate: sum((fleet) => fleet.failures) / Math.max(1, executions),
    meanLoad: sum((fleet) => fleet.meanLoad * fleet.executions) / Math.max(1, executions),
    peakLoad: Math.max(0, ...mine.map((fleet) => fleet.peakLoad)),
    spanSeconds: sum((fleet) => fleet.spanMs) / Math.max(1, mine.length) / 1000,
  };
}

/** The load section of one seed: its fleet, and each contestant's summary (agents.json's `loads`). */
export interface LoadRun {
  readonly spec: LoadSpec;
  readonly seed: number;
  /** The fleets' time, summed over the processes that ran them (s). */
  readonly seconds: number;
  readonly summaries: readonly LoadSummary[];
}
