import type { Clock } from "../clock.js";
import { clock as checkClock, finite, fn, integer, object, oneOf } from "../config/checks.js";
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

/** A rule, checked, with its defaults filled in and its `calls` as a predicate. */
export type ResolvedRule = ReturnType<typeof ruleOf>;

const RULE_FIELDS = ["kind", "calls", "during", "probability", "retryAfterMs", "delayMs", "message"];
const PLAN_FIELDS = ["faults", "seed", "clock", "signal"];

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

/** Rejects a field that the rule's kind does not use. */
function onlyFor(name: string, value: unknown, kind: FaultKind, kinds: readonly FaultKind[]): void {
  if (value !== undefined && !kinds.includes(kind)) {
    throw new InvalidOptionError(name, value, `nothing for kind "${kind}" (it is for ${kinds.map((item) => `"${item}"`).join(", ")})`);
  }
}

function ruleOf(value: unknown, index: number) {
  const name = `faults[${index}]`;
  const rule = objectAt(name, value, RULE_FIELDS);
  const kind = oneOf(FAULT_KINDS)(rule.kind, `${name}.kind`);
  const during = rule.during === undefined ? {} : objectAt(`${name}.during`, rule.during, ["from", "until"]);
  const from = during.from === undefined ? 0 : duration(during.from, `${name}.during.from`);
  const until = during.until === undefined ? Number.POSITIVE_INFINITY : duration(during.until, `${name}.during.until`);
  if (until <= from) throw new InvalidOptionError(`${name}.during.until`, during.until, `a number > during.from (${from})`);
  const probability = rule.probability ?? 1;
  if (typeof probability !== "number" || !(probability >= 0 && probability <= 1)) {
    throw new InvalidOptionError(`${name}.probability`, rule.probability, "a number in [0, 1]");
  }
  onlyFor(`${name}.retryAfterMs`, rule.retryAfterMs, kind, ["rate_limit"]);
  onlyFor(`${name}.delayMs`, rule.delayMs, kind, ["slow", "lost_response"]);
  const message = rule.message;
  if (message !== undefined && typeof message !== "string") throw new InvalidOptionError(`${name}.message`, message, "a string");
  return {
    kind,
    calls: callsOf(`${name}.calls`, rule.calls),
    from,
    until,
    probability,
    retryAfterMs: rule.retryAfterMs === undefined ? undefined : duration(rule.retryAfterMs, `${name}.retryAfterMs`),
    delayMs: rule.delayMs === undefined ? (kind === "slow" ? 1000 : 0) : duration(rule.delayMs, `${name}.delayMs`),
    message,
  };
}

/** A plan, checked: throws `InvalidOptionError` naming the field (`faults[1].probability`) and the value. */
export function resolvePlan(value: unknown): { rules: ResolvedRule[]; seed: number; clock: Clock | undefined; signal: unknown } {
  const plan = objectAt("plan", value, PLAN_FIELDS, "");
  if (!Array.isArray(plan.faults)) throw new InvalidOptionError("faults", plan.faults, "an array of fault rules");
  const rules = plan.faults.map(ruleOf);
  const seed = plan.seed === undefined ? 1 : plan.seed;
  if (typeof seed !== "number" || !Number.isSafeInteger(seed)) throw new InvalidOptionError("seed", plan.seed, "an integer");
  const clock = plan.clock === undefined ? undefined : checkClock(plan.clock, "clock");
  const signal = plan.signal === undefined ? undefined : fn(plan.signal, "signal");
  return { rules, seed, clock, signal };
}
