import { InvalidOptionError } from "../errors/invalid-option-error.js";

// One set of option checks. Each takes the value and the option's full name (`tools.pay.maxRetries`)
// and returns the value, or throws `InvalidOptionError` naming the option and the value.

/** A check of one option's value. */
export type Check<T> = (value: unknown, name: string) => T;

/** `value`, checked, or `fallback` when it is undefined (an explicit `null` is an invalid value, not "the default"). */
export function optional<T>(value: unknown, name: string, check: Check<T>, fallback: T): T {
  return value === undefined ? fallback : check(value, name);
}

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

export function oneOf<T extends string>(allowed: readonly T[]): Check<T> {
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

/** An options object (or undefined): anything else, `null` and arrays included, is invalid. */
export function plainObject(value: unknown, name: string): Record<string, unknown> | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== "object" || value === null || Array.isArray(value)) throw new InvalidOptionError(name, value, "an object");
  return value as Record<string, unknown>;
}

/** Every key of `input` is one of `known`; `prefix` goes before the key in the error (`idempotency.`). */
export function knownKeys(prefix: string, input: Record<string, unknown>, known: ReadonlySet<string>): void {
  for (const key of Object.keys(input)) {
    if (!known.has(key))
      throw new InvalidOptionError(`${prefix}${key}`, input[key], `a known option (unknown option; valid ones: ${[...known].join(", ")})`);
  }
}

const OBSERVER_HOOKS = ["onEvent", "onCallStart", "runInContext", "onCallEnd"] as const;

/** An observer: an object whose hooks, where present, are functions. */
export function isObserver(value: unknown): boolean {
  if (typeof value !== "object" || value === null) return false;
  return OBSERVER_HOOKS.every((hook) => {
    const member = (value as Record<string, unknown>)[hook];
    return member === undefined || typeof member === "function";
  });
}
