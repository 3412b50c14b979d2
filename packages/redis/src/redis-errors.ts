// The two errors of the client layer, and how they are recognised across copies of this package
// (the brand check is core's: `hasBrand` of `@retry-reflect/core/primitives`).

import { hasBrand } from "@retry-reflect/core/primitives";

const TIMEOUT_BRAND = Symbol.for("retry-reflect.RedisTimeoutError");
const UNAVAILABLE_BRAND = Symbol.for("retry-reflect.RedisUnavailableError");

/**
 * Redis did not answer in time. The command was handed to the client, so it may still run on the
 * server (or already have run): its outcome is unknown. Recognised across copies of this package
 * with `RedisTimeoutError.isInstance(value)`.
 */
export class RedisTimeoutError extends Error {
  /** The command that got no reply: `EVALSHA`, `EVAL`, `PUBLISH`, `SUBSCRIBE`, `CONFIG GET`. */
  readonly command: string;
  /** The limit, in milliseconds. */
  readonly timeoutMs: number;
  declare private readonly [TIMEOUT_BRAND]: true;

  constructor(command: string, timeoutMs: number, options?: { cause?: unknown; message?: string }) {
    super(options?.message ?? `Redis ${command} got no reply within ${timeoutMs} ms`, { cause: options?.cause });
    this.name = "RedisTimeoutError";
    this.command = command;
    this.timeoutMs = timeoutMs;
    (this as unknown as Record<symbol, boolean>)[TIMEOUT_BRAND] = true;
  }

  /** True for a `RedisTimeoutError` from any copy of this package. */
  static isInstance(value: unknown): value is RedisTimeoutError {
    return hasBrand(value, TIMEOUT_BRAND);
  }
}

/**
 * Redis cannot be reached: the client is not connected/ready (then the command was never sent), or
 * its connection failed while the command was in flight. `sent` says which. Recognised across copies
 * of this package with `RedisUnavailableError.isInstance(value)`.
 */
export class RedisUnavailableError extends Error {
  /** The command that could not be run. */
  readonly command: string;
  /**
   * `false`: the command certainly never reached Redis (it did not run). `true`: it was handed to
   * the client before the failure, so it may have run; its outcome is unknown.
   */
  readonly sent: boolean;
  declare private readonly [UNAVAILABLE_BRAND]: true;

  constructor(command: string, reason: string, options?: { sent?: boolean; cause?: unknown }) {
    super(`Redis ${command} failed: ${reason}`, { cause: options?.cause });
    this.name = "RedisUnavailableError";
    this.command = command;
    this.sent = options?.sent ?? false;
    (this as unknown as Record<symbol, boolean>)[UNAVAILABLE_BRAND] = true;
  }

  /** True for a `RedisUnavailableError` from any copy of this package. */
  static isInstance(value: unknown): value is RedisUnavailableError {
    return hasBrand(value, UNAVAILABLE_BRAND);
  }
}
