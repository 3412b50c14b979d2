import type { Clock } from "../clock.js";
import { clock as checkClock, finite, fn, integer, is, object, oneOf } from "../config/checks.js";
import { InvalidOptionError } from "../errors/invalid-option-error.js";

/** Every `FaultKind`, in the documented order. */
export const FAULT_KINDS = ["transient", "rate_limit", "hang", "lost_response", "permanent", "invalid_arguments", "slow"] as const;

/** What an injected fault does; see `injectFaults`. */
export type FaultKind = (typeof FAULT_KINDS)[number];

/** One line of a fault plan: which executions fail, and how. */
export interface FaultRule {
  readonly kind: FaultKind;
  /** Executions this rule applies to, 1-based, counted per injected function: a list ([1, 2]) or a range ({ from?: number; to?: number }, inclusive). Default: every execution. */
  readonly calls?: readonly number[] | { readonly from?: number; readonly to?: number };
  /** Virtual-time window, ms since injectFaults was called (clock.now() at wrap time): applies when from <= elapsed < until. Default: always. */
  readonly during?: { readonly from?: number; readonly until?: number };
  /** Chance per matching execution, in [0, 1], drawn from the plan's seeded generator. Default 1. */
  readonly probability?: number;
  /** rate_limit: the Retry-After hint. Default: the time left in `during` when it has an `until`, else 1000. */
  readonly retryAfterMs?: number;
  /** slow: extra latency before fn runs (default 1000). hang: none. lost_response: delay after fn ran before the failure (default 0). */
  readonly delayMs?: number;
  /** Overrides the error message. */
  readonly message?: string;
}

/** How an injected function fails: its rules, first match first, on a seeded generator and a clock. */
export interface FaultPlan<A extends unknown[] = unknown[]> {
  readonly faults: readonly FaultRule[];
  /** Seed of the generator (default 1). Same seed + same call order → same faults. */
  readonly seed?: number;
  /** The clock that `slow`, `lost_response` delays and `during` windows use (default: the system clock). Pass the plugin's fake clock in tests. */
  readonly clock?: Clock;
  /** Where the call's abort signal is (a hang rejects with the signal's reason when it aborts). Default: the first argument object that has a `signal` property that is an AbortSignal (core's ToolContext, LangChain's config). */
  readonly signal?: (...args: A) => AbortSignal | undefined;
}

/** What was done on one execution. `at`: ms since `injectFaults` was called, as `during`. */
export interface FaultRecord {
  readonly execution: number;
  readonly at: number;
  readonly kind: FaultKind | "none";
  /** fn was called (its side effect happened). */
  readonly ran: boolean;
}

/** A rule, checked, with its defaults filled in and its `calls` and `during` as a predicate. */
export type ResolvedRule = ReturnType<typeof ruleOf>;

/** An object with only `known` keys; its fields are named `${prefix}${key}`. */
function objectAt(name: string, value: unknown, known: readonly string[], prefix = `${name}.`): Readonly<Record<string, unknown>> {
  const input = object(value, name);
  for (const key of Object.keys(input)) {
    if (!known.includes(key))
      throw new InvalidOptionError(`${prefix}${key}`, input[key], `a known field (valid ones: ${known.join(", ")})`);
  }
  return input;
}

const duration = finite(0);
const chance = is<number>((value) => typeof value === "number" && value >= 0 && value <= 1, "a number in [0, 1]");
const text = is<string>((value) => typeof value === "string", "a string");
const seedOf = is<number>(Number.isSafeInteger, "an integer");

/** `calls` as a predicate on the execution number. */
function callsOf(name: string, value: unknown): (execution: number) => boolean {
  if (value === undefined) return () => true;
  if (Array.isArray(value)) {
    const listed = new Set(value.map((item: unknown, index) => integer(1)(item, `${name}[${index}]`)));
    return (execution) => listed.has(execution);
  }
  const range = objectAt(name, value, ["from", "to"]);
  const from = range.from === undefined ? 1 : integer(1)(range.from, `${name}.from`);
  const to = range.to === undefined ? Number.POSITIVE_INFINITY : integer(from)(range.to, `${name}.to`);
  return (execution) => execution >= from && execution <= to;
}

/** A duration that only some kinds use: checked, or rejected for another kind; undefined when not given. */
function durationFor(name: string, value: unknown, kind: FaultKind, kinds: readonly FaultKind[]): number | undefined {
  if (value === undefined) return undefined;
  if (!kinds.includes(kind)) {
    throw new InvalidOptionError(name, value, `nothing for kind "${kind}" (it is for ${kinds.map((item) => `"${item}"`).join(", ")})`);
  }
  return duration(value, name);
}

function ruleOf(value: unknown, index: number) {
  const name = `faults[${index}]`;
  const rule = objectAt(name, value, ["kind", "calls", "during", "probability", "retryAfterMs", "delayMs", "message"]);
  const kind = oneOf(FAULT_KINDS)(rule.kind, `${name}.kind`);
  const during = rule.during === undefined ? {} : objectAt(`${name}.during`, rule.during, ["from", "until"]);
  const from = during.from === undefined ? 0 : duration(during.from, `${name}.during.from`);
  const until = during.until === undefined ? Number.POSITIVE_INFINITY : duration(during.until, `${name}.during.until`);
  if (until <= from) throw new InvalidOptionError(`${name}.during.until`, during.until, `a number > during.from (${from})`);
  const calls = callsOf(`${name}.calls`, rule.calls);
  return {
    kind,
    /** Whether the rule is for this execution at this time (ms since `injectFaults`). */
    applies: (execution: number, at: number) => calls(execution) && at >= from && at < until,
    until,
    probability: rule.probability === undefined ? 1 : chance(rule.probability, `${name}.probability`),
    message: rule.message === undefined ? undefined : text(rule.message, `${name}.message`),
    retryAfterMs: durationFor(`${name}.retryAfterMs`, rule.retryAfterMs, kind, ["rate_limit"]),
    delayMs: durationFor(`${name}.delayMs`, rule.delayMs, kind, ["slow", "lost_response"]) ?? (kind === "slow" ? 1000 : 0),
  };
}

/** A plan, checked: throws `InvalidOptionError` naming the field (`faults[1].probability`) and the value. */
export function resolvePlan<A extends unknown[]>(value: FaultPlan<A>) {
  const plan = objectAt("plan", value, ["faults", "seed", "clock", "signal"], "");
  if (!Array.isArray(plan.faults)) throw new InvalidOptionError("faults", plan.faults, "an array of fault rules");
  return {
    rules: plan.faults.map(ruleOf),
    seed: plan.seed === undefined ? 1 : seedOf(plan.seed, "seed"),
    clock: plan.clock === undefined ? undefined : checkClock(plan.clock, "clock"),
    signal: plan.signal === undefined ? undefined : (fn(plan.signal, "signal") as FaultPlan<A>["signal"]),
  };
}
