import type { CircuitBreakerStore } from "../breaker/circuit-breaker-store.js";
import type { Clock } from "../clock.js";
import { InvalidOptionError } from "../errors/invalid-option-error.js";
import type { RetryReflectObserver } from "../events/events.js";
import type { IdempotencyStore } from "../idempotency/idempotency-store.js";
import type { ToolEffect } from "../outcome.js";
import { compileReflectionTemplate, type ReflectionTemplate } from "../texts/templater.js";

/** A check of one option's value, named in full (`tools.pay.maxRetries`): what the plugin keeps, or an `InvalidOptionError`. */
export type Check<T> = (value: unknown, name: string) => T;

export function integer(min: number): Check<number> {
  return (value, name) => {
    if (typeof value !== "number" || !Number.isInteger(value) || value < min)
      throw new InvalidOptionError(name, value, `an integer >= ${min}`);
    return value;
  };
}

export function finite(min: number, exclusive = false): Check<number> {
  return (value, name) => {
    if (typeof value !== "number" || !Number.isFinite(value) || value < min || (exclusive && value === min)) {
      throw new InvalidOptionError(name, value, `a finite number ${exclusive ? ">" : ">="} ${min}`);
    }
    return value;
  };
}

export const fraction: Check<number> = (value, name) => {
  if (typeof value !== "number" || !Number.isFinite(value) || value <= 0 || value > 1)
    throw new InvalidOptionError(name, value, "a fraction in (0, 1]");
  return value;
};

export const boolean: Check<boolean> = (value, name) => {
  if (typeof value !== "boolean") throw new InvalidOptionError(name, value, "a boolean");
  return value;
};

export function oneOf<const T extends string>(allowed: readonly T[]): Check<T> {
  return (value, name) => {
    if (typeof value !== "string" || !allowed.includes(value as T))
      throw new InvalidOptionError(name, value, `one of ${allowed.map((item) => `"${item}"`).join(", ")}`);
    return value as T;
  };
}

export const fn: Check<unknown> = (value, name) => {
  if (typeof value !== "function") throw new InvalidOptionError(name, value, "a function");
  return value;
};

export const nonEmptyString: Check<string> = (value, name) => {
  if (typeof value !== "string" || value.length === 0) throw new InvalidOptionError(name, value, "a non-empty string");
  return value;
};

export const toolNames: Check<ReadonlySet<string>> = (value, name) => {
  if (!Array.isArray(value) || value.some((item) => typeof item !== "string" || item.length === 0)) {
    throw new InvalidOptionError(name, value, "an array of non-empty tool names");
  }
  return new Set(value as string[]);
};

/** An options object: anything else, `null` and arrays included, is invalid. */
export const object: Check<Record<string, unknown>> = (value, name) => {
  if (typeof value !== "object" || value === null || Array.isArray(value)) throw new InvalidOptionError(name, value, "an object");
  return value as Record<string, unknown>;
};

/** An options object (undefined: none given) whose every key is one of `known`; `prefix` goes before a key in the error. */
export function optionsObject(value: unknown, name: string, known: ReadonlySet<string>, prefix = `${name}.`): Record<string, unknown> {
  const input = value === undefined ? {} : object(value, name);
  for (const key of Object.keys(input)) {
    if (!known.has(key))
      throw new InvalidOptionError(`${prefix}${key}`, input[key], `a known option (unknown option; valid ones: ${[...known].join(", ")})`);
  }
  return input;
}

/** A template whose placeholders are among `placeholders` (compiled once, at build). */
export function template(placeholders: readonly string[]): Check<ReflectionTemplate> {
  return (value, name) => compileReflectionTemplate(value as string, name, placeholders);
}

export const effect = oneOf<ToolEffect>(["read", "idempotent", "write"]);

/** `toolEffects`, copied with no prototype (a tool named "toString" is not an effect): later changes to the caller's object change nothing. */
export const effects: Check<Readonly<Record<string, ToolEffect>>> = (value, name) => {
  const entries = Object.entries(object(value, name));
  const copy = Object.create(null) as Record<string, ToolEffect>;
  for (const [tool, given] of entries) copy[tool] = effect(given, `${name}.${tool}`);
  return copy;
};

/** `attemptTimeoutMs`: a limit (`0`: none), or a non-empty list of limits > 0, one per attempt of a failing row. */
export const attemptLimits: Check<readonly number[]> = (value, name) => {
  const list = Array.isArray(value) ? (value as unknown[]) : [value];
  const positive = (item: unknown) => typeof item === "number" && Number.isFinite(item) && item > 0;
  if (Array.isArray(value) ? value.length === 0 || !list.every(positive) : value !== 0 && !positive(value)) {
    throw new InvalidOptionError(name, value, "a finite number >= 0, or a non-empty array of finite numbers > 0");
  }
  return Object.freeze(value === 0 ? [] : [...(list as number[])]);
};

/** An object whose `methods` are functions; `expected` says what it should be. */
function withMethods<T>(methods: readonly string[], expected: string): Check<T> {
  return (value, name) => {
    if (typeof value !== "object" || value === null) throw new InvalidOptionError(name, value, expected);
    for (const method of methods) {
      if (typeof (value as Record<string, unknown>)[method] !== "function") throw new InvalidOptionError(name, value, expected);
    }
    return value as T;
  };
}

export const clock = withMethods<Clock>(["now", "sleep"], "an object with now() and sleep(ms, signal)");

export const idempotencyStore = withMethods<IdempotencyStore>(
  ["begin", "complete", "release"],
  "an IdempotencyStore (begin, complete, release)",
);

const BREAKER_STORE_METHODS = ["isClosed", "peek", "state", "acquire", "record", "isolate", "reset"];
const breakerStoreShape = withMethods<CircuitBreakerStore>(
  BREAKER_STORE_METHODS,
  `a CircuitBreakerStore (${BREAKER_STORE_METHODS.join(", ")})`,
);

/** A `circuitBreakerStore` with every method (and `shareBudget`, if any, a function). */
export const breakerStore: Check<CircuitBreakerStore> = (value, name) => {
  const share = breakerStoreShape(value, name).shareBudget as unknown;
  if (share !== undefined && typeof share !== "function") {
    throw new InvalidOptionError(`${name}.shareBudget`, share, "a function, or undefined (each process keeps its own retry budget)");
  }
  return value as CircuitBreakerStore;
};

const OBSERVER_HOOKS = ["onEvent", "onCallStart", "runInContext", "onCallEnd"];

/** `observers`: objects whose hooks, where present, are functions; copied. */
export const observers: Check<readonly RetryReflectObserver[]> = (value, name) => {
  const isObserver = (item: unknown) =>
    typeof item === "object" &&
    item !== null &&
    OBSERVER_HOOKS.every((hook) => {
      const member = (item as Record<string, unknown>)[hook];
      return member === undefined || typeof member === "function";
    });
  if (!Array.isArray(value) || !value.every(isObserver)) {
    throw new InvalidOptionError(name, value, `an array of observer objects whose hooks (${OBSERVER_HOOKS.join(", ")}) are functions`);
  }
  return [...value];
};
