import { isReturnedFailure } from "../classify/classify-error.js";
import { ErrorCodes } from "../errors/error-codes.js";
import { createToolError, ToolError } from "../errors/tool-error.js";
import { errorMessageOf } from "../reflection/clean-error-text.js";
import type { FailureContext } from "./options.js";
import type { ResolvedPolicy } from "./policy.js";

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
    return undefined; // a throwing hook adds nothing
  }
  if (verdict === true) {
    return createToolError({ code: ErrorCodes.TOOL_FAILED, message: errorMessageOf(value), recoverable: true, cause: value });
  }
  return ToolError.isInstance(verdict) ? verdict : undefined;
}
