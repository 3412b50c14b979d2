import type { CircuitBreakerStore } from "../breaker/circuit-breaker-store.js";
import { defaultRedactor } from "../cleaning/clean-text.js";
import { systemClock } from "../clock.js";
import { InvalidOptionError } from "../errors/invalid-option-error.js";
import type { RetryReflectObserver, ToolEffect } from "../events/events.js";
import type { IdempotencyStore } from "../idempotency/idempotency-store.js";
import { InMemoryIdempotencyStore } from "../idempotency/in-memory-idempotency-store.js";
import { compileReflectionTemplate, DEFAULT_REFLECTION_PROMPT } from "../texts/templater.js";
import type { IdempotencyOptions, RetryReflectOptions, ToolPolicy } from "./options.js";
import {
  type IdempotencySettings,
  ownBreakerSetting,
  POLICY_NAMES,
  type ResolvedPolicy,
  resolvePolicy,
  TOOL_IDEMPOTENCY_NAMES,
  TOOL_POLICY_NAMES,
} from "./policy.js";

/** The documented defaults, in one place. */
export const DEFAULT_OPTIONS = {
  maxRetries: 3,
  initialBackoffMs: 500,
  backoffMultiplier: 2,
  maxBackoffMs: 30_000,
  circuitBreakerThreshold: 5,
  circuitBreakerResetMs: 60_000,
  circuitBreakerCountsInvalidArguments: false,
  circuitBreakerFailureRate: undefined,
  circuitBreakerMinimumCalls: 10,
  circuitBreakerWindowMs: 60_000,
  circuitBreakerMaxResetMs: undefined,
  maxCircuitBreakers: 10_000,
  circuitBreakerStore: undefined,
  reflectionPrompt: DEFAULT_REFLECTION_PROMPT,
  attemptTimeoutMs: undefined,
  maxConcurrent: undefined,
  repeatedCallLimit: undefined,
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
const OPTION_NAMES: ReadonlySet<string> = new Set<string>([...POLICY_NAMES, ...PLUGIN_ONLY_NAMES]);
/** The plugin's idempotency names: a tool's, and the store (checked against the type by the compiler). */
const IDEMPOTENCY_NAMES: ReadonlySet<string> = new Set<string>([
  ...TOOL_IDEMPOTENCY_NAMES,
  ...Object.keys({ store: true } satisfies Record<Exclude<keyof IdempotencyOptions, keyof NonNullable<ToolPolicy["idempotency"]>>, true>),
]);
const EFFECTS: readonly ToolEffect[] = ["read", "idempotent", "write"];

/** The policy every option starts from: the documented defaults. */
const DEFAULT_POLICY: ResolvedPolicy = {
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
  exhaustedTemplate: undefined,
  notRecoverableTemplate: undefined,
  circuitOpenTemplate: undefined,
  attemptTimeoutMs: undefined,
  shouldRetry: undefined,
  isFailure: undefined,
  maxConcurrent: undefined,
  fallback: undefined,
  repeatedCallLimit: undefined,
  classifyError: undefined,
  idempotency: { ...DEFAULT_OPTIONS.idempotency, key: undefined },
  slowOnly: false,
};

/** Options after defaults and validation: the plugin's policy (its fields, and as `policy`), each tool's, and the plugin-wide settings. */
export interface ResolvedOptions extends ResolvedPolicy {
  /** The plugin's policy: what a tool without one of its own uses. */
  readonly policy: ResolvedPolicy;
  /** Each configured tool's policy (`tools`), the plugin's with the tool's fields applied. */
  readonly tools: ReadonlyMap<string, ResolvedPolicy>;
  readonly circuitBreakerKey: RetryReflectOptions["circuitBreakerKey"];
  readonly maxCircuitBreakers: number;
  readonly circuitBreakerStore: CircuitBreakerStore | undefined;
  readonly includeTools: ReadonlySet<string>;
  readonly excludeTools: ReadonlySet<string>;
  /** Effects by tool name, `tools[name].effect` merged in. */
  readonly toolEffects: Readonly<Record<string, ToolEffect>>;
  readonly defaultEffect: ToolEffect;
  readonly idempotency: IdempotencySettings & { readonly store: IdempotencyStore };
  readonly trackingScope: "scope" | "global";
  readonly maxAttemptCounters: number;
  readonly onExhausted: "return" | "throw";
  readonly maxErrorLength: number;
  readonly redact: (text: string) => string;
  readonly observers: readonly RetryReflectObserver[];
  readonly clock: NonNullable<RetryReflectOptions["clock"]>;
  readonly random: () => number;
}

function integer(name: string, value: unknown, min: number, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== "number" || !Number.isInteger(value) || value < min)
    throw new InvalidOptionError(name, value, `an integer >= ${min}`);
  return value;
}

function oneOf<T extends string>(name: string, value: unknown, allowed: readonly T[], fallback: T): T {
  if (value === undefined) return fallback;
  if (typeof value !== "string" || !allowed.includes(value as T)) {
    throw new InvalidOptionError(name, value, `one of ${allowed.map((item) => `"${item}"`).join(", ")}`);
  }
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

function knownKeys(name: string, input: Record<string, unknown>, known: ReadonlySet<string>): void {
  for (const key of Object.keys(input)) {
    if (!known.has(key))
      throw new InvalidOptionError(`${name}${key}`, input[key], `a known option (unknown option; valid ones: ${[...known].join(", ")})`);
  }
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
  knownKeys("", input, OPTION_NAMES);
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
  knownKeys("idempotency.", idempotencyInput, IDEMPOTENCY_NAMES);
  const store =
    idempotencyInput.store === undefined ? new InMemoryIdempotencyStore({ clock }) : (idempotencyInput.store as IdempotencyStore);
  if (
    typeof store !== "object" ||
    store === null ||
    typeof store.begin !== "function" ||
    typeof store.complete !== "function" ||
    typeof store.release !== "function"
  ) {
    throw new InvalidOptionError("idempotency.store", idempotencyInput.store, "an IdempotencyStore (begin, complete, release)");
  }

  const policy = resolvePolicy(input, idempotencyInput, DEFAULT_POLICY, "");
  const tools = new Map<string, ResolvedPolicy>();
  for (const [toolName, raw] of Object.entries(plainObject("tools", options.tools) ?? {})) {
    const prefix = `tools.${toolName}.`;
    const toolInput = plainObject(`tools.${toolName}`, raw) ?? {};
    knownKeys(prefix, toolInput, TOOL_POLICY_NAMES);
    const toolIdempotency = plainObject(`${prefix}idempotency`, toolInput.idempotency) ?? {};
    knownKeys(`${prefix}idempotency.`, toolIdempotency, TOOL_IDEMPOTENCY_NAMES);
    if (toolInput.effect !== undefined) {
      const effect = oneOf(`${prefix}effect`, toolInput.effect, EFFECTS, "read");
      const declared = toolEffects[toolName];
      if (declared !== undefined && declared !== effect) {
        throw new InvalidOptionError(
          `${prefix}effect`,
          effect,
          `the effect toolEffects.${toolName} gives ("${declared}"): they are one setting`,
        );
      }
      toolEffects[toolName] = effect;
    }
    const toolPolicy = resolvePolicy(toolInput, toolIdempotency, policy, prefix);
    const own = ownBreakerSetting(toolPolicy, policy);
    if (own !== undefined && options.circuitBreakerKey !== undefined) {
      // A tool with breaker settings of its own has a breaker of its own, found by tool name; the
      // keys of `circuitBreakerKey` are not tool names, so `plugin.circuits` could not find them.
      throw new InvalidOptionError(
        `${prefix}${own}`,
        toolInput[own],
        "no breaker setting of its own while circuitBreakerKey is set (set it for the plugin instead)",
      );
    }
    tools.set(toolName, toolPolicy);
  }
  const circuitBreakerStore = breakerStore(options.circuitBreakerStore, policy, tools);

  return {
    ...policy,
    policy,
    tools,
    circuitBreakerKey: fn("circuitBreakerKey", options.circuitBreakerKey),
    maxCircuitBreakers: integer("maxCircuitBreakers", options.maxCircuitBreakers, 1, DEFAULT_OPTIONS.maxCircuitBreakers),
    circuitBreakerStore,
    includeTools: toolNames("includeTools", options.includeTools),
    excludeTools: toolNames("excludeTools", options.excludeTools),
    toolEffects,
    defaultEffect: oneOf("defaultEffect", options.defaultEffect, EFFECTS, DEFAULT_OPTIONS.defaultEffect),
    idempotency: { ...policy.idempotency, store },
    trackingScope: oneOf("trackingScope", options.trackingScope, ["scope", "global"], DEFAULT_OPTIONS.trackingScope),
    maxAttemptCounters: integer("maxAttemptCounters", options.maxAttemptCounters, 1, DEFAULT_OPTIONS.maxAttemptCounters),
    onExhausted: oneOf("onExhausted", options.onExhausted, ["return", "throw"], DEFAULT_OPTIONS.onExhausted),
    maxErrorLength: integer("maxErrorLength", options.maxErrorLength, 32, DEFAULT_OPTIONS.maxErrorLength),
    redact: fn("redact", options.redact) ?? defaultRedactor,
    observers: [...(observers as readonly RetryReflectObserver[])],
    clock,
    random: fn("random", options.random) ?? Math.random,
  };
}

const STORE_METHODS = ["isClosed", "peek", "state", "acquire", "record", "isolate", "reset"] as const;

/** A `circuitBreakerStore` with every method, and no failure-rate breaker (it would need every call recorded in the store). */
function breakerStore(value: unknown, policy: ResolvedPolicy, tools: ReadonlyMap<string, ResolvedPolicy>): CircuitBreakerStore | undefined {
  if (value === undefined) return undefined;
  if (
    typeof value !== "object" ||
    value === null ||
    !STORE_METHODS.every((name) => typeof (value as Record<string, unknown>)[name] === "function")
  ) {
    throw new InvalidOptionError("circuitBreakerStore", value, `a CircuitBreakerStore (${STORE_METHODS.join(", ")})`);
  }
  const rated = [...tools].find(([, each]) => each.circuitBreakerFailureRate !== undefined);
  if (policy.circuitBreakerFailureRate !== undefined || rated !== undefined) {
    const name =
      rated === undefined || policy.circuitBreakerFailureRate !== undefined
        ? "circuitBreakerFailureRate"
        : `tools.${rated[0]}.circuitBreakerFailureRate`;
    throw new InvalidOptionError(
      name,
      rated?.[1].circuitBreakerFailureRate ?? policy.circuitBreakerFailureRate,
      "undefined while circuitBreakerStore is set (a shared breaker counts consecutive failures: a rate would need every call recorded in the store)",
    );
  }
  return value as CircuitBreakerStore;
}
