// Candidates: retry-reflect with some options beside its defaults, each in the cells where it is
// meant to be measured. To try a default before changing the core, add an entry to CANDIDATES:
//
//   { family: "patience", options: { maxRetries: 6 }, cells: ["explicit-transient", "outage@6s"], why: "…" }
//
// and run `npm run bench:agents -- --candidates=patience` (or name the family in DEFAULT_RUN, so
// that `npm run bench:agents` runs it). The row is "retry-reflect (maxRetries: 6)"; the report puts
// it beside the defaults' row in every cell it ran in (paired over the same tasks), never among
// the peers; with `cells: EVERYWHERE` it also gets a row in the overall table. Each candidate
// costs one row in each of its cells (a fleet of 1,000 agents per load section and seed): keep the
// default run's few, and at most two in a load section.

import type { RetryReflectOptions } from "@retry-reflect/core";
import { CELLS, OUTAGE_ONLY_CELLS } from "./cells.js";
import { type Contestant, ours, oursOnReplicas } from "./contestants.js";
import { LOADS } from "./load.js";

export interface CandidateSpec {
  /** Its family: `--candidates=<family>` runs every candidate of it. */
  readonly family: string;
  /** The options beside the core's defaults (a plugin per episode, one per process in a fleet). */
  readonly options: Partial<RetryReflectOptions>;
  /** The row's name; default: `retry-reflect (<the options as written>)`. */
  readonly name?: string;
  /** The cells it runs in, by name: the grid's, the outage sweep's (`outage@6s`), the load sections'. */
  readonly cells: readonly string[];
  /** What it measures (the report's list of contestants). */
  readonly why: string;
  /** In a fleet, the agents dealt in turn to this many plugins (replicas of one service), over one shared breaker store or each on its own. */
  readonly replicas?: { readonly count: number; readonly shared: boolean };
}

/** The families `npm run bench:agents` runs (others run with `--candidates=<family>`). */
export const DEFAULT_RUN: readonly string[] = ["nothing-declared", "open-time"];

/** Cells by name, for a candidate's `cells`: the grid's 13, the outage sweep's other durations, the load sections. */
export const GRID_CELLS: readonly string[] = CELLS.map((cell) => cell.name);
export const OUTAGE_SWEEP_CELLS: readonly string[] = OUTAGE_ONLY_CELLS.map((cell) => cell.name);
export const LOAD_SECTIONS: readonly string[] = LOADS.map((spec) => spec.name);
/** Everywhere the defaults run: a candidate there gets a row in the overall table too. */
export const EVERYWHERE: readonly string[] = [...GRID_CELLS, ...OUTAGE_SWEEP_CELLS, ...LOAD_SECTIONS];

export const CANDIDATES: readonly CandidateSpec[] = [
  {
    family: "nothing-declared",
    name: "retry-reflect, nothing declared",
    options: { toolEffects: { send_email: "read" } },
    cells: ["baseline", "lost-write-response"],
    why: 'the defaults with send_email\'s declaration undone (`toolEffects: { send_email: "read" }` wins over its metadata; "read" is the core\'s default effect): what a user who declares nothing gets, where the declaration shows (the write tasks\' key request, the lost write reply)',
  },
  // The attempt time limit (issue 51): the defaults' growing limits against one limit, none, and
  // the former default, where an attempt can last long enough for it to act.
  ...([0, 10_000, 60_000, [30_000, 60_000]] as const).map(
    (limit): CandidateSpec => ({
      family: "attempt-timeout",
      options: { attemptTimeoutMs: limit },
      cells: ["hang", "slow-but-fine", "down-for-good"],
      why:
        typeof limit !== "number"
          ? "the former default limits (30 s, then 60 s): a hang costs 30 s before its in-place retry"
          : limit === 0
            ? "no attempt time limit, where an attempt can last long (a hung call, a slow one that answers)"
            : `one limit for every attempt, ${limit / 1000} s`,
    }),
  ),
  // Many agents on one service (issues 26 and 51): the circuit's former open time (60 s, calls
  // turned away instead of waiting for the probe), no budget, and the defaults over 4 replicas.
  {
    family: "open-time",
    options: { circuitBreakerResetMs: 60_000 },
    cells: LOAD_SECTIONS,
    why: "the circuit's former open time: the calls that meet an open circuit are turned away with the temporary text (60 s is past their patience) instead of waiting for its probe",
  },
  {
    family: "fleet",
    options: { circuitBreakerResetMs: 10_000 },
    cells: LOAD_SECTIONS,
    why: "an open time of 10 s: calls wait for the probe, but 10 s at a time",
  },
  {
    family: "fleet",
    options: { retryBudget: false },
    cells: LOAD_SECTIONS,
    why: "the defaults without the retry budget: in-place retries bounded by the patience alone",
  },
  ...[true, false].map(
    (shared): CandidateSpec => ({
      family: "fleet",
      name: `retry-reflect, 4 replicas${shared ? " sharing a breaker store" : ", nothing shared"}`,
      options: {},
      cells: LOAD_SECTIONS,
      replicas: { count: 4, shared },
      why: `the defaults split over 4 plugins (replicas of one service, the agents dealt in turn)${shared ? " over one shared breaker store (the in-memory FleetStore in place of Redis): the circuits and the budget are the fleet's" : ", each with its own circuits and budget"}`,
    }),
  ),
];

/** A value as it is written in TypeScript: `10_000`, `"read"`, `{ minPerSecond: 0.1 }`, `[30_000, 60_000]`. */
function formatValue(value: unknown): string {
  if (typeof value === "number")
    return Number.isInteger(value) && Math.abs(value) >= 1000 ? value.toLocaleString("en-US").replace(/,/g, "_") : String(value);
  if (typeof value === "string") return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map(formatValue).join(", ")}]`;
  if (typeof value === "object" && value !== null) {
    const entries = Object.entries(value);
    return entries.length === 0 ? "{}" : `{ ${formatOptions(value as Record<string, unknown>)} }`;
  }
  return String(value);
}

/** Options as written in TypeScript, without the braces: `maxRetries: 6, retryBudget: { minPerSecond: 0.1 }`. */
export function formatOptions(options: Readonly<Record<string, unknown>>): string {
  return Object.entries(options)
    .map(([key, value]) => `${key}: ${formatValue(value)}`)
    .join(", ");
}

/** The row of a candidate: retry-reflect with its options, in its cells only. */
export function candidate(spec: CandidateSpec): Contestant {
  return {
    name: spec.name ?? `retry-reflect (${formatOptions(spec.options)})`,
    role: "candidate",
    description: `${spec.why}; run in ${spec.cells.join(", ")} (family \`${spec.family}\`)`,
    cells: spec.cells,
    ...(spec.replicas === undefined ? ours(spec.options) : oursOnReplicas(spec.options, spec.replicas.count, spec.replicas.shared)),
  };
}

/** Every candidate's row, in CANDIDATES' order. */
export const CANDIDATE_ROWS: readonly Contestant[] = CANDIDATES.map(candidate);

/** The candidates `--candidates` names: `none`, `all`, families and row names, comma-separated; undefined: DEFAULT_RUN's families. */
export function pickCandidates(raw: string | undefined): Contestant[] {
  if (raw === undefined) return CANDIDATE_ROWS.filter((_, index) => DEFAULT_RUN.includes(CANDIDATES[index]?.family ?? ""));
  const wanted = raw.trim();
  if (wanted === "none" || wanted === "") return [];
  if (wanted === "all") return [...CANDIDATE_ROWS];
  // Row names may hold commas: the longest run of pieces that is a family or a name wins.
  const pieces = wanted.split(",");
  const known = (text: string) => CANDIDATES.some((spec) => spec.family === text) || CANDIDATE_ROWS.some((row) => row.name === text);
  const picked = new Set<Contestant>();
  for (let start = 0; start < pieces.length; ) {
    let end = pieces.length;
    while (end > start + 1 && !known(pieces.slice(start, end).join(",").trim())) end--;
    const text = pieces.slice(start, end).join(",").trim();
    if (!known(text)) {
      const families = [...new Set(CANDIDATES.map((spec) => spec.family))];
      throw new Error(`--candidates: unknown ${JSON.stringify(text)} (none, all, a family: ${families.join(", ")}; or a row's name)`);
    }
    CANDIDATE_ROWS.forEach((row, index) => {
      if (row.name === text || CANDIDATES[index]?.family === text) picked.add(row);
    });
    start = end;
  }
  return CANDIDATE_ROWS.filter((row) => picked.has(row));
}
