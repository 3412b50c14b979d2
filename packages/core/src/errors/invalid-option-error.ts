import { hasBrand } from "./error-codes.js";

const BRAND = Symbol.for("retry-reflect.InvalidOptionError");

/**
 * Thrown by `build()` / `create()` for an invalid option; names the option and the value.
 * Recognised across copies of this package (each CommonJS entry point, `@retry-reflect/core` and
 * `@retry-reflect/core/testing`, bundles its own): `instanceof` and `InvalidOptionError.isInstance`
 * read a `Symbol.for` brand.
 */
export class InvalidOptionError extends TypeError {
  declare readonly option: string;
  declare readonly value: unknown;
  declare private readonly [BRAND]: true;

  constructor(option: string, value: unknown, expected: string) {
    super(`Invalid option \`${option}\`: expected ${expected}, received ${describe(value)}`);
    this.name = "InvalidOptionError";
    Object.assign(this, { option, value, [BRAND]: true });
  }

  /** True for an `InvalidOptionError` from any copy of this package. */
  static isInstance(value: unknown): value is InvalidOptionError {
    return hasBrand(value, BRAND);
  }

  static override [Symbol.hasInstance](value: unknown): boolean {
    return InvalidOptionError.isInstance(value);
  }
}

function describe(value: unknown): string {
  if (typeof value === "string") return JSON.stringify(value);
  if (typeof value === "number" || typeof value === "boolean" || value === undefined || value === null) return String(value);
  if (typeof value === "function") return "a function";
  if (Array.isArray(value)) return "an array";
  return typeof value;
}
