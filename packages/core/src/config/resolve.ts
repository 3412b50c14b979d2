import type { CircuitBreakerStore } from "../breaker/circuit-breaker-store.js";
import { defaultRedactor } from "../cleaning/redactor.js";
import { systemClock } from "../clock.js";
import { InvalidOptionError } from "../errors/invalid-option-error.js";
import type { RetryReflectObserver } from "../events/events.js";
import type { IdempotencySettings } from "../idempotency/guarded-call.js";
import type { IdempotencyStore } from "../idempotency/idempotency-store.js";
import { InMemoryIdempotencyStore } from "../idempotency/in-memory-idempotency-store.js";
import type { ToolEffect } from "../outcome.js";
import { fn, integer, isObserver, knownKeys, oneOf, optional, plainObject, toolNames } from "./checks.js";
import {
  DEFAULT_OPTIONS,
  DEFAULT_POLICY,
  EFFECTS,
  IDEMPOTENCY_NAMES,
  OPTION_NAMES,
  TOOL_IDEMPOTENCY_NAMES,
  TOOL_POLICY_NAMES,
} from "./defaults.js";
import type { RetryReflectOptions } from "./options.js";
import { ownBreakerSetting, type ResolvedPolicy, resolvePolicy } from "./policy.js";

export { DEFAULT_OPTIONS } from "./defaults.js";

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

/** The `toolEffects` of a plugin that names none (one shared object: `effectOf` tells it by identity). */
const NO_TOOL_EFFECTS: Record<string, ToolEffect> = Object.freeze(Object.create(null) as Record<string, ToolEffect>);

/** Applies defaults and checks every option; throws `InvalidOptionError` naming the option and the value. */
export function resolveOptions(options: RetryReflectOptions = {}): ResolvedOptions {
  const input = plainObject(options, "options") ?? {};
  knownKeys("", input, OPTION_NAMES);
  // `=== undefined`, not `??`: an explicit null is an invalid value, not "use the default".
  const clock = options.clock === undefined ? systemClock : options.clock;
  if (typeof clock !== "object" || clock === null || typeof clock.now !== "function" || typeof clock.sleep !== "function") {
    throw new InvalidOptionError("clock", options.clock, "an object with now() and sleep(ms, signal)");
  }
  const observers = options.observers === undefined ? DEFAULT_OPTIONS.observers : options.observers;
  if (!Array.isArray(observers) || !observers.every(isObserver)) {
    throw new InvalidOptionError(
      "observers",
      options.observers,
      "an array of observer objects whose hooks (onEvent, onCallStart, runInContext, onCallEnd) are functions",
    );
  }
  // Copied (with no prototype, so that a tool named "toString" is not mistaken for an effect):
  // changing the caller's object after create() does not change the plugin.
  let toolEffects: Record<string, ToolEffect> = NO_TOOL_EFFECTS;
  for (const [tool, effect] of Object.entries(plainObject(options.toolEffects, "toolEffects") ?? {})) {
    if (toolEffects === NO_TOOL_EFFECTS) toolEffects = Object.create(null) as Record<string, ToolEffect>;
    toolEffects[tool] = oneOf(EFFECTS)(effect, `toolEffects.${tool}`);
  }

  const idempotencyInput = plainObject(options.idempotency, "idempotency") ?? {};
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
  for (const [toolName, raw] of Object.entries(plainObject(options.tools, "tools") ?? {})) {
    const prefix = `tools.${toolName}.`;
    const toolInput = plainObject(raw, `tools.${toolName}`) ?? {};
    knownKeys(prefix, toolInput, TOOL_POLICY_NAMES);
    const toolIdempotency = plainObject(toolInput.idempotency, `${prefix}idempotency`) ?? {};
    knownKeys(`${prefix}idempotency.`, toolIdempotency, TOOL_IDEMPOTENCY_NAMES);
    if (toolInput.effect !== undefined) {
      const effect = oneOf(EFFECTS)(toolInput.effect, `${prefix}effect`);
      const declared = toolEffects[toolName];
      if (declared !== undefined && declared !== effect) {
        throw new InvalidOptionError(
          `${prefix}effect`,
          effect,
          `the effect toolEffects.${toolName} gives ("${declared}"): they are one setting`,
        );
      }
      if (toolEffects === NO_TOOL_EFFECTS) toolEffects = Object.create(null) as Record<string, ToolEffect>;
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
  const circuitBreakerStore = breakerStore(options.circuitBreakerStore);

  return {
    ...policy,
    policy,
    tools,
    circuitBreakerKey: optional(options.circuitBreakerKey, "circuitBreakerKey", fn, undefined) as ResolvedOptions["circuitBreakerKey"],
    maxCircuitBreakers: optional(options.maxCircuitBreakers, "maxCircuitBreakers", integer(1), DEFAULT_OPTIONS.maxCircuitBreakers),
    circuitBreakerStore,
    includeTools: optional(options.includeTools, "includeTools", toolNames, new Set<string>()),
    excludeTools: optional(options.excludeTools, "excludeTools", toolNames, new Set<string>()),
    toolEffects,
    defaultEffect: optional(options.defaultEffect, "defaultEffect", oneOf(EFFECTS), DEFAULT_OPTIONS.defaultEffect),
    idempotency: { ...policy.idempotency, store },
    trackingScope: optional(options.trackingScope, "trackingScope", oneOf(["scope", "global"] as const), DEFAULT_OPTIONS.trackingScope),
    maxAttemptCounters: optional(options.maxAttemptCounters, "maxAttemptCounters", integer(1), DEFAULT_OPTIONS.maxAttemptCounters),
    onExhausted: optional(options.onExhausted, "onExhausted", oneOf(["return", "throw"] as const), DEFAULT_OPTIONS.onExhausted),
    maxErrorLength: optional(options.maxErrorLength, "maxErrorLength", integer(32), DEFAULT_OPTIONS.maxErrorLength),
    redact: optional(options.redact, "redact", fn, defaultRedactor) as (text: string) => string,
    observers: [...(observers as readonly RetryReflectObserver[])],
    clock,
    random: optional(options.random, "random", fn, Math.random) as () => number,
  };
}

const STORE_METHODS = ["isClosed", "peek", "state", "acquire", "record", "isolate", "reset"] as const;

/** A `circuitBreakerStore` with every method (and `shareBudget`, if any, a function). */
function breakerStore(value: unknown): CircuitBreakerStore | undefined {
  if (value === undefined) return undefined;
  if (
    typeof value !== "object" ||
    value === null ||
    !STORE_METHODS.every((name) => typeof (value as Record<string, unknown>)[name] === "function")
  ) {
    throw new InvalidOptionError("circuitBreakerStore", value, `a CircuitBreakerStore (${STORE_METHODS.join(", ")})`);
  }
  const share = (value as Record<string, unknown>).shareBudget;
  if (share !== undefined && typeof share !== "function") {
    throw new InvalidOptionError(
      "circuitBreakerStore.shareBudget",
      share,
      "a function, or undefined (each process keeps its own retry budget)",
    );
  }
  return value as CircuitBreakerStore;
}

/** Is `toolName` handled (not excluded, and included when `includeTools` is not empty)? */
export function isInScope(options: ResolvedOptions, toolName: string): boolean {
  const { includeTools, excludeTools } = options;
  if (excludeTools.size !== 0 && excludeTools.has(toolName)) return false;
  return includeTools.size === 0 || includeTools.has(toolName);
}

/** The effect of a tool: `toolEffects[toolName]`, else `defaultEffect`. */
export function effectOf(options: ResolvedOptions, toolName: string): ToolEffect {
  const { toolEffects } = options;
  // No lookup by name when no tool has an effect of its own (the healthy path of most plugins).
  return toolEffects === NO_TOOL_EFFECTS ? options.defaultEffect : (toolEffects[toolName] ?? options.defaultEffect);
}
