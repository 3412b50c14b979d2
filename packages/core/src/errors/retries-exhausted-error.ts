import { ToolError } from "./tool-error.js";

/** Thrown by `execute` when retries are exhausted and `onExhausted` is `"throw"`. */
export class RetriesExhaustedError extends Error {
  readonly toolName: string;
  readonly attempts: number;
  /** The last failure, structured. */
  readonly error: ToolError;

  constructor(init: { toolName: string; attempts: number; error: ToolError }) {
    super(`Tool '${init.toolName}' failed ${init.attempts} times: ${init.error.message}`, { cause: init.error });
    this.name = "RetriesExhaustedError";
    this.toolName = init.toolName;
    this.attempts = init.attempts;
    this.error = init.error;
  }
}
