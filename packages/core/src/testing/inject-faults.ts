import { abortReason, type Clock, systemClock } from "../clock.js";
import { InvalidOptionError } from "../errors/invalid-option-error.js";
import { FAULT_KINDS, type FaultKind, type FaultPlan, type FaultRecord, type ResolvedRule, resolvePlan } from "./fault-plan.js";
import { injectedFault } from "./injected-fault.js";
import { seededRandom } from "./seeded-random.js";

/** A tool function that fails by its plan, and tells what it did. */
export interface FaultyFunction<A extends unknown[], R> {
  (...args: A): Promise<R>;
  /** Every execution, in order. */
  readonly log: readonly FaultRecord[];
  /** Executions so far; how many times fn really ran (side effects); faults injected by kind. */
  readonly stats: { readonly executions: number; readonly ran: number; readonly faults: Readonly<Record<FaultKind, number>> };
}

function isAbortSignal(value: unknown): value is AbortSignal {
  if (typeof value !== "object" || value === null) return false;
  const candidate = value as Partial<AbortSignal>;
  return typeof candidate.aborted === "boolean" && typeof candidate.addEventListener === "function";
}

/** The default signal: the first argument object whose `signal` is an AbortSignal (a ToolContext, a LangChain config). */
function signalInArgs(...args: readonly unknown[]): AbortSignal | undefined {
  for (const arg of args) {
    if (typeof arg !== "object" || arg === null) continue;
    try {
      const signal = (arg as { signal?: unknown }).signal;
      if (isAbortSignal(signal)) return signal;
    } catch {
      // A getter or proxy trap that throws: not a signal.
    }
  }
  return undefined;
}

/** The first rule that matches the execution and the time and whose draw succeeds; draws only for a matching rule with probability < 1. */
function pick(rules: readonly ResolvedRule[], execution: number, at: number, random: () => number): ResolvedRule | undefined {
  for (const rule of rules) {
    if (!rule.calls(execution) || at < rule.from || at >= rule.until) continue;
    if (rule.probability >= 1 || random() < rule.probability) return rule;
  }
  return undefined;
}

/** Never settles, except that it rejects with the signal's reason when the signal aborts (and removes its listener). */
function hang(signal: AbortSignal | undefined): Promise<never> {
  return new Promise<never>((_resolve, reject) => {
    if (signal === undefined) return;
    if (signal.aborted) {
      reject(abortReason(signal));
      return;
    }
    const onAbort = () => {
      signal.removeEventListener("abort", onAbort);
      reject(abortReason(signal));
    };
    signal.addEventListener("abort", onAbort);
  });
}

/** Waits `ms` on the clock, abortable; no sleep at all for 0. */
function wait(clock: Clock, ms: number, signal: AbortSignal | undefined): Promise<void> {
  if (signal?.aborted) return Promise.reject(abortReason(signal));
  return ms > 0 ? clock.sleep(ms, signal) : Promise.resolve();
}

/** A `rate_limit`'s hint: its own, else what is left of its `during` window, else 1000 ms. */
function retryAfterOf(rule: ResolvedRule, at: number): number {
  if (rule.retryAfterMs !== undefined) return rule.retryAfterMs;
  return Number.isFinite(rule.until) ? Math.ceil(rule.until - at) : 1000;
}

interface Execution<T> {
  readonly rule: ResolvedRule | undefined;
  readonly at: number;
  readonly clock: Clock;
  /** Runs fn (counted as ran). */
  readonly run: () => Promise<T>;
  readonly signal: () => AbortSignal | undefined;
}

async function apply<T>({ rule, at, clock, run, signal }: Execution<T>): Promise<T> {
  if (rule === undefined) return run();
  switch (rule.kind) {
    case "slow":
      await wait(clock, rule.delayMs, signal());
      return run();
    case "hang":
      return hang(signal());
    case "lost_response":
      // The side effect happens; whatever fn returned or threw is lost on the way back.
      await run().catch(() => undefined);
      await wait(clock, rule.delayMs, signal());
      throw injectedFault(rule.kind, rule.message, true);
    case "rate_limit":
      throw injectedFault(rule.kind, rule.message, false, retryAfterOf(rule, at));
    default:
      throw injectedFault(rule.kind, rule.message, false);
  }
}

/**
 * Wraps a tool function so that it fails by a seeded, deterministic plan, on the plan's clock. On
 * each execution the rules are tried in order; the first that matches (`calls`, `during`) and
 * whose `probability` draw succeeds applies; with none, fn runs as it is:
 * - `transient`: throws a 503 (`TRANSIENT`, retried in place), fn does not run;
 * - `rate_limit`: throws a 429 with `retryAfterMs` and a `retry-after` header (`RATE_LIMITED`);
 * - `hang`: never settles, until the call's signal aborts (then rejects with its reason);
 * - `lost_response`: fn runs (the side effect happens), then after `delayMs` throws `ECONNRESET`;
 * - `permanent`: throws a 401 (`UNAUTHORIZED`, not recoverable);
 * - `invalid_arguments`: throws a 400 (`INVALID_ARGUMENTS`, reflected to the model);
 * - `slow`: waits `delayMs` (abortable), then fn runs.
 * The same seed and the same call order give the same faults. Throws `InvalidOptionError` for a
 * bad plan, naming the field (`faults[1].probability`) and the value.
 */
export function injectFaults<A extends unknown[], R>(
  fn: (...args: A) => R | Promise<R>,
  plan: FaultPlan<A>,
): FaultyFunction<A, Awaited<R>> {
  if (typeof fn !== "function") throw new InvalidOptionError("fn", fn, "a function");
  const resolved = resolvePlan(plan);
  const clock = resolved.clock ?? systemClock;
  const signalOf = (resolved.signal as ((...args: A) => AbortSignal | undefined) | undefined) ?? signalInArgs;
  const random = seededRandom(resolved.seed);
  const startedAt = clock.now();
  const log: FaultRecord[] = [];
  const faults = Object.fromEntries(FAULT_KINDS.map((kind) => [kind, 0])) as Record<FaultKind, number>;
  let ran = 0;

  const faulty = (...args: A): Promise<Awaited<R>> => {
    const execution = log.length + 1;
    const at = clock.now() - startedAt;
    const rule = pick(resolved.rules, execution, at, random);
    const kind = rule?.kind ?? "none";
    log.push({ execution, at, kind, ran: false });
    if (rule !== undefined) faults[rule.kind]++;
    const run = async (): Promise<Awaited<R>> => {
      ran++;
      log[execution - 1] = { execution, at, kind, ran: true };
      return await fn(...args);
    };
    return apply({ rule, at, clock, run, signal: () => signalOf(...args) });
  };

  Object.defineProperties(faulty, {
    name: { value: fn.name, configurable: true },
    log: { value: log, enumerable: true },
    stats: { get: () => ({ executions: log.length, ran, faults: { ...faults } }), enumerable: true },
  });
  return faulty as FaultyFunction<A, Awaited<R>>;
}
