import { systemClock } from "../clock.js";
import { InvalidOptionError } from "../errors/invalid-option-error.js";
import type { RetryReflectObserver, ToolEffect } from "../events/events.js";
import type { IdempotencyStore } from "../idempotency/idempotency-store.js";
import { InMemoryIdempotencyStore } from "../idempotency/in-memory-idempotency-store.js";
import { defaultRedactor } from "../reflection/clean-error-text.js";
import { compileReflectionTemplate, DEFAULT_REFLECTION_PROMPT, type ReflectionTemplate } from "../reflection/templater.js";
import type { IdempotencyOptions, RetryReflectOptions } from "./options.js";

/** The documented defaults, in one place. */
export const DEFAULT_OPTIONS = {
  maxRetries: 3,
  initialBackoffMs: 500,
  backoffMultiplier: 2,
  maxBackoffMs: 30_000,
  circuitBreakerThreshold: 5,
  circuitBreakerResetMs: 60_000,
  circuitBreakerCountsInvalidArguments: false,
  maxCircuitBreakers: 10_000,
  reflectionPrompt: DEFAULT_REFLECTION_PROMPT,
  includeTools: [] as readonly string[],
  excludeTools: [] as readonly string[],
  jitter: "none",
  toolEffects: {} as Readonly<Record<string, ToolEffect>>,
  defaultEffect: "read",
  trackingScope: "scope",
  maxAttemptCounters: 10_000,
  onExhausted: "return",
  maxErrorLength: 1000,
  idempotency: { keyField: "idempotency_key", ttlMs: 86_400_000, leaseMs: 30_000, requireKey: true },
} as const;

// The option names, checked against the options type by the compiler: a new option that is not
// listed here (or a name that is not an option) fails the build.
const OPTION_NAMES: ReadonlySet<string> = new Set(
  Object.keys({
    maxRetries: true,
    initialBackoffMs: true,
    backoffMultiplier: true,
    maxBackoffMs: true,
    circuitBreakerThreshold: true,
    circuitBreakerResetMs: true,
    circuitBreakerKey: true,
    circuitBreakerCountsInvalidArguments: true,
    maxCircuitBreakers: true,
    reflectionPrompt: true,
    includeTools: true,
    excludeTools: true,
    jitter: true,
    toolEffects: true,
    defaultEffect: true,
    idempotency: true,
    classifyError: true,
    trackingScope: true,
    maxAttemptCounters: true,
    onExhausted: true,
    maxErrorLength: true,
    redact: true,
    observers: true,
    clock: true,
    random: true,
  } satisfies Record<keyof RetryReflectOptions, true>),
);
const IDEMPOTENCY_NAMES: ReadonlySet<string> = new Set(
  Object.keys({ store: true, keyField: true, key: true, ttlMs: true, leaseMs: true, requireKey: true } satisfies Record<
    keyof IdempotencyOptions,
    true
  >),
);
const EFFECTS: readonly ToolEffect[] = ["read", "idempotent", "write"];

type Required<T> = { readonly [K in keyof T]-?: Exclude<T[K], undefined> };

/** Options after defaults and validation. */
export interface ResolvedOptions
  extends Required<Omit<RetryReflectOptions, "circuitBreakerKey" | "classifyError" | "idempotency" | "includeTools" | "excludeTools">> {
  readonly circuitBreakerKey: RetryReflectOptions["circuitBreakerKey"];
  readonly classifyError: RetryReflectOptions["classifyError"];
  readonly includeTools: ReadonlySet<string>;
  readonly excludeTools: ReadonlySet<string>;
  readonly idempotency: Required<Omit<IdempotencyOptions, "key">> & {
    readonly key: IdempotencyOptions["key"];
    readonly store: IdempotencyStore;
  };
  readonly template: ReflectionTemplate;
}

function integer(name: string, value: unknown, min: number, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== "number" || !Number.isInteger(value) || value < min)
    throw new InvalidOptionError(name, value, `an integer >= ${min}`);
  return value;
}

function finite(name: string, value: unknown, min: number, fallback: number, exclusive = false): number {
  if (value === undefined) return fallback;
  if (typeof value !== "number" || !Number.isFinite(value) || value < min || (exclusive && value === min)) {
    throw new InvalidOptionError(name, value, `a finite number ${exclusive ? ">" : ">="} ${min}`);
  }
  return value;
}

function oneOf<T extends string>(name: string, value: unknown, allowed: readonly T[], fallback: T): T {
  if (value === undefined) return fallback;
  if (typeof value !== "string" || !allowed.includes(value as T))
    throw new InvalidOptionError(name, value, `one of ${allowed.map((item) => `"${item}"`).join(", ")}`);
  return value as T;
}

function fn<T>(name: string, value: unknown): T | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== "function") throw new InvalidOptionError(name, value, "a function");
  return value as T;
}

function toolNames(name: string, value: unknown): ReadonlySet<string> {
  if (value === undefined) return new Set();
  if (!Array.isArray(value) || value.some((item) => typeof item !== "string" || item.length === 0)) {
    throw new InvalidOptionError(name, value, "an array of non-empty tool names");
  }
  return new Set(value as string[]);
}

function plainObject(name: string, value: unknown): Record<string, unknown> | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== "object" || value === null || Array.isArray(value)) throw new InvalidOptionError(name, value, "an object");
  return value as Record<string, unknown>;
}

const OBSERVER_HOOKS = ["onEvent", "onCallStart", "runInContext", "onCallEnd"] as const;

function isObserver(value: unknown): boolean {
  if (typeof value !== "object" || value === null) return false;
  return OBSERVER_HOOKS.every((hook) => {
    const member = (value as Record<string, unknown>)[hook];
    return member === undefined || typeof member === "function";
  });
}

/** Applies defaults and checks every option; throws `InvalidOptionError` naming the option and the value. */
export function resolveOptions(options: RetryReflectOptions = {}): ResolvedOptions {
  const input = plainObject("options", options) ?? {};
  for (const key of Object.keys(input)) {
    if (!OPTION_NAMES.has(key))
      throw new InvalidOptionError(key, input[key], `a known option (unknown option; valid ones: ${[...OPTION_NAMES].join(", ")})`);
  }
  const d = DEFAULT_OPTIONS;
  const initialBackoffMs = finite("initialBackoffMs", options.initialBackoffMs, 0, d.initialBackoffMs);
  const maxBackoffMs = finite("maxBackoffMs", options.maxBackoffMs, 0, d.maxBackoffMs);
  if (maxBackoffMs < initialBackoffMs) {
    throw new InvalidOptionError("maxBackoffMs", maxBackoffMs, `a number >= initialBackoffMs (${initialBackoffMs})`);
  }
  // `=== undefined`, not `??`: an explicit null is an invalid value, not "use the default".
  const clock = options.clock === undefined ? systemClock : options.clock;
  if (typeof clock !== "object" || clock === null || typeof clock.now !== "function" || typeof clock.sleep !== "function") {
    throw new InvalidOptionError("clock", options.clock, "an object with now() and sleep(ms, signal)");
  }
  const observers = options.observers === undefined ? [] : options.observers;
  if (!Array.isArray(observers) || !observers.every(isObserver)) {
    throw new InvalidOptionError(
      "observers",
      options.observers,
      "an array of observer objects whose hooks (onEvent, onCallStart, runInContext, onCallEnd) are functions",
    );
  }
  // Copied (with no prototype, so that a tool named "toString" is not mistaken for an effect):
  // changing the caller's object after create() does not change the plugin.
  const toolEffects: Record<string, ToolEffect> = Object.create(null) as Record<string, ToolEffect>;
  for (const [tool, effect] of Object.entries(plainObject("toolEffects", options.toolEffects) ?? {})) {
    toolEffects[tool] = oneOf(`toolEffects.${tool}`, effect, EFFECTS, "read");
  }

  const idempotencyInput = plainObject("idempotency", options.idempotency) ?? {};
  for (const key of Object.keys(idempotencyInput)) {
    if (!IDEMPOTENCY_NAMES.has(key))
      throw new InvalidOptionError(
        `idempotency.${key}`,
        idempotencyInput[key],
        `a known option (valid ones: ${[...IDEMPOTENCY_NAMES].join(", ")})`,
      );
  }
  const idem = idempotencyInput as IdempotencyOptions;
  const keyField = idem.keyField === undefined ? d.idempotency.keyField : idem.keyField;
  if (typeof keyField !== "string" || keyField.length === 0)
    throw new InvalidOptionError("idempotency.keyField", idem.keyField, "a non-empty string");
  const store = idem.store === undefined ? new InMemoryIdempotencyStore({ clock }) : idem.store;
  if (
    typeof store !== "object" ||
    store === null ||
    typeof store.begin !== "function" ||
    typeof store.complete !== "function" ||
    typeof store.release !== "function"
  ) {
    throw new InvalidOptionError("idempotency.store", idem.store, "an IdempotencyStore (begin, complete, release)");
  }
  if (idem.requireKey !== undefined && typeof idem.requireKey !== "boolean")
    throw new InvalidOptionError("idempotency.requireKey", idem.requireKey, "a boolean");
  const countsInvalid = options.circuitBreakerCountsInvalidArguments;
  if (countsInvalid !== undefined && typeof countsInvalid !== "boolean") {
    throw new InvalidOptionError("circuitBreakerCountsInvalidArguments", countsInvalid, "a boolean");
  }

  return {
    maxRetries: integer("maxRetries", options.maxRetries, 0, d.maxRetries),
    initialBackoffMs,
    backoffMultiplier: finite("backoffMultiplier", options.backoffMultiplier, 1, d.backoffMultiplier),
    maxBackoffMs,
    circuitBreakerThreshold: integer("circuitBreakerThreshold", options.circuitBreakerThreshold, 1, d.circuitBreakerThreshold),
    circuitBreakerResetMs: finite("circuitBreakerResetMs", options.circuitBreakerResetMs, 0, d.circuitBreakerResetMs, true),
    circuitBreakerKey: fn("circuitBreakerKey", options.circuitBreakerKey),
    circuitBreakerCountsInvalidArguments: countsInvalid ?? d.circuitBreakerCountsInvalidArguments,
    maxCircuitBreakers: integer("maxCircuitBreakers", options.maxCircuitBreakers, 1, d.maxCircuitBreakers),
    reflectionPrompt: options.reflectionPrompt === undefined ? d.reflectionPrompt : options.reflectionPrompt,
    template: compileReflectionTemplate(options.reflectionPrompt === undefined ? d.reflectionPrompt : options.reflectionPrompt),
    includeTools: toolNames("includeTools", options.includeTools),
    excludeTools: toolNames("excludeTools", options.excludeTools),
    jitter: oneOf("jitter", options.jitter, ["none", "full", "equal", "decorrelated"], d.jitter),
    toolEffects,
    defaultEffect: oneOf("defaultEffect", options.defaultEffect, EFFECTS, d.defaultEffect),
    idempotency: {
      store,
      keyField,
      key: fn("idempotency.key", idem.key),
      ttlMs: finite("idempotency.ttlMs", idem.ttlMs, 0, d.idempotency.ttlMs, true),
      leaseMs: finite("idempotency.leaseMs", idem.leaseMs, 0, d.idempotency.leaseMs, true),
      requireKey: idem.requireKey ?? d.idempotency.requireKey,
    },
    classifyError: fn("classifyError", options.classifyError),
    trackingScope: oneOf("trackingScope", options.trackingScope, ["scope", "global"], d.trackingScope),
    maxAttemptCounters: integer("maxAttemptCounters", options.maxAttemptCounters, 1, d.maxAttemptCounters),
    onExhausted: oneOf("onExhausted", options.onExhausted, ["return", "throw"], d.onExhausted),
    maxErrorLength: integer("maxErrorLength", options.maxErrorLength, 32, d.maxErrorLength),
    redact: fn("redact", options.redact) ?? defaultRedactor,
    observers: [...(observers as readonly RetryReflectObserver[])],
    clock,
    random: fn("random", options.random) ?? Math.random,
  };
}
