import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import type { FailedOutcome, ReflectOutcome } from "@retry-reflect/core";

/** The `_meta` key under which a reflect/failed result says which outcome it was. */
export const OUTCOME_META_KEY = "retry-reflect/outcome";

/**
 * The `CallToolResult` a `reflect` or `failed` outcome becomes: `isError: true`, the outcome's
 * message (the reflection prompt or the stop instruction, with the structured error as JSON) as
 * its one text block, the structured error (`{ error_code, message, recoverable, suggested_action,
 * retry_after_ms? }`) as `structuredContent`, and `_meta["retry-reflect/outcome"]`
 * (`{ status, attempt, reason? }`) saying which outcome it was.
 */
export function outcomeResult(outcome: ReflectOutcome | FailedOutcome): CallToolResult {
  return {
    content: [{ type: "text", text: outcome.message }],
    structuredContent: outcome.error.toJSON() as unknown as Record<string, unknown>,
    isError: true,
    _meta: {
      [OUTCOME_META_KEY]: {
        status: outcome.status,
        attempt: outcome.attempt,
        ...(outcome.status === "failed" ? { reason: outcome.reason } : {}),
      },
    },
  };
}
