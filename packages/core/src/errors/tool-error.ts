import { TOOL_CODE_FAULT_ACTION, UNREADABLE_ERROR_MESSAGE, UNSERIALIZABLE } from "../texts/model-texts.js";
import { type ErrorKind, hasBrand, isNonArrayObject } from "./error-codes.js";

const BRAND = Symbol.for("retry-reflect.ToolError");
/** Where `createToolError` keeps a cause: read through `cause` on the prototype, never enumerable. */
const CAUSE = Symbol("retry-reflect.cause");

/** The structured error a model sees, in its snake_case shape `{ error_code, message, recoverable, suggested_action }`. */
export interface ToolErrorJSON {
  error_code: string;
  message: string;
  recoverable: boolean;
  suggested_action: string;
  /** A tool's or a server's own suggestion, when the library's `suggested_action` for its decision differs (cleaned, capped). */
  tool_suggested_action?: string;
  retry_after_ms?: number;
  details?: Record<string, unknown>;
}

export interface ToolErrorInit {
  /** Machine-readable code the model can branch on (`error_code`). */
  code: string;
  /** Human-readable description. */
  message: string;
  /** May the agent try again (after changing something)? */
  recoverable: boolean;
  /** What the agent should do next. */
  suggestedAction?: string;
  /** Set by the library on the errors it shows: the tool's or server's own suggestion (untrusted text). */
  toolSuggestedAction?: string;
  /** Earliest useful retry, in milliseconds. */
  retryAfterMs?: number;
  /** Extra structured data shown to the model. Keep it small and free of secrets. */
  details?: Record<string, unknown>;
  /** How the engine treats it; derived from the code when omitted. */
  kind?: ErrorKind;
  /** The original error. Never shown to the model. */
  cause?: unknown;
}

function defaultKind(code: string): ErrorKind {
  if (code === "INVALID_ARGUMENTS") return "invalid_arguments";
  if (code === "TRANSIENT" || code === "RATE_LIMITED" || code === "TIMEOUT") return "transient";
  return "other";
}

/**
 * A structured tool error: `{ error_code, message, recoverable, suggested_action }`.
 * A tool may throw it or return it. Recognised across copies of this package by a
 * `Symbol.for` brand: use `ToolError.isInstance(value)`, not `instanceof`.
 */
export class ToolError extends Error {
  // Declared, not initialised: `fillToolError` sets them, for `new ToolError` and `createToolError` alike.
  declare readonly code: string;
  declare readonly recoverable: boolean;
  declare readonly suggestedAction: string;
  /** The tool's or server's own suggestion, when the library replaced it with its own action (untrusted text, cleaned). */
  declare readonly toolSuggestedAction: string | undefined;
  declare readonly retryAfterMs: number | undefined;
  declare readonly details: Record<string, unknown> | undefined;
  declare readonly kind: ErrorKind;
  declare private readonly [BRAND]: true;

  constructor(init: ToolErrorInit) {
    super(init.message, init.cause === undefined ? undefined : { cause: init.cause });
    fillToolError(this, init);
  }

  /** True for a `ToolError` from any copy of this package. */
  static isInstance(value: unknown): value is ToolError {
    return hasBrand(value, BRAND);
  }

  /**
   * Builds a `ToolError` from the plain error shape `{ error_code, message, recoverable, suggested_action }`.
   * The shape often comes from untyped JSON (a tool's or an MCP server's result): optional members of the
   * wrong type are dropped, so that `toJSON()` always has the documented types.
   */
  static fromJSON(json: ToolErrorJSON, cause?: unknown): ToolError {
    return new ToolError(toolErrorInitOf(json, cause));
  }

  /** The snake_case shape the model sees. */
  toJSON(): ToolErrorJSON {
    const json: ToolErrorJSON = {
      error_code: this.code,
      message: this.message,
      recoverable: this.recoverable,
      suggested_action: this.suggestedAction,
    };
    if (this.toolSuggestedAction !== undefined) json.tool_suggested_action = this.toolSuggestedAction;
    if (this.retryAfterMs !== undefined) json.retry_after_ms = this.retryAfterMs;
    if (this.details !== undefined) json.details = this.details;
    return json;
  }
}

/** True for a plain object in the structured error shape (what a tool may return instead of throwing). */
export function isToolErrorShape(value: unknown): value is ToolErrorJSON {
  if (typeof value !== "object" || value === null) return false;
  const candidate = value as Record<string, unknown>;
  try {
    return typeof candidate.error_code === "string" && typeof candidate.message === "string" && typeof candidate.recoverable === "boolean";
  } catch {
    return false; // a getter or proxy trap that throws
  }
}

/** The `ToolErrorInit` of the plain error shape (as `fromJSON`); one that cannot be read gives {@link unreadableErrorInit}. */
export function toolErrorInitOf(json: ToolErrorJSON, cause?: unknown): ToolErrorInit {
  return readToolErrorShape(json, cause) ?? unreadableErrorInit(cause);
}

/**
 * The plain error shape read once, member by member: its `ToolErrorInit`; undefined when it is not
 * the shape; {@link unreadableErrorInit} when a read throws or `message` is not a string (it may
 * have been when `isToolErrorShape` looked).
 */
export function readToolErrorShape(value: unknown, cause?: unknown): ToolErrorInit | undefined {
  if (typeof value !== "object" || value === null) return undefined;
  const bag = value as Record<string, unknown>;
  try {
    const code = bag.error_code;
    if (typeof code !== "string") return undefined;
    const recoverable = bag.recoverable;
    if (typeof recoverable !== "boolean") return undefined;
    const { message, suggested_action: action, retry_after_ms: retryAfterMs } = bag;
    if (typeof message !== "string") return unreadableErrorInit(cause);
    const details = readDetails(value);
    return {
      code,
      message,
      recoverable,
      suggestedAction: typeof action === "string" ? action : undefined,
      retryAfterMs: asDelay(retryAfterMs),
      details: isNonArrayObject(details) ? details : undefined,
      cause,
    };
  } catch {
    return unreadableErrorInit(cause);
  }
}

/** `value.details`; when reading it throws, `{ truncated: "[unserializable]" }`. */
export function readDetails(value: object): unknown {
  try {
    return (value as { details?: unknown }).details;
  } catch {
    return { truncated: UNSERIALIZABLE };
  }
}

/** A delay in milliseconds: a finite number, at least 0; anything else is undefined. */
export function asDelay(value: unknown): number | undefined {
  return typeof value === "number" && Number.isFinite(value) && value >= 0 ? value : undefined;
}

/** A failure that cannot be read (a getter or proxy trap that throws, a member that changes type): a fault of the tool. */
export function unreadableErrorInit(cause: unknown): ToolErrorInit {
  return {
    code: "TOOL_FAILED",
    message: UNREADABLE_ERROR_MESSAGE,
    recoverable: false,
    suggestedAction: TOOL_CODE_FAULT_ACTION,
    details: { fault: "tool_code" },
    kind: "other",
    cause,
  };
}

/**
 * A `ToolError` for the engine's own outcomes, built from the prototype without running `Error`'s
 * constructor: no stack trace is captured (these errors are data, never thrown by the engine). It
 * behaves as `new ToolError(init)` but for `stack`, undefined, and an enumerable own `message`.
 */
export function createToolError(init: ToolErrorInit): ToolError {
  const error = fillToolError(Object.create(ToolError.prototype) as ToolError, init);
  (error as { message: string }).message = init.message;
  if (init.cause !== undefined) (error as unknown as Record<symbol, unknown>)[CAUSE] = init.cause;
  return error;
}

// `new ToolError({ cause })` has `Error`'s own `cause`, which shadows this getter.
Object.defineProperty(ToolError.prototype, "cause", {
  get(this: Record<symbol, unknown>) {
    return this[CAUSE];
  },
  configurable: true,
});

/** Sets a `ToolError`'s own fields and brand. */
function fillToolError(target: ToolError, init: ToolErrorInit): ToolError {
  const error = target as { -readonly [K in keyof ToolError]: ToolError[K] };
  error.name = "ToolError";
  error.code = init.code;
  error.recoverable = init.recoverable;
  error.suggestedAction = init.suggestedAction ?? "";
  error.toolSuggestedAction = init.toolSuggestedAction;
  error.retryAfterMs = init.retryAfterMs;
  error.details = init.details;
  error.kind = init.kind ?? defaultKind(init.code);
  (target as unknown as Record<symbol, boolean>)[BRAND] = true;
  return target;
}

/** V8's `Error.stackTraceLimit` (this package is typed without Node's types). */
const V8Error = Error as ErrorConstructor & { stackTraceLimit?: unknown };

/**
 * V8's stack capture, paused around the construction of an error that is data (a result a tool
 * returned, not a place in code): its `stack` is its first line only. Synchronous:
 * `const limit = pauseStackTraces(); try { super(message); } finally { resumeStackTraces(limit); }`.
 * Where `Error.stackTraceLimit` is not a number (not V8) or cannot be set, nothing is paused.
 */
export function pauseStackTraces(): number | undefined {
  try {
    const limit = V8Error.stackTraceLimit;
    if (typeof limit !== "number" || limit === 0) return undefined;
    V8Error.stackTraceLimit = 0;
    return V8Error.stackTraceLimit === 0 ? limit : undefined;
  } catch {
    return undefined; // a frozen `Error` (a hardened realm), or an accessor that throws: stacks stay on
  }
}

/** Restores what `pauseStackTraces` paused. Never throws. */
export function resumeStackTraces(limit: number | undefined): void {
  if (limit === undefined) return;
  try {
    V8Error.stackTraceLimit = limit;
  } catch {
    // It could be set a moment ago: nothing else is left to do.
  }
}
