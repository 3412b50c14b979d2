import type { Jitter } from "../backoff/backoff.js";
import { DEFAULT_RETRY_BUDGET } from "../budget/retry-budget.js";
import type { ToolEffect } from "../outcome.js";
import { DEFAULT_REFLECTION_PROMPT, DEFAULT_RETRY_LATER_PROMPT } from "../texts/model-texts.js";
import { compileReflectionTemplate, REFLECTION_PLACEHOLDERS } from "../texts/templater.js";
import type {
  IdempotencyDerive,
  IdempotencyOptions,
  PolicyOptions,
  RetryBudgetOptions,
  RetryReflectOptions,
  ToolPolicy,
} from "./options.js";
import type { ResolvedPolicy } from "./policy.js";

// The documented defaults and the option names, in one place.

/**
 * The default attempt time limits: 10 s for the first attempt of a failing row, 30 s for the
 * second, 60 s for every later one, chosen with `bench:agents` (a hung attempt is cut off soon and
 * retried in place; a tool that answers after 20–50 s gets its time on a retry).
 */
export const DEFAULT_ATTEMPT_TIMEOUTS_MS: readonly number[] = [10_000, 30_000, 60_000];

export const EFFECTS: readonly ToolEffect[] = ["read", "idempotent", "write"];

/** The placeholders of the stop texts: the reflection's, and the wait in seconds. */
export const STOP_PLACEHOLDERS = [...REFLECTION_PLACEHOLDERS, "retry_after_s"] as const;

export const JITTERS: readonly Jitter[] = ["none", "full", "equal", "decorrelated"];
export const DERIVES: readonly IdempotencyDerive[] = ["never", "when-missing", "always"];

// The policy option names, checked against the type by the compiler.
export const POLICY_NAMES: readonly (keyof PolicyOptions)[] = Object.keys({
  maxRetries: true,
  initialBackoffMs: true,
  backoffMultiplier: true,
  maxBackoffMs: true,
  jitter: true,
  circuitBreakerThreshold: true,
  circuitBreakerResetMs: true,
  circuitBreakerCountsInvalidArguments: true,
  circuitBreakerFailureRate: true,
  circuitBreakerMinimumCalls: true,
  circuitBreakerWindowMs: true,
  circuitBreakerMaxResetMs: true,
  reflectionPrompt: true,
  retryLaterPrompt: true,
  exhaustedPrompt: true,
  notRecoverablePrompt: true,
  circuitOpenPrompt: true,
  attemptTimeoutMs: true,
  patienceMs: true,
  giveUpMs: true,
  waitForRecovery: true,
  shouldRetry: true,
  isFailure: true,
  maxConcurrent: true,
  fallback: true,
  repeatedCallLimit: true,
  exhaustedResetMs: true,
  classifyError: true,
  retryBudget: true,
} satisfies Record<keyof PolicyOptions, true>) as (keyof PolicyOptions)[];

/** The names a tool's policy may hold: the policy options, its effect and its idempotency settings. */
export const TOOL_POLICY_NAMES: ReadonlySet<string> = new Set<string>([
  ...POLICY_NAMES,
  "effect",
  "idempotency",
] satisfies (keyof ToolPolicy)[]);

/** The idempotency names of a tool's policy (the store is the plugin's). */
export const TOOL_IDEMPOTENCY_NAMES: ReadonlySet<string> = new Set(
  Object.keys({
    keyField: true,
    key: true,
    ttlMs: true,
    leaseMs: true,
    requireKey: true,
    derive: true,
    maxResultBytes: true,
  } satisfies Record<keyof NonNullable<ToolPolicy["idempotency"]>, true>),
);

/** The documented defaults, in one place. */
export const DEFAULT_OPTIONS = {
  maxRetries: 3,
  initialBackoffMs: 500,
  backoffMultiplier: 2,
  maxBackoffMs: 4_000,
  circuitBreakerThreshold: 10,
  circuitBreakerResetMs: 1_000,
  circuitBreakerCountsInvalidArguments: false,
  circuitBreakerFailureRate: undefined,
  circuitBreakerMinimumCalls: 10,
  circuitBreakerWindowMs: 60_000,
  circuitBreakerMaxResetMs: undefined,
  maxCircuitBreakers: 10_000,
  circuitBreakerStore: undefined,
  reflectionPrompt: DEFAULT_REFLECTION_PROMPT,
  retryLaterPrompt: DEFAULT_RETRY_LATER_PROMPT,
  attemptTimeoutMs: DEFAULT_ATTEMPT_TIMEOUTS_MS,
  patienceMs: 15_000,
  giveUpMs: 20_000,
  waitForRecovery: true,
  maxConcurrent: undefined,
  repeatedCallLimit: undefined,
  exhaustedResetMs: 60_000,
  retryBudget: DEFAULT_RETRY_BUDGET as RetryBudgetOptions | undefined,
  includeTools: [] as readonly string[],
  excludeTools: [] as readonly string[],
  jitter: "none",
  tools: {},
  toolEffects: {} as Readonly<Record<string, ToolEffect>>,
  defaultEffect: "read",
  trackingScope: "scope",
  maxAttemptCounters: 10_000,
  onExhausted: "return",
  maxErrorLength: 1000,
  observers: [] as readonly never[],
  idempotency: {
    keyField: "idempotency_key",
    ttlMs: 86_400_000,
    leaseMs: 30_000,
    requireKey: true,
    derive: "never",
    maxResultBytes: 1_048_576,
  },
} as const;

// The option names, checked against the options type by the compiler: a new option that is not
// listed (or a name that is not an option) fails the build.
const PLUGIN_ONLY_NAMES = Object.keys({
  tools: true,
  circuitBreakerKey: true,
  maxCircuitBreakers: true,
  circuitBreakerStore: true,
  includeTools: true,
  excludeTools: true,
  toolEffects: true,
  defaultEffect: true,
  idempotency: true,
  trackingScope: true,
  maxAttemptCounters: true,
  onExhausted: true,
  maxErrorLength: true,
  redact: true,
  observers: true,
  clock: true,
  random: true,
} satisfies Record<Exclude<keyof RetryReflectOptions, (typeof POLICY_NAMES)[number]>, true>);
export const OPTION_NAMES: ReadonlySet<string> = new Set<string>([...POLICY_NAMES, ...PLUGIN_ONLY_NAMES]);
/** The plugin's idempotency names: a tool's, and the store (checked against the type by the compiler). */
export const IDEMPOTENCY_NAMES: ReadonlySet<string> = new Set<string>([
  ...TOOL_IDEMPOTENCY_NAMES,
  ...Object.keys({ store: true } satisfies Record<Exclude<keyof IdempotencyOptions, keyof NonNullable<ToolPolicy["idempotency"]>>, true>),
]);

/** The policy every option starts from: the documented defaults. */
export const DEFAULT_POLICY: ResolvedPolicy = {
  maxRetries: DEFAULT_OPTIONS.maxRetries,
  initialBackoffMs: DEFAULT_OPTIONS.initialBackoffMs,
  backoffMultiplier: DEFAULT_OPTIONS.backoffMultiplier,
  maxBackoffMs: DEFAULT_OPTIONS.maxBackoffMs,
  jitter: DEFAULT_OPTIONS.jitter,
  circuitBreakerThreshold: DEFAULT_OPTIONS.circuitBreakerThreshold,
  circuitBreakerResetMs: DEFAULT_OPTIONS.circuitBreakerResetMs,
  circuitBreakerCountsInvalidArguments: DEFAULT_OPTIONS.circuitBreakerCountsInvalidArguments,
  circuitBreakerFailureRate: DEFAULT_OPTIONS.circuitBreakerFailureRate,
  circuitBreakerMinimumCalls: DEFAULT_OPTIONS.circuitBreakerMinimumCalls,
  circuitBreakerWindowMs: DEFAULT_OPTIONS.circuitBreakerWindowMs,
  circuitBreakerMaxResetMs: DEFAULT_OPTIONS.circuitBreakerMaxResetMs,
  reflectionPrompt: DEFAULT_OPTIONS.reflectionPrompt,
  template: compileReflectionTemplate(DEFAULT_OPTIONS.reflectionPrompt),
  retryLaterTemplate: compileReflectionTemplate(DEFAULT_OPTIONS.retryLaterPrompt, "retryLaterPrompt", STOP_PLACEHOLDERS),
  exhaustedTemplate: undefined,
  notRecoverableTemplate: undefined,
  circuitOpenTemplate: undefined,
  attemptTimeoutsMs: DEFAULT_ATTEMPT_TIMEOUTS_MS,
  defaultLimit: true,
  patienceMs: DEFAULT_OPTIONS.patienceMs,
  giveUpMs: DEFAULT_OPTIONS.giveUpMs,
  waitForRecovery: DEFAULT_OPTIONS.waitForRecovery,
  shouldRetry: undefined,
  isFailure: undefined,
  maxConcurrent: undefined,
  fallback: undefined,
  repeatedCallLimit: undefined,
  exhaustedResetMs: DEFAULT_OPTIONS.exhaustedResetMs,
  classifyError: undefined,
  idempotency: { ...DEFAULT_OPTIONS.idempotency, key: undefined },
  retryBudget: DEFAULT_RETRY_BUDGET,
};
