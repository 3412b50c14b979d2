import type { Jitter } from "../backoff/backoff.js";
import { checkRetryBudget, DEFAULT_RETRY_BUDGET } from "../budget/retry-budget.js";
import { defaultRedactor } from "../cleaning/clean-text.js";
import { systemClock } from "../clock.js";
import type { IdempotencyDerive } from "../idempotency/guarded-call.js";
import type { ToolEffect } from "../outcome.js";
import { DEFAULT_REFLECTION_PROMPT, DEFAULT_RETRY_LATER_PROMPT } from "../texts/model-texts.js";
import { REFLECTION_PLACEHOLDERS } from "../texts/templater.js";
import {
  attemptLimits,
  boolean,
  breakerStore,
  clock,
  effect,
  effects,
  finite,
  fn,
  fraction,
  idempotencyStore,
  integer,
  nonEmptyString,
  object,
  observers,
  oneOf,
  optionsObject,
  template,
  toolNames,
} from "./checks.js";
import type { IdempotencyOptions, PolicyOptions, RetryBudgetOptions, RetryReflectOptions } from "./options.js";

// Every option, once: its documented default, its check, whether a tool's policy may set it; in the
// order of the docs' table (docs/options.md), which `test/options-table.test.ts` checks against them.

/** One option. */
export interface OptionRow {
  /** The documented default: DEFAULT_OPTIONS holds it, the docs write it. Absent: a default told in words (none, the built-in text). */
  readonly default?: unknown;
  /** A default told by name (`defaultRedactor`), kept out of DEFAULT_OPTIONS. */
  readonly builtIn?: unknown;
  /** Checks a given value (named in full: `tools.pay.maxRetries`), returns what the plugin keeps; `inherited`: what it would be. */
  readonly check: (value: unknown, name: string, inherited: never) => unknown;
  /** A tool's policy may set it. */
  readonly perTool?: true;
  /** A breaker setting: a tool that sets it its own way gets a breaker of its own. */
  readonly breaker?: true;
  /** The resolved field it fills, when not its own name (a compiled template). */
  readonly into?: string;
  /** A number option of an earlier row that it may not be below (checked whichever of the two is set). */
  readonly atLeast?: string;
}

/** A row per option of `Options`, its default of the option's type; `perTool` exactly on the `PerTool` ones. */
type Table<Options, PerTool extends keyof Options> = {
  readonly [K in keyof Options]-?: OptionRow & { readonly default?: Options[K]; readonly builtIn?: Options[K] } & (K extends PerTool
      ? { readonly perTool: true }
      : { readonly perTool?: never });
};

const perTool = true;
const breaker = true;
const STOP_PLACEHOLDERS = [...REFLECTION_PLACEHOLDERS, "retry_after_s"];

/** `idempotency`: the guard of `write` tools. The store is the plugin's; a tool's policy may set the rest. */
export const IDEMPOTENCY_TABLE = {
  store: { check: idempotencyStore }, // unset: a new InMemoryIdempotencyStore per plugin, on its clock
  keyField: { default: "idempotency_key", check: nonEmptyString, perTool },
  key: { check: fn, perTool },
  ttlMs: { default: 86_400_000, check: finite(0, true), perTool },
  leaseMs: { default: 30_000, check: finite(0, true), perTool },
  requireKey: { default: true, check: boolean, perTool },
  derive: { default: "never", check: oneOf<IdempotencyDerive>(["never", "when-missing", "always"]), perTool },
  maxResultBytes: { default: 1_048_576, check: integer(0), perTool },
} as const satisfies Table<IdempotencyOptions, Exclude<keyof IdempotencyOptions, "store">>;

const IDEMPOTENCY_NAMES = Object.keys(IDEMPOTENCY_TABLE);

/** The plugin's options. */
export const OPTION_TABLE = {
  maxRetries: { default: 3, check: integer(0), perTool },
  initialBackoffMs: { default: 500, check: finite(0), perTool },
  backoffMultiplier: { default: 2, check: finite(1), perTool },
  maxBackoffMs: { default: 4_000, check: finite(0), perTool, atLeast: "initialBackoffMs" },
  jitter: { default: "none", check: oneOf<Jitter>(["none", "full", "equal", "decorrelated"]), perTool },
  // 10 s for the first attempt of a failing row, 30 s for the second, 60 s for every later one, chosen
  // with `bench:agents`: a hung attempt is cut off soon; a tool that answers after 20–50 s gets its time on a retry.
  attemptTimeoutMs: { default: [10_000, 30_000, 60_000] as readonly number[], check: attemptLimits, perTool, into: "attemptTimeoutsMs" },
  patienceMs: { default: 15_000, check: finite(0), perTool },
  giveUpMs: { default: 20_000, check: finite(0), perTool },
  waitForRecovery: { default: true, check: boolean, perTool },
  shouldRetry: { check: fn, perTool },
  isFailure: { check: fn, perTool },
  maxConcurrent: { default: undefined, check: integer(1), perTool },
  repeatedCallLimit: { default: undefined, check: integer(1), perTool },
  exhaustedResetMs: { default: 60_000, check: finite(0), perTool },
  retryBudget: { default: DEFAULT_RETRY_BUDGET as RetryBudgetOptions | undefined, check: checkRetryBudget, perTool },
  fallback: { check: fn, perTool },
  circuitBreakerThreshold: { default: 10, check: integer(1), perTool, breaker },
  circuitBreakerResetMs: { default: 1_000, check: finite(0, true), perTool, breaker },
  circuitBreakerFailureRate: { default: undefined, check: fraction, perTool, breaker },
  circuitBreakerMinimumCalls: { default: 10, check: integer(1), perTool, breaker },
  circuitBreakerWindowMs: { default: 60_000, check: finite(0, true), perTool, breaker },
  circuitBreakerMaxResetMs: { default: undefined, check: finite(0, true), perTool, breaker, atLeast: "circuitBreakerResetMs" },
  circuitBreakerCountsInvalidArguments: { default: false, check: boolean, perTool },
  circuitBreakerKey: { check: fn }, // unset: the tool name
  maxCircuitBreakers: { default: 10_000, check: integer(1) },
  circuitBreakerStore: { default: undefined, check: breakerStore },
  reflectionPrompt: { default: DEFAULT_REFLECTION_PROMPT, check: template(REFLECTION_PLACEHOLDERS), perTool, into: "template" },
  retryLaterPrompt: { default: DEFAULT_RETRY_LATER_PROMPT, check: template(STOP_PLACEHOLDERS), perTool, into: "retryLaterTemplate" },
  exhaustedPrompt: { check: template(STOP_PLACEHOLDERS), perTool, into: "exhaustedTemplate" },
  notRecoverablePrompt: { check: template(STOP_PLACEHOLDERS), perTool, into: "notRecoverableTemplate" },
  circuitOpenPrompt: { check: template(STOP_PLACEHOLDERS), perTool, into: "circuitOpenTemplate" },
  classifyError: { check: fn, perTool },
  tools: { default: {}, check: object },
  includeTools: { default: [] as readonly string[], check: toolNames },
  excludeTools: { default: [] as readonly string[], check: toolNames },
  toolEffects: { default: {} as Readonly<Record<string, ToolEffect>>, check: effects },
  defaultEffect: { default: "read", check: effect },
  idempotency: { default: defaultsOf(IDEMPOTENCY_TABLE), check: (value, name) => optionsObject(value, name, IDEMPOTENCY_NAMES) },
  trackingScope: { default: "scope", check: oneOf(["scope", "global"]) },
  maxAttemptCounters: { default: 10_000, check: integer(1) },
  onExhausted: { default: "return", check: oneOf(["return", "throw"]) },
  maxErrorLength: { default: 1000, check: integer(32) },
  redact: { builtIn: defaultRedactor, check: fn },
  observers: { default: [] as readonly never[], check: observers },
  clock: { builtIn: systemClock, check: clock },
  random: { builtIn: Math.random, check: fn },
} as const satisfies Table<RetryReflectOptions, keyof PolicyOptions>;

/** The documented defaults, from the option table. */
export const DEFAULT_OPTIONS = defaultsOf(OPTION_TABLE);

export const OPTION_NAMES: readonly string[] = Object.keys(OPTION_TABLE);

/**
 * Each row's `default`, where it has one, frozen (a change to DEFAULT_OPTIONS would change the
 * defaults the checks apply). An inline type, so that DEFAULT_OPTIONS reads as its values.
 */
function defaultsOf<T extends Readonly<Record<string, OptionRow>>>(
  table: T,
): {
  readonly [K in keyof T as T[K] extends { readonly default: unknown } ? K : never]: T[K] extends { readonly default: infer D } ? D : never;
} {
  const frozen = (value: unknown) => (typeof value === "object" && value !== null ? Object.freeze(value) : value);
  return Object.freeze(
    Object.fromEntries(Object.entries(table).flatMap(([name, row]) => ("default" in row ? [[name, frozen(row.default)]] : []))),
  ) as never;
}
