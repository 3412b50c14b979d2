import { hasBrand } from "./error-codes.js";
import type { ToolError } from "./tool-error.js";

const BRAND = Symbol.for("retry-reflect.RetriesExhaustedError");

/**
 * Thrown by `execute` when retries are exhausted and `onExhausted` is `"throw"`. Its `cause` is
 * the `RETRIES_EXHAUSTED` error, whose own `cause` is the last failure. Recognised across copies
 * of this package by a `Symbol.for` brand: use `RetriesExhaustedError.isInstance(value)`.
 */
export class RetriesExhaustedError extends Error {
  declare readonly toolName: string;
  declare readonly attempts: number;
  /** The `RETRIES_EXHAUSTED` error, structured. */
  declare readonly error: ToolError;
  declare private readonly [BRAND]: true;

  constructor(init: { toolName: string; attempts: number; error: ToolError }) {
    const { toolName, attempts, error } = init;
    super(`Tool '${toolName}' failed ${attempts} ${attempts === 1 ? "time" : "times"}: ${error.message}`, { cause: error });
    this.name = "RetriesExhaustedError";
    Object.assign(this, { toolName, attempts, error, [BRAND]: true });
  }

  /** True for a `RetriesExhaustedError` from any copy of this package. */
  static isInstance(value: unknown): value is RetriesExhaustedError {
    return hasBrand(value, BRAND);
  }
}
