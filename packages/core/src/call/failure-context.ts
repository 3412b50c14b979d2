import type { FailureContext } from "../config/options.js";
import type { CallRun } from "./call-state.js";

/** What `isFailure` (and `shouldRetry`) see of the call. */
export function failureContext(run: CallRun): FailureContext {
  return { toolName: run.toolName, args: run.call.args, attempt: run.attempt, scope: run.scope };
}
