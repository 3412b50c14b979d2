import { DEFAULT_OPTIONS } from "../config/defaults.js";
import { ErrorCodes } from "../errors/error-codes.js";
import { createToolError, type ToolError, unreadableErrorInit } from "../errors/tool-error.js";
import { UNSERIALIZABLE } from "../texts/model-texts.js";
import { Cleaner } from "./cleaner.js";
import { type Copying, copyValue } from "./copy-details.js";
import { capStrings } from "./fit-details.js";
import { defaultRedactor } from "./redactor.js";
import { cutText } from "./text-budget.js";

/** What an `error_code` may look like; anything else becomes `TOOL_FAILED` (bounded metric cardinality). */
export const ERROR_CODE_PATTERN = /^[A-Z][A-Z0-9_]{0,63}$/;

/**
 * A failure as the model, the logs and the spans may see it: each field read once (a getter or
 * proxy trap that throws, or a `message` that is not a string, makes it the unreadable failure:
 * `TOOL_FAILED`, not recoverable), message and suggested action cleaned, `details` copied (see
 * {@link cleanDetails}), a finite `retryAfterMs`, and an `error_code` matching
 * `ERROR_CODE_PATTERN` (else `TOOL_FAILED`). Always a new error of plain fields, so that nothing
 * downstream reads the tool's object again; the original stays reachable as `cause`.
 */
export function sanitizeError(cleaner: Cleaner, error: ToolError, key?: string): ToolError {
  let code: unknown;
  let message: unknown;
  let recoverable: unknown;
  let suggestedAction: unknown;
  let toolSuggestedAction: unknown;
  let retry: unknown;
  let kind: unknown;
  let cause: unknown;
  try {
    code = error.code;
    message = error.message;
    recoverable = error.recoverable;
    suggestedAction = error.suggestedAction;
    toolSuggestedAction = error.toolSuggestedAction;
    retry = error.retryAfterMs;
    kind = error.kind;
    cause = error.cause;
  } catch {
    return createToolError(unreadableErrorInit(error));
  }
  if (typeof message !== "string" || typeof recoverable !== "boolean") return createToolError(unreadableErrorInit(error));
  let details: unknown;
  try {
    details = error.details;
  } catch {
    details = { truncated: UNSERIALIZABLE };
  }
  const validCode = typeof code === "string" && ERROR_CODE_PATTERN.test(code) ? code : ErrorCodes.TOOL_FAILED;
  return createToolError({
    code: validCode,
    message: cleaner.clean(message, key),
    recoverable,
    suggestedAction: typeof suggestedAction === "string" ? cleaner.clean(suggestedAction, key) : "",
    toolSuggestedAction: typeof toolSuggestedAction === "string" ? cleaner.clean(toolSuggestedAction, key) : undefined,
    retryAfterMs: typeof retry === "number" && Number.isFinite(retry) && retry >= 0 ? retry : undefined,
    details: cleanDetails(cleaner, details, key),
    // A kind that is not one of the three is derived from the code again.
    kind: kind === "transient" || kind === "invalid_arguments" || kind === "other" ? kind : undefined,
    cause: cause ?? error,
  });
}

/** How {@link cleanToolError} cleans: as a plugin with these options does. */
export interface ToolErrorCleaning {
  /** Longest `message` and `suggested_action`, and longest string in `details`. @default 1000 */
  readonly maxErrorLength?: number;
  /** @default defaultRedactor */
  readonly redact?: (text: string) => string;
}

/**
 * A tool error as a plugin's sinks show it, for code that hands one on outside a plugin (an MCP
 * server's `structuredToolError`): `message` and `suggested_action` cleaned (control characters and
 * stack lines removed, secrets redacted, capped at `maxErrorLength`), `details` a plain copy
 * (depth cap 8, `"[unserializable]"` for what cannot be serialized: a cycle, a getter that throws,
 * too deep), redacted, its strings capped; an `error_code` that is not `ERROR_CODE_PATTERN`
 * becomes `TOOL_FAILED`; a field that cannot be read makes it the unreadable failure. Never throws.
 */
export function cleanToolError(error: ToolError, options: ToolErrorCleaning = {}): ToolError {
  const cleaner = new Cleaner(options.maxErrorLength ?? DEFAULT_OPTIONS.maxErrorLength, options.redact ?? defaultRedactor);
  return sanitizeError(cleaner, error);
}

/** A copy of an (already clean) error with some fields replaced; the original is its `cause`. */
export function withText(
  error: ToolError,
  parts: {
    code?: string;
    message?: string;
    recoverable?: boolean;
    suggestedAction?: string;
    toolSuggestedAction?: string | undefined;
    details?: Record<string, unknown> | undefined;
    retryAfterMs?: number | undefined;
  },
): ToolError {
  return createToolError({
    code: parts.code ?? error.code,
    message: parts.message ?? error.message,
    recoverable: parts.recoverable ?? error.recoverable,
    suggestedAction: parts.suggestedAction ?? error.suggestedAction,
    toolSuggestedAction: "toolSuggestedAction" in parts ? parts.toolSuggestedAction : error.toolSuggestedAction,
    retryAfterMs: "retryAfterMs" in parts ? parts.retryAfterMs : error.retryAfterMs,
    details: "details" in parts ? parts.details : error.details,
    kind: error.kind,
    cause: error.cause ?? error,
  });
}

/**
 * `details` as every sink may see them: a plain, JSON-safe copy (never the tool's object), at most
 * {@link MAX_DETAILS_DEPTH} levels deep, a cycle cut where it closes, redacted as one JSON text,
 * then each string cut to `maxErrorLength` characters (after redaction, on a string the redactor saw
 * 256 characters further: a cut never leaves the start of a secret it would have found whole).
 * What cannot be serialized (too deep, a cycle, a getter or proxy trap that throws) is
 * `"[unserializable]"`, member by member (`{ truncated: "[unserializable]" }` for the whole);
 * BigInts are strings; `toJSON` is honoured. Details too big to copy (past 4 × `maxErrorLength` +
 * 256 characters of JSON) become `{ truncated: "<the cleaned start of their JSON>… [truncated]" }`.
 */
export function cleanDetails(cleaner: Cleaner, details: unknown, key?: string): Record<string, unknown> | undefined {
  if (details === undefined) return undefined;
  const { maxErrorLength } = cleaner;
  const copying: Copying = {
    left: maxErrorLength * 4 + 256,
    stringLimit: maxErrorLength + 256,
    cut: false,
    longest: 0,
    path: [],
  };
  const copy = copyValue(details, 1, copying, false);
  if (copy === UNSERIALIZABLE) return { truncated: UNSERIALIZABLE };
  if (typeof copy !== "object" || copy === null || Array.isArray(copy)) return undefined; // not an object: dropped, as `fromJSON` does
  const json = JSON.stringify(copy);
  // Redacted (and the key masked) as one text; the copy is bounded already, so nothing is cut here.
  const cleaned = cleaner.cleanJson(json, key);
  let result: Record<string, unknown> | undefined;
  if (cleaned === json) result = copy as Record<string, unknown>;
  else {
    try {
      const parsed: unknown = JSON.parse(cleaned);
      if (typeof parsed === "object" && parsed !== null && !Array.isArray(parsed)) result = parsed as Record<string, unknown>;
    } catch {
      // The redactor left text that is not JSON: keep its cleaned text.
    }
  }
  if (result === undefined) return { truncated: cutText(cleaned, maxErrorLength * 4) };
  if (copying.longest > maxErrorLength) result = capStrings(result, maxErrorLength, 1) as Record<string, unknown>;
  // A copy that stopped at its window: the start of its JSON, as one text.
  return copying.cut ? { truncated: cutText(JSON.stringify(result), maxErrorLength * 4) } : result;
}
