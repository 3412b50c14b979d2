import { classifyError, isReturnedFailure } from "../classify/classify-error.js";
import type { FailureContext } from "../config/options.js";
import type { ResolvedPolicy } from "../config/policy.js";
import { ToolError } from "../errors/tool-error.js";

/**
 * Failure detection for a returned value: the built-in shapes (a `ToolError`, the structured error
 * shape, MCP `isError`), then the policy's `isFailure` (which can only add failures). The failure
 * to classify, or undefined for a success. Costs nothing more for a tool without `isFailure`.
 */
export function returnedFailure(policy: ResolvedPolicy, value: unknown, context: () => FailureContext): unknown {
  if (isReturnedFailure(value)) return value;
  const isFailure = policy.isFailure;
  if (isFailure === undefined) return undefined;
  let verdict: boolean | ToolError | undefined;
  try {
    verdict = isFailure(value, context());
  } catch {
    // A throwing hook adds nothing: the value is judged by the built-in shapes alone (a success
    // here). Never a crash, and never a failure the tool did not report.
    return undefined;
  }
  // `true`: the value itself is the failure, classified as a thrown one would be (the policy's
  // `classifyError`, then the built-in rules: a returned `{ status: 503 }` is transient). Undefined
  // would read as a success: it is classified here.
  if (verdict === true) return value === undefined ? classifyError(value) : value;
  return ToolError.isInstance(verdict) ? verdict : undefined;
}
