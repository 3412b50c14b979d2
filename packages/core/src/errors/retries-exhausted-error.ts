import { hasBrand } from "./error-codes.js";
import type { ToolError } from "./tool-error.js";

const BRAND = Symbol.for("retry-reflect.RetriesExhaustedError");

/**
 * Thrown by `execute` when retries are exhausted and `onExhausted` is `"throw"`. Its `cause` is
 * the `RETRIES_EXHAUSTED` error, whose own `cause` is the last failure. Recognised across copies
 * of this package by a `Symbol.for` brand: use `RetriesExhaustedError.isInstance(value)`.
 */
export class RetriesExhaustedError extends Error {
  readonly toolName: string;
  readonly attempts: number;
  /** The `RETRIES_EXHAUSTED` error, structured. */
  readonly error: ToolError;
  declare private readonly [BRAND]: true;

  constructor(init: { toolName: string; attempts: number; error: ToolError }) {
    super(`Tool '${init.toolName}' failed ${init.attempts} ${init.attempts === 1 ? "time" : "times"}: ${init.error.message}`, {
      cause: init.error,
    });
    this.name = "RetriesExhaustedError";
    this.toolName = init.toolName;
    this.attempts = init.attempts;
    this.error = init.error;
    (this as unknown as Record<symbol, boolean>)[BRAND] = true;
  }

  /** True for a `RetriesExhaustedError` from any copy of this package. */
  static isInstance(value: unknown): value is RetriesExhaustedError {
    return hasBrand(value, BRAND);
  }
}
