import { safeJson } from "../cleaning/safe-json.js";
import type { ToolError, ToolErrorJSON } from "../errors/tool-error.js";

// The structured error as the model reads it in every `reflect`/`failed` message, after the text:
// `{"error_code","message","recoverable","suggested_action","tool_suggested_action"?,"attempt","max_retries","retry_after_ms"?,"details"?}`.

/** What the structured error JSON in every `reflect`/`failed` message holds. */
export interface StructuredErrorJSON extends ToolErrorJSON {
  attempt: number;
  max_retries: number;
}

/** The structured error as the model sees it, with the attempt counters. */
export function structuredErrorJson(error: ToolError, attempt: number, maxRetries: number): string {
  return structuredJsonOf(
    error,
    JSON.stringify(error.message),
    JSON.stringify(error.suggestedAction),
    detailsJson(error.details),
    attempt,
    maxRetries,
    error.toolSuggestedAction === undefined ? undefined : JSON.stringify(error.toolSuggestedAction),
  );
}

/**
 * The structured error JSON from its parts, the texts already quoted (the outcome builder has them):
 * `{"error_code","message","recoverable","suggested_action","tool_suggested_action"?,"attempt","max_retries","retry_after_ms"?,"details"?}`,
 * byte for byte what `JSON.stringify` writes of {@link StructuredErrorJSON}.
 */
export function structuredJsonOf(
  error: ToolError,
  quotedMessage: string,
  quotedAction: string,
  details: string | undefined,
  attempt: number,
  maxRetries: number,
  quotedToolAction?: string,
): string {
  let json = `{"error_code":${JSON.stringify(error.code)},"message":${quotedMessage},"recoverable":${error.recoverable === true},"suggested_action":${quotedAction}`;
  if (quotedToolAction !== undefined) json += `,"tool_suggested_action":${quotedToolAction}`;
  json += `,"attempt":${attempt},"max_retries":${maxRetries}`;
  if (error.retryAfterMs !== undefined) json += `,"retry_after_ms":${JSON.stringify(error.retryAfterMs)}`;
  if (details !== undefined) json += `,"details":${details}`;
  return `${json}}`;
}

/** `details` as JSON (a clean error's are a plain copy; anything else still gives a valid document). */
export function detailsJson(details: Record<string, unknown> | undefined): string | undefined {
  if (details === undefined) return undefined;
  try {
    return JSON.stringify(details) ?? "{}";
  } catch {
    return safeJson(details); // BigInt or circular details: still a valid document
  }
}
