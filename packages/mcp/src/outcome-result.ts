import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import type { FailedOutcome, ReflectOutcome } from "@retry-reflect/core";
import { isRecord } from "@retry-reflect/core/adapter/options";
import { isToolErrorShape } from "@retry-reflect/core/primitives";

/** The `_meta` key under which a reflect/failed result says which outcome it was. */
export const OUTCOME_META_KEY = "retry-reflect/outcome";

/**
 * The `_meta` key under which a reflect/failed result keeps the `structuredContent` of the server's
 * failed result (the result's own `structuredContent` is the structured error).
 */
export const SERVER_STRUCTURED_CONTENT_META_KEY = "retry-reflect/server-structured-content";

type ContentBlock = CallToolResult["content"][number];

/**
 * The `CallToolResult` a `reflect` or `failed` outcome becomes: `isError: true`, the outcome's
 * message (the reflection prompt or the stop instruction, with the structured error as JSON) as
 * its first text block, the structured error (`{ error_code, message, recoverable,
 * suggested_action, retry_after_ms? }`) as `structuredContent`, and `_meta["retry-reflect/outcome"]`
 * (`{ status, attempt, reason? }`) saying which outcome it was.
 *
 * With `serverResult`, the result the server returned for the failure (the call's last attempt),
 * what it carried beside its error text is kept for the caller: its content blocks other than text
 * (images, audio, resources, resource links) after the message, in order; its `_meta` members
 * (the outcome key stays the adapter's); its `structuredContent` under
 * `_meta["retry-reflect/server-structured-content"]`, unless it is in the structured error shape
 * (then it is the error itself, cleaned, as `structuredContent`: its raw `details` are never handed
 * on). Its text blocks are not repeated: they are the error text the message quotes (cleaned,
 * redacted and bounded). A `serverResult` that is not an object, or whose members cannot be read,
 * adds nothing.
 */
export function outcomeResult(outcome: ReflectOutcome | FailedOutcome, serverResult?: unknown): CallToolResult {
  const outcomeMeta = {
    status: outcome.status,
    attempt: outcome.attempt,
    ...(outcome.status === "failed" ? { reason: outcome.reason } : {}),
  };
  const result: CallToolResult = {
    content: [{ type: "text", text: outcome.message }],
    structuredContent: outcome.error.toJSON() as unknown as Record<string, unknown>,
    isError: true,
    _meta: { [OUTCOME_META_KEY]: outcomeMeta },
  };
  if (!isRecord(serverResult)) return result;
  try {
    const { content, structuredContent, _meta } = serverResult;
    const kept = Array.isArray(content) ? content.filter((block) => isRecord(block) && block.type !== "text") : [];
    const meta: Record<string, unknown> = isRecord(_meta) && !Array.isArray(_meta) ? { ..._meta } : {};
    delete meta[SERVER_STRUCTURED_CONTENT_META_KEY];
    // A structured error is what the failure was read from: it is `structuredContent`, cleaned, never handed on raw.
    if (structuredContent !== undefined && !isToolErrorShape(structuredContent))
      meta[SERVER_STRUCTURED_CONTENT_META_KEY] = structuredContent;
    meta[OUTCOME_META_KEY] = outcomeMeta;
    result.content.push(...(kept as ContentBlock[]));
    result._meta = meta;
  } catch {
    // A member that throws when read (a hostile client's result): the outcome alone.
  }
  return result;
}
