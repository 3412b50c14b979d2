import type { CircuitBreakerStore } from "../breaker/circuit-breaker-store.js";
import type { Clock } from "../clock.js";
import { isNonArrayObject, isObject } from "../errors/error-codes.js";
import { InvalidOptionError } from "../errors/invalid-option-error.js";
import type { RetryReflectObserver } from "../events/events.js";
import type { IdempotencyStore } from "../idempotency/idempotency-store.js";
import type { ToolEffect } from "../outcome.js";
import { compileReflectionTemplate, type ReflectionTemplate } from "../texts/templater.js";

/** A check of one option's value, named in full (`tools.pay.maxRetries`): what the plugin keeps, or an `InvalidOptionError`. */
export type Check<T> = (value: unknown, name: string) => T;

/** The check that keeps a value that passes `test`, and otherwise throws naming what was `expected`. */
export function is<T>(test: (value: unknown) => boolean, expected: string): Check<T> {
  return (value, name) => {
    if (!test(value)) throw new InvalidOptionError(name, value, expected);
    return value as T;
  };
}

export const integer = (min: number) => is<number>((value) => Number.isInteger(value) && (value as number) >= min, `an integer >= ${min}`);

export const finite = (min: number, exclusive = false) =>
  is<number>(
    (value) => Number.isFinite(value) && (exclusive ? (value as number) > min : (value as number) >= min),
    `a finite number ${exclusive ? ">" : ">="} ${min}`,
  );

export const fraction = is<number>((value) => typeof value === "number" && value > 0 && value <= 1, "a fraction in (0, 1]");
export const boolean = is<boolean>((value) => typeof value === "boolean", "a boolean");
export const fn = is<unknown>((value) => typeof value === "function", "a function");
export const nonEmptyString = is<string>((value) => typeof value === "string" && value !== "", "a non-empty string");

export const oneOf = <const T extends string>(allowed: readonly T[]) =>
  is<T>((value) => allowed.includes(value as T), `one of ${allowed.map((item) => `"${item}"`).join(", ")}`);

/** An options object: anything else, `null` and arrays included, is invalid. */
export const object = is<Record<string, unknown>>(isNonArrayObject, "an object");

const nameList = is<string[]>(
  (value) => Array.isArray(value) && value.every((item) => typeof item === "string" && item !== ""),
  "an array of non-empty tool names",
);
export const toolNames: Check<ReadonlySet<string>> = (value, name) => new Set(nameList(value, name));

/** An options object (undefined: none given) whose every key is one of `known`; `prefix` goes before a key in the error. */
export function optionsObject(value: unknown, name: string, known: readonly string[], prefix = `${name}.`): Record<string, unknown> {
  const input = value === undefined ? {} : object(value, name);
  for (const key of Object.keys(input)) {
    if (!known.includes(key))
      throw new InvalidOptionError(`${prefix}${key}`, input[key], `a known option (unknown option; valid ones: ${known.join(", ")})`);
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
  const copy = Object.create(null) as Record<string, ToolEffect>;
  for (const [tool, given] of Object.entries(object(value, name))) copy[tool] = effect(given, `${name}.${tool}`);
  return copy;
};

const positive = (value: unknown) => Number.isFinite(value) && (value as number) > 0;
const limits = is<number | readonly number[]>(
  (value) => (Array.isArray(value) ? value.length > 0 && value.every(positive) : value === 0 || positive(value)),
  "a finite number >= 0, or a non-empty array of finite numbers > 0",
);

/** `attemptTimeoutMs`: a limit (`0`: none), or a non-empty list of limits > 0, one per attempt of a failing row; copied. */
export const attemptLimits: Check<readonly number[]> = (value, name) => {
  const given = limits(value, name);
  return Object.freeze(given === 0 ? [] : Array.isArray(given) ? [...given] : [given]);
};

/** An object whose `methods` are functions; `expected` says what it should be. */
const withMethods = <T>(methods: readonly string[], expected: string) =>
  is<T>((value) => isObject(value) && methods.every((method) => typeof value[method] === "function"), expected);
const store = <T>(kind: string, methods: readonly string[]) => withMethods<T>(methods, `${kind} (${methods.join(", ")})`);

export const clock = withMethods<Clock>(["now", "sleep", "timer"], "an object with now(), sleep(ms, signal) and timer(ms, fire, watchdog)");
export const idempotencyStore = store<IdempotencyStore>("an IdempotencyStore", ["begin", "complete", "release"]);
const BREAKER_METHODS = ["isClosed", "peek", "state", "acquire", "record", "isolate", "reset"];
const breakerShape = store<CircuitBreakerStore>("a CircuitBreakerStore", BREAKER_METHODS);

/** A `circuitBreakerStore` with every method (and `shareBudget`, if any, a function). */
export const breakerStore: Check<CircuitBreakerStore> = (value, name) => {
  const share = breakerShape(value, name).shareBudget as unknown;
  if (share !== undefined && typeof share !== "function") {
    throw new InvalidOptionError(`${name}.shareBudget`, share, "a function, or undefined (each process keeps its own retry budget)");
  }
  return value as CircuitBreakerStore;
};

const HOOKS = ["onEvent", "onCallStart", "runInContext", "onCallEnd"];
const isObserver = (item: unknown) => isObject(item) && HOOKS.every((hook) => ["undefined", "function"].includes(typeof item[hook]));
const observerList = is<RetryReflectObserver[]>(
  (value) => Array.isArray(value) && value.every(isObserver),
  `an array of observer objects whose hooks (${HOOKS.join(", ")}) are functions`,
);

/** `observers`: objects whose hooks, where present, are functions; copied. */
export const observers: Check<readonly RetryReflectObserver[]> = (value, name) => [...observerList(value, name)];
