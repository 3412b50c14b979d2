import { abortReason, type Clock, systemClock } from "../clock.js";
import { InvalidOptionError } from "../errors/invalid-option-error.js";
import { FAULT_KINDS, type FaultKind, type FaultPlan, type FaultRecord, type ResolvedRule, resolvePlan } from "./fault-plan.js";

/** A tool function that fails by its plan, and tells what it did. */
export interface FaultyFunction<A extends unknown[], R> {
  (...args: A): Promise<R>;
  /** Every execution, in order. */
  readonly log: readonly FaultRecord[];
  /** Executions so far; how many times fn really ran (side effects); faults injected by kind. */
  readonly stats: { readonly executions: number; readonly ran: number; readonly faults: Readonly<Record<FaultKind, number>> };
}

/** The default signal: the first argument object whose `signal` is an AbortSignal (a ToolContext, a LangChain config). */
function signalInArgs(...args: readonly unknown[]): AbortSignal | undefined {
  for (const arg of args) {
    try {
      const signal = typeof arg === "object" ? (arg as { signal?: Partial<AbortSignal> } | null)?.signal : undefined;
      if (typeof signal === "object" && typeof signal?.aborted === "boolean" && typeof signal.addEventListener === "function") {
        return signal as AbortSignal;
      }
    } catch {
      // A getter or proxy trap that throws: not a signal.
    }
  }
  return undefined;
}

/** Never settles, except that it rejects with the signal's reason when the signal aborts (and removes its listener). */
function hang(signal: AbortSignal | undefined): Promise<never> {
  return new Promise<never>((_resolve, reject) => {
    const onAbort = () => {
      signal?.removeEventListener("abort", onAbort);
      reject(abortReason(signal as AbortSignal));
    };
    if (signal?.aborted) reject(abortReason(signal));
    else signal?.addEventListener("abort", onAbort);
  });
}

/** Waits `ms` on the clock, abortable; no sleep at all for 0. */
function wait(clock: Clock, ms: number, signal: AbortSignal | undefined): Promise<void> {
  if (signal?.aborted) return Promise.reject(abortReason(signal));
  return ms > 0 ? clock.sleep(ms, signal) : Promise.resolve();
}

/** What an `InjectedFault` is made of. */
export type InjectedFaultInit = Pick<InjectedFault, "kind" | "ran" | "status" | "code" | "retryAfterMs" | "headers"> & {
  readonly message: string;
};

/**
 * The error an injected fault throws. It looks like what a real client throws for that failure (an HTTP `status`, a
 * system `code`, a `Retry-After` header; each kind's: see `injectFaults`), so the core's classifier, and yours, see
 * what production would. `ran` tells whether fn ran first.
 */
export class InjectedFault extends Error {
  readonly kind: FaultKind;
  readonly status?: number;
  readonly code?: string;
  readonly retryAfterMs?: number;
  /** `rate_limit`: `{ "retry-after": "<seconds>" }`, rounded up to whole seconds as HTTP sends it. */
  readonly headers?: Readonly<Record<string, string>>;
  /** fn ran before the failure (`lost_response`): its side effect happened. */
  readonly ran: boolean;

  constructor(init: InjectedFaultInit) {
    super(init.message);
    this.name = "InjectedFault";
    this.kind = init.kind;
    this.ran = init.ran;
    this.status = init.status;
    this.code = init.code;
    this.retryAfterMs = init.retryAfterMs;
    this.headers = init.headers;
  }
}

/** The fault of each kind that throws: its status or code, and its default message. */
const SHAPES: Record<Exclude<FaultKind, "slow" | "hang">, { status?: number; code?: string; message: string }> = {
  transient: { status: 503, message: "503 Service Unavailable (injected fault)" },
  rate_limit: { status: 429, message: "429 Too Many Requests (injected fault)" },
  lost_response: { code: "ECONNRESET", message: "socket hang up: the reply was lost (injected fault)" },
  permanent: { status: 401, message: "401 Unauthorized (injected fault)" },
  invalid_arguments: { status: 400, code: "INVALID_ARGUMENTS", message: "400 Bad Request: invalid arguments (injected fault)" },
};

/** The `InjectedFault` of a throwing rule. A `rate_limit`'s hint: its own, else what is left of its `during` window, else 1000 ms. */
function injectedFault(kind: keyof typeof SHAPES, rule: ResolvedRule, ran: boolean, at: number): InjectedFault {
  const shape = SHAPES[kind];
  const retryAfterMs = rule.retryAfterMs ?? (Number.isFinite(rule.until) ? Math.ceil(rule.until - at) : 1000);
  const hint = kind === "rate_limit" ? { retryAfterMs, headers: { "retry-after": String(Math.ceil(retryAfterMs / 1000)) } } : undefined;
  return new InjectedFault({ kind, ran, status: shape.status, code: shape.code, message: rule.message ?? shape.message, ...hint });
}

/**
 * A seeded generator of numbers in [0, 1) (mulberry32: small, fast, 32-bit state): the same seed
 * gives the same sequence. What `injectFaults` draws its probabilities from; use it for your own
 * fakes (a simulated model, a flaky service) so that a test run is reproducible from its seed.
 */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let mixed = Math.imul(state ^ (state >>> 15), state | 1);
    mixed ^= mixed + Math.imul(mixed ^ (mixed >>> 7), mixed | 61);
    return ((mixed ^ (mixed >>> 14)) >>> 0) / 4_294_967_296;
  };
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
  const { rules, seed, clock = systemClock, signal = signalInArgs } = resolvePlan(plan);
  const random = seededRandom(seed);
  const startedAt = clock.now();
  const log: FaultRecord[] = [];
  const faults = Object.fromEntries(FAULT_KINDS.map((kind) => [kind, 0])) as Record<FaultKind, number>;
  let ran = 0;

  const faulty = async (...args: A): Promise<Awaited<R>> => {
    const execution = log.length + 1;
    const at = clock.now() - startedAt;
    // The first rule that applies and whose draw succeeds: a draw only for a rule that applies with probability < 1.
    const rule = rules.find((rule) => rule.applies(execution, at) && (rule.probability >= 1 || random() < rule.probability));
    const kind = rule?.kind ?? "none";
    log.push({ execution, at, kind, ran: false });
    if (rule !== undefined) faults[rule.kind]++;
    const run = async (): Promise<Awaited<R>> => {
      ran++;
      log[execution - 1] = { execution, at, kind, ran: true };
      return await fn(...args);
    };
    if (rule === undefined) return run();
    switch (rule.kind) {
      case "slow":
        await wait(clock, rule.delayMs, signal(...args));
        return run();
      case "hang":
        return hang(signal(...args));
      case "lost_response":
        // The side effect happens; whatever fn returned or threw is lost on the way back.
        await run().catch(() => undefined);
        await wait(clock, rule.delayMs, signal(...args));
        throw injectedFault(rule.kind, rule, true, at);
      default:
        throw injectedFault(rule.kind, rule, false, at);
    }
  };

  Object.defineProperties(faulty, {
    name: { value: fn.name, configurable: true },
    log: { value: log, enumerable: true },
    stats: { get: () => ({ executions: log.length, ran, faults: { ...faults } }), enumerable: true },
  });
  return faulty as FaultyFunction<A, Awaited<R>>;
}
