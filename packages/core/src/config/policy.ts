import type { Jitter } from "../backoff/backoff.js";
import { checkRetryBudget, type RetryBudgetSettings } from "../budget/retry-budget.js";
import { InvalidOptionError } from "../errors/invalid-option-error.js";
import type { ToolError } from "../errors/tool-error.js";
import type { IdempotencySettings } from "../idempotency/guarded-call.js";
import { compileReflectionTemplate, type ReflectionTemplate } from "../texts/templater.js";
import { boolean, finite, fn, fraction, integer, nonEmptyString, oneOf } from "./checks.js";
import { DERIVES, JITTERS, STOP_PLACEHOLDERS } from "./defaults.js";
import type { ClassifyContext, FailureContext, PolicyOptions, ToolCall } from "./options.js";

/** The settings one tool's calls use: the plugin's options with the tool's policy applied, defaults filled in. */
export interface ResolvedPolicy {
  readonly maxRetries: number;
  readonly initialBackoffMs: number;
  readonly backoffMultiplier: number;
  readonly maxBackoffMs: number;
  readonly jitter: Jitter;
  readonly circuitBreakerThreshold: number;
  readonly circuitBreakerResetMs: number;
  readonly circuitBreakerCountsInvalidArguments: boolean;
  readonly circuitBreakerFailureRate: number | undefined;
  readonly circuitBreakerMinimumCalls: number;
  readonly circuitBreakerWindowMs: number;
  readonly circuitBreakerMaxResetMs: number | undefined;
  readonly reflectionPrompt: string;
  readonly template: ReflectionTemplate;
  /** The text of a call that did not run or is still running (`retryLaterPrompt`). */
  readonly retryLaterTemplate: ReflectionTemplate;
  /** Compiled stop texts; undefined: the built-in text. */
  readonly exhaustedTemplate: ReflectionTemplate | undefined;
  readonly notRecoverableTemplate: ReflectionTemplate | undefined;
  readonly circuitOpenTemplate: ReflectionTemplate | undefined;
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
  readonly fallback: ((call: ToolCall, error: ToolError) => unknown) | undefined;
  readonly repeatedCallLimit: number | undefined;
  /** 0: an exhausted stop lasts the scope's life. */
  readonly exhaustedResetMs: number;
  readonly classifyError: ((error: unknown, context: ClassifyContext) => ToolError | undefined) | undefined;
  readonly idempotency: IdempotencySettings;
  /** The tool's retry budget; undefined: none. */
  readonly retryBudget: RetryBudgetSettings | undefined;
}

/** Each policy option checked and resolved: `input`'s value where given, else `base`'s. Names are prefixed (`tools.pay.maxRetries`). */
export function resolvePolicy(
  input: Readonly<Record<string, unknown>>,
  idempotency: Readonly<Record<string, unknown>>,
  base: ResolvedPolicy,
  prefix: string,
): ResolvedPolicy {
  const name = (option: string) => prefix + option;
  const pick = <T>(option: keyof PolicyOptions, check: (value: unknown, name: string) => T, fallback: T): T =>
    input[option] === undefined ? fallback : check(input[option], name(option));

  const initialBackoffMs = pick("initialBackoffMs", finite(0), base.initialBackoffMs);
  const maxBackoffMs = pick("maxBackoffMs", finite(0), base.maxBackoffMs);
  if (maxBackoffMs < initialBackoffMs)
    throw new InvalidOptionError(name("maxBackoffMs"), maxBackoffMs, `a number >= initialBackoffMs (${initialBackoffMs})`);
  const circuitBreakerResetMs = pick("circuitBreakerResetMs", finite(0, true), base.circuitBreakerResetMs);
  const circuitBreakerMaxResetMs = pick("circuitBreakerMaxResetMs", finite(0, true), base.circuitBreakerMaxResetMs);
  if (circuitBreakerMaxResetMs !== undefined && circuitBreakerMaxResetMs < circuitBreakerResetMs) {
    throw new InvalidOptionError(
      name("circuitBreakerMaxResetMs"),
      circuitBreakerMaxResetMs,
      `a number >= circuitBreakerResetMs (${circuitBreakerResetMs})`,
    );
  }
  const reflectionPrompt = pick("reflectionPrompt", (value) => value as string, base.reflectionPrompt);
  const stop = (option: "exhaustedPrompt" | "notRecoverablePrompt" | "circuitOpenPrompt", fallback: ReflectionTemplate | undefined) =>
    input[option] === undefined ? fallback : compileReflectionTemplate(input[option] as string, name(option), STOP_PLACEHOLDERS);

  return {
    maxRetries: pick("maxRetries", integer(0), base.maxRetries),
    initialBackoffMs,
    backoffMultiplier: pick("backoffMultiplier", finite(1), base.backoffMultiplier),
    maxBackoffMs,
    jitter: pick("jitter", oneOf(JITTERS), base.jitter),
    circuitBreakerThreshold: pick("circuitBreakerThreshold", integer(1), base.circuitBreakerThreshold),
    circuitBreakerResetMs,
    circuitBreakerCountsInvalidArguments: pick("circuitBreakerCountsInvalidArguments", boolean, base.circuitBreakerCountsInvalidArguments),
    circuitBreakerFailureRate: pick("circuitBreakerFailureRate", fraction, base.circuitBreakerFailureRate),
    circuitBreakerMinimumCalls: pick("circuitBreakerMinimumCalls", integer(1), base.circuitBreakerMinimumCalls),
    circuitBreakerWindowMs: pick("circuitBreakerWindowMs", finite(0, true), base.circuitBreakerWindowMs),
    circuitBreakerMaxResetMs,
    reflectionPrompt,
    template: input.reflectionPrompt === undefined ? base.template : compileReflectionTemplate(reflectionPrompt, name("reflectionPrompt")),
    retryLaterTemplate:
      input.retryLaterPrompt === undefined
        ? base.retryLaterTemplate
        : compileReflectionTemplate(input.retryLaterPrompt as string, name("retryLaterPrompt"), STOP_PLACEHOLDERS),
    exhaustedTemplate: stop("exhaustedPrompt", base.exhaustedTemplate),
    notRecoverableTemplate: stop("notRecoverablePrompt", base.notRecoverableTemplate),
    circuitOpenTemplate: stop("circuitOpenPrompt", base.circuitOpenTemplate),
    attemptTimeoutsMs:
      input.attemptTimeoutMs === undefined ? base.attemptTimeoutsMs : attemptLimits(input.attemptTimeoutMs, name("attemptTimeoutMs")),
    defaultLimit: input.attemptTimeoutMs === undefined && base.defaultLimit,
    patienceMs: pick("patienceMs", finite(0), base.patienceMs),
    giveUpMs: pick("giveUpMs", finite(0), base.giveUpMs),
    waitForRecovery: pick("waitForRecovery", boolean, base.waitForRecovery),
    shouldRetry: pick("shouldRetry", fn, base.shouldRetry) as ResolvedPolicy["shouldRetry"],
    isFailure: pick("isFailure", fn, base.isFailure) as ResolvedPolicy["isFailure"],
    maxConcurrent: pick("maxConcurrent", integer(1), base.maxConcurrent),
    fallback: pick("fallback", fn, base.fallback) as ResolvedPolicy["fallback"],
    repeatedCallLimit: pick("repeatedCallLimit", integer(1), base.repeatedCallLimit),
    exhaustedResetMs: pick("exhaustedResetMs", finite(0), base.exhaustedResetMs),
    classifyError: pick("classifyError", fn, base.classifyError) as ResolvedPolicy["classifyError"],
    idempotency: resolveIdempotency(idempotency, base.idempotency, `${prefix}idempotency.`),
    retryBudget:
      input.retryBudget === undefined ? base.retryBudget : checkRetryBudget(input.retryBudget, name("retryBudget"), base.retryBudget),
  };
}

/** The settings a breaker is made from. */
const BREAKER_SETTINGS = [
  "circuitBreakerThreshold",
  "circuitBreakerResetMs",
  "circuitBreakerFailureRate",
  "circuitBreakerMinimumCalls",
  "circuitBreakerWindowMs",
  "circuitBreakerMaxResetMs",
] as const satisfies readonly (keyof ResolvedPolicy)[];

/** The first breaker setting in which a tool's policy differs from the plugin's, or undefined: then it shares the plugin's breaker. */
export function ownBreakerSetting(policy: ResolvedPolicy, plugin: ResolvedPolicy): (typeof BREAKER_SETTINGS)[number] | undefined {
  return BREAKER_SETTINGS.find((setting) => policy[setting] !== plugin[setting]);
}

function resolveIdempotency(input: Readonly<Record<string, unknown>>, base: IdempotencySettings, prefix: string): IdempotencySettings {
  return {
    keyField: input.keyField === undefined ? base.keyField : nonEmptyString(input.keyField, `${prefix}keyField`),
    key: input.key === undefined ? base.key : (fn(input.key, `${prefix}key`) as IdempotencySettings["key"]),
    ttlMs: input.ttlMs === undefined ? base.ttlMs : finite(0, true)(input.ttlMs, `${prefix}ttlMs`),
    leaseMs: input.leaseMs === undefined ? base.leaseMs : finite(0, true)(input.leaseMs, `${prefix}leaseMs`),
    requireKey: input.requireKey === undefined ? base.requireKey : boolean(input.requireKey, `${prefix}requireKey`),
    derive: input.derive === undefined ? base.derive : oneOf(DERIVES)(input.derive, `${prefix}derive`),
    maxResultBytes: input.maxResultBytes === undefined ? base.maxResultBytes : integer(0)(input.maxResultBytes, `${prefix}maxResultBytes`),
  };
}

/** `attemptTimeoutMs`: a limit (`0`: none), or a non-empty list of limits > 0, one per attempt of a failing row. */
function attemptLimits(value: unknown, name: string): readonly number[] {
  if (Array.isArray(value)) {
    if (value.length === 0 || value.some((item) => typeof item !== "number" || !Number.isFinite(item) || item <= 0)) {
      throw new InvalidOptionError(name, value, "a finite number >= 0, or a non-empty array of finite numbers > 0");
    }
    return Object.freeze([...(value as number[])]);
  }
  if (typeof value !== "number" || !Number.isFinite(value) || value < 0) {
    throw new InvalidOptionError(name, value, "a finite number >= 0, or a non-empty array of finite numbers > 0");
  }
  return value === 0 ? [] : [value];
}
