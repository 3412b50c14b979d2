import { pauseStackTraces, resumeStackTraces, type ToolError, type ToolErrorJSON } from "../errors/tool-error.js";
import type { FailedOutcome, FailureReason, ReflectOutcome } from "../outcome.js";
import type { HostOutcome, HostToolCall } from "./host-call.js";

const BRAND = Symbol.for("retry-reflect.RetryReflectToolError");

/**
 * What a wrapped tool throws for a `reflect` or `failed` outcome in a host that shows the model a
 * thrown error's text: the AI SDK (a `tool-error` part's `error-text` is `error.message` in AI SDK
 * 6, `error.toString()` in AI SDK 7, which this class makes the bare message) and the OpenAI Agents
 * SDK (the tool's `errorFunction`). The model reads the outcome's message; the structured error is
 * also here as data (`structuredError`), for code that reads the run's steps or items.
 *
 * Recognised across copies of the packages by a `Symbol.for` brand: use `isInstance`, not `instanceof`.
 */
export class RetryReflectToolError extends Error {
  static {
    // On the prototype, so that the stack's first line names the class too.
    RetryReflectToolError.prototype.name = "RetryReflectToolError";
  }

  /** `reflect`: the model should correct its arguments; `failed`: it should stop using the tool. */
  readonly status: "reflect" | "failed";
  /** Why a `failed` outcome stopped (`not_recoverable`, `exhausted`, `circuit_open`, ...); undefined for `reflect`. */
  readonly reason: FailureReason | undefined;
  /** The attempt number of this call in its scope. */
  readonly attempt: number;
  readonly toolName: string;
  readonly toolCallId: string | undefined;
  /** The classified failure. */
  readonly toolError: ToolError;
  /** `toolError.toJSON()`: `{ error_code, message, recoverable, suggested_action, retry_after_ms?, details? }`. */
  readonly structuredError: ToolErrorJSON;
  /** The plugin's outcome, as `plugin.execute` returned it. */
  readonly outcome: ReflectOutcome | FailedOutcome;

  /**
   * The carrier of an outcome's text, not a place in code: no stack trace is captured, so its
   * `stack` is its first line only; where it failed is in `cause` (the classified `ToolError`,
   * whose own cause is what the tool threw).
   */
  constructor(outcome: ReflectOutcome | FailedOutcome, toolName: string, toolCallId: string | undefined) {
    const limit = pauseStackTraces();
    try {
      super(outcome.message, { cause: outcome.error });
    } finally {
      resumeStackTraces(limit);
    }
    this.status = outcome.status;
    this.reason = outcome.status === "failed" ? outcome.reason : undefined;
    this.attempt = outcome.attempt;
    this.toolName = toolName;
    this.toolCallId = toolCallId;
    this.toolError = outcome.error;
    this.structuredError = outcome.error.toJSON();
    this.outcome = outcome;
    Object.defineProperty(this, BRAND, { value: true });
  }

  /** Is `value` a `RetryReflectToolError` (of any copy of this package)? */
  static isInstance(value: unknown): value is RetryReflectToolError {
    return typeof value === "object" && value !== null && (value as { [BRAND]?: unknown })[BRAND] === true;
  }

  /** The message alone, with no `RetryReflectToolError:` prefix: a host may show the model `error.toString()` (AI SDK 7). */
  override toString(): string {
    return this.message;
  }

  /** What `JSON.stringify` shows of it (a logged step, a serialized `tool-error` part). */
  toJSON(): { name: string; message: string; status: "reflect" | "failed"; reason?: FailureReason; attempt: number; error: ToolErrorJSON } {
    return {
      name: this.name,
      message: this.message,
      status: this.status,
      ...(this.reason === undefined ? {} : { reason: this.reason }),
      attempt: this.attempt,
      error: this.structuredError,
    };
  }
}

/**
 * The `present` of `runToolCall` for a host that shows the model a thrown error's text (the AI SDK,
 * the OpenAI Agents SDK, Mastra): the tool's own output on success (a replay included) and for a
 * tool the plugin does not handle; for `reflect` / `failed`, a thrown `RetryReflectToolError`.
 */
export function valueOrToolError(outcome: HostOutcome<unknown>, call: HostToolCall<unknown>): unknown {
  if (outcome.status === "success" || outcome.status === "passthrough") return outcome.value;
  throw new RetryReflectToolError(outcome, call.toolName, call.callId);
}
