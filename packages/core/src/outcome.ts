import type { ToolError } from "./errors/tool-error.js";

/** `"read"`: no side effect. `"idempotent"`: safe to repeat. `"write"`: must run at most once per key (the idempotency guard). */
export type ToolEffect = "read" | "idempotent" | "write";

/** A circuit's state. */
export type CircuitState = "closed" | "open" | "half-open";

/** Why a call ended `failed`. */
export type FailureReason = "not_recoverable" | "exhausted" | "circuit_open";

/** The tool ran (or its stored result was replayed) and returned a value. */
export interface SuccessOutcome<T> {
  readonly status: "success";
  readonly value: T;
  /** Attempt number in its scope (2 = succeeded on the first retry). */
  readonly attempt: number;
  /** True when the value came from the idempotency store without running the tool. */
  readonly replayed: boolean;
  /** True when the value is the policy's `fallback` for a call that failed (the failure was counted). */
  readonly fallback?: true;
}

/** The model should correct its arguments: give it `message` as the tool result. */
export interface ReflectOutcome {
  readonly status: "reflect";
  /** The rendered reflection prompt and the structured error as JSON. */
  readonly message: string;
  /** The rendered reflection prompt alone. */
  readonly prompt: string;
  readonly error: ToolError;
  readonly attempt: number;
}

/** Final: the model should stop using this tool for this task. */
export interface FailedOutcome {
  readonly status: "failed";
  /** The stop instruction and the structured error as JSON. */
  readonly message: string;
  readonly error: ToolError;
  readonly reason: FailureReason;
  readonly attempt: number;
}

export type ExecuteOutcome<T> = SuccessOutcome<T> | ReflectOutcome | FailedOutcome;
