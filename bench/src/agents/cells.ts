// The grid of faults. Explicit vs implicit (an error vs a plausible wrong result) × transient vs
// permanent, then the faults production agents meet: arguments the model gets wrong, hangs, a
// tool that is slow but fine (what an attempt timeout must not cut off), rate limits with
// Retry-After, a write whose reply is lost, a service that is down for a while, and one that looks
// down for a while but never comes back.
import type { FaultRule } from "@retry-reflect/core/testing";
import { type TaskKind, TOOL_LATENCY_MS } from "./world.js";

export interface Cell {
  readonly name: string;
  readonly description: string;
  /** injectFaults rules per tool. */
  readonly faults?: Readonly<Record<string, readonly FaultRule[]>>;
  /** Chance that get_weather returns a plausible wrong temperature (an implicit fault). */
  readonly implicitWrongResult?: number;
  /** The model's first call of get_weather uses a form of the city the schema rejects. */
  readonly modelSlipsFirst?: boolean;
  /** The task kinds of the cell (default: all three, in turn). */
  readonly kinds?: readonly TaskKind[];
  /** No contestant can deliver the answer: success is an honest "I could not" (no crash, no wrong answer). */
  readonly unsolvable?: boolean;
  /**
   * A feature demo, not a comparison: why the peers cannot pass it whatever they do (the report
   * shows the overall means with and without these cells).
   */
  readonly featureDemo?: string;
  /** get_weather is down (503) for this long from the start, then fine: a point of the outage sweep. */
  readonly outageSeconds?: number;
}

/** The slow-but-fine cell's range of get_weather's whole execution (ms) and how many even steps it is spread over. */
export const SLOW_BUT_FINE = { fromMs: 20_000, toMs: 50_000, steps: 30 } as const;

/**
 * `slow` rules that make each execution of a tool last one of `steps` durations spread evenly over
 * [fromMs, toMs] (the middle of each step: 20.5, 21.5, …, 49.5 s, so that none lands exactly on a
 * round time limit), the service's own latency included. Drawn from the fault plan's seeded
 * generator, per execution: rule i applies with probability 1 / (steps - i), so each duration has
 * the chance 1 / steps.
 */
export function slowSpread(fromMs: number, toMs: number, steps: number, latencyMs: number): FaultRule[] {
  const width = (toMs - fromMs) / steps;
  return Array.from({ length: steps }, (_, index) => ({
    kind: "slow" as const,
    delayMs: fromMs + (index + 0.5) * width - latencyMs,
    probability: 1 / (steps - index),
  }));
}

/** The outage cell of the grid lasts this long; the sweep's other durations are cells of their own. */
export const GRID_OUTAGE_SECONDS = 12;

/** get_weather down (503) for the first `seconds`, then fine: the grid's outage, or a point of the sweep (`outage@3s`). */
function outage(seconds: number, name = `outage@${seconds}s`): Cell {
  return {
    name,
    description: `get_weather is down (503) for the first ${seconds} s, then comes back`,
    faults: { get_weather: [{ kind: "transient", during: { until: seconds * 1000 } }] },
    outageSeconds: seconds,
  };
}

export const CELLS: readonly Cell[] = [
  { name: "baseline", description: "no faults" },
  {
    name: "explicit-transient",
    description: "get_weather fails with 503 on half of its executions",
    faults: { get_weather: [{ kind: "transient", probability: 0.5 }] },
  },
  {
    name: "explicit-permanent",
    description: "get_weather always fails with 403 Forbidden",
    faults: { get_weather: [{ kind: "permanent" }] },
    unsolvable: true,
  },
  {
    name: "implicit-transient",
    description: "get_weather returns a plausible wrong temperature on half of its executions",
    implicitWrongResult: 0.5,
  },
  {
    name: "implicit-permanent",
    description: "get_weather always returns a plausible wrong temperature",
    implicitWrongResult: 1,
  },
  {
    name: "invalid-arguments",
    description: 'the model first asks for "Paris, France" where the schema wants "paris"',
    modelSlipsFirst: true,
  },
  {
    name: "hang",
    description: "get_weather hangs forever on a third of its executions",
    faults: { get_weather: [{ kind: "hang", probability: 0.3 }] },
  },
  {
    name: "slow-but-fine",
    description: "get_weather takes 20–50 s on every execution (spread evenly, seeded), then answers right",
    faults: {
      get_weather: slowSpread(SLOW_BUT_FINE.fromMs, SLOW_BUT_FINE.toMs, SLOW_BUT_FINE.steps, TOOL_LATENCY_MS.get_weather),
    },
  },
  {
    name: "rate-limit",
    description: "get_weather answers 429 with Retry-After during the first 6 s",
    faults: { get_weather: [{ kind: "rate_limit", during: { until: 6_000 } }] },
  },
  {
    name: "lost-write-response",
    description: "send_email sends, then its reply is lost (connection reset), on its first execution",
    faults: { send_email: [{ kind: "lost_response", calls: [1] }] },
    kinds: ["write"],
    featureDemo:
      "only a contestant that gives the email service an idempotency key on its own can pass it: the peers have no key, and the simulated model adds one only when a failure text names the key argument its call left out (only retry-reflect's texts do) or, with the profile's `proactiveKeyRate` above 0 (0 in this run), unasked because the tool's description offers one (FINDINGS.md measures 0.5 and 1)",
  },
  {
    name: "lost-connection",
    description: "get_weather runs, then its reply is lost (connection reset) on half of its executions: a read whose network drops",
    faults: { get_weather: [{ kind: "lost_response", probability: 0.5 }] },
  },
  {
    name: "down-for-good",
    description: "get_weather fails with 503 on every execution: it looks transient and never recovers",
    faults: { get_weather: [{ kind: "transient" }] },
    unsolvable: true,
  },
  outage(GRID_OUTAGE_SECONDS, "outage"),
];

/** The outage durations of the sweep (s): the grid's 12 s outage is one of them. */
export const OUTAGE_SWEEP_SECONDS: readonly number[] = [3, 6, 12, 20, 30, 60];

/**
 * The outage sweep's cells, shortest first: the grid's own `outage` cell at 12 s (the same
 * episodes), and `outage@<n>s` for the others. Only the grid's cell is one of the 12 that compare.
 */
export const OUTAGE_CELLS: readonly Cell[] = OUTAGE_SWEEP_SECONDS.map((seconds) =>
  seconds === GRID_OUTAGE_SECONDS ? (CELLS.find((cell) => cell.name === "outage") as Cell) : outage(seconds),
);

/** The outage sweep's cells that are not in the grid. */
export const OUTAGE_ONLY_CELLS: readonly Cell[] = OUTAGE_CELLS.filter((cell) => !CELLS.includes(cell));

/** The fault intensities of the curves (`--curves`): 0, 0.1, …, 0.9. */
export const INTENSITIES: readonly number[] = Array.from({ length: 10 }, (_, index) => index / 10);

/** The two faults the curves sweep, by name: get_weather fails with 503, or answers 429 with Retry-After, with probability p per execution. */
export const CURVE_FAULTS = {
  transient: (probability: number): FaultRule => ({ kind: "transient", probability }),
  "rate-limit": (probability: number): FaultRule => ({ kind: "rate_limit", probability }),
} as const;

/** The cells of the curves: `transient@0.3` is get_weather failing with 503 on 30 % of its executions. */
export const CURVE_CELLS: readonly Cell[] = Object.entries(CURVE_FAULTS).flatMap(([fault, rule]) =>
  INTENSITIES.map((probability) => ({
    name: `${fault}@${probability}`,
    description: `get_weather: ${fault} with probability ${probability} per execution`,
    ...(probability === 0 ? {} : { faults: { get_weather: [rule(probability)] } }),
  })),
);
