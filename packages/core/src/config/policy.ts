import type { Jitter } from "../backoff/backoff.js";
import type { RetryBudgetSettings } from "../budget/retry-budget.js";
import type { ToolError } from "../errors/tool-error.js";
import type { IdempotencySettings } from "../idempotency/guarded-call.js";
import type { ReflectionTemplate } from "../texts/templater.js";
import { applyRows, POLICY_ROWS, TOOL_IDEMPOTENCY_ROWS } from "./option-table.js";
import type { ClassifyContext, FailureContext, PolicyOptions, ToolCall } from "./options.js";

/** The settings one tool's calls use: the plugin's options with the tool's policy applied, defaults filled in. */
export interface ResolvedPolicy {
  readonly maxRetries: number;
  readonly initialBackoffMs: number;
  readonly backoffMultiplier: number;
  readonly maxBackoffMs: number;
  readonly jitter: Jitter;
  /** The attempt limits (`attemptTimeoutMs`), one per attempt of a failing row, the last for every later one; empty: none. */
  readonly attemptTimeoutsMs: readonly number[];
  /** Whether the limits are the default ones (`attemptTimeoutMs` not set). */
  readonly defaultLimit: boolean;
  readonly patienceMs: number;
  readonly giveUpMs: number;
  readonly waitForRecovery: boolean;
  readonly shouldRetry: ((error: ToolError, context: FailureContext) => boolean | undefined) | undefined;
  readonly isFailure: ((result: unknown, context: FailureContext) => boolean | ToolError | undefined) | undefined;
  readonly maxConcurrent: number | undefined;
  readonly repeatedCallLimit: number | undefined;
  /** 0: an exhausted stop lasts the scope's life. */
  readonly exhaustedResetMs: number;
  /** The tool's retry budget; undefined: none. */
  readonly retryBudget: RetryBudgetSettings | undefined;
  readonly fallback: ((call: ToolCall, error: ToolError) => unknown) | undefined;
  readonly circuitBreakerThreshold: number;
  readonly circuitBreakerResetMs: number;
  readonly circuitBreakerFailureRate: number | undefined;
  readonly circuitBreakerMinimumCalls: number;
  readonly circuitBreakerWindowMs: number;
  readonly circuitBreakerMaxResetMs: number | undefined;
  readonly circuitBreakerCountsInvalidArguments: boolean;
  readonly reflectionPrompt: string;
  /** The compiled `reflectionPrompt`. */
  readonly template: ReflectionTemplate;
  /** The text of a call that did not run or is still running (`retryLaterPrompt`). */
  readonly retryLaterTemplate: ReflectionTemplate;
  /** Compiled stop texts; undefined: the built-in text. */
  readonly exhaustedTemplate: ReflectionTemplate | undefined;
  readonly notRecoverableTemplate: ReflectionTemplate | undefined;
  readonly circuitOpenTemplate: ReflectionTemplate | undefined;
  readonly classifyError: ((error: unknown, context: ClassifyContext) => ToolError | undefined) | undefined;
  readonly idempotency: IdempotencySettings;
}

/** A policy from the option table's per-tool rows (see `applyRows`). */
export function resolvePolicy(
  input: Readonly<Record<string, unknown>>,
  idempotency: Readonly<Record<string, unknown>>,
  base: ResolvedPolicy | undefined,
  prefix: string,
): ResolvedPolicy {
  const policy = applyRows<Omit<ResolvedPolicy, "reflectionPrompt" | "defaultLimit" | "idempotency">>(POLICY_ROWS, input, base, prefix);
  return {
    ...policy,
    reflectionPrompt: policy.template.source,
    defaultLimit: input.attemptTimeoutMs === undefined && (base?.defaultLimit ?? true),
    idempotency: applyRows<IdempotencySettings>(TOOL_IDEMPOTENCY_ROWS, idempotency, base?.idempotency, `${prefix}idempotency.`),
  };
}

/** The policy every option starts from: the documented defaults. */
export const DEFAULT_POLICY: ResolvedPolicy = resolvePolicy({}, {}, undefined, "");

/** The settings a breaker is made from. */
const BREAKER_SETTINGS = POLICY_ROWS.filter(([, row]) => row.breaker).map(([name]) => name as keyof PolicyOptions & keyof ResolvedPolicy);

/** The first breaker setting in which a tool's policy differs from the plugin's, or undefined: then it shares the plugin's breaker. */
export function ownBreakerSetting(policy: ResolvedPolicy, plugin: ResolvedPolicy): keyof PolicyOptions | undefined {
  return BREAKER_SETTINGS.find((setting) => policy[setting] !== plugin[setting]);
}
