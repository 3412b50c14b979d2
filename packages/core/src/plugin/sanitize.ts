import { ErrorCodes } from "../errors/error-codes.js";
import { createToolError, type ToolError } from "../errors/tool-error.js";
import { cleanErrorText, safeJson } from "../reflection/clean-error-text.js";

/** What an `error_code` may look like; anything else becomes `TOOL_FAILED` (bounded metric cardinality). */
export const ERROR_CODE_PATTERN = /^[A-Z][A-Z0-9_]{0,63}$/;

const KEY_MASK = "[REDACTED]";
/** Keys shorter than this are masked only where they stand alone (a key "42" is not cut out of "HTTP 420"). */
const SHORT_KEY = 4;

/** How untrusted text is cleaned: the plugin's `maxErrorLength` and `redact`. */
export interface CleaningOptions {
  readonly maxErrorLength: number;
  readonly redact: (text: string) => string;
}

const MEMO_SIZE = 256;
const MEMO_MAX_TEXT = 4096;

/**
 * The plugin's cleaner: `cleanText` with a small memo of recent texts. A failing tool repeats the
 * same message, and cleaning (stack lines, ten redaction rules, the cap) is most of a failure's
 * cost; the memo holds short texts only, without a key to mask, and assumes `redact` is a pure
 * function of its text (as documented).
 */
export class Cleaner implements CleaningOptions {
  private readonly memo = new Map<string, string>();

  constructor(
    readonly maxErrorLength: number,
    readonly redact: (text: string) => string,
  ) {}

  clean(text: string, key?: string): string {
    if (text.length > MEMO_MAX_TEXT || (key !== undefined && text.includes(key))) return cleanText(this, text, key);
    let cleaned = this.memo.get(text);
    if (cleaned === undefined) {
      cleaned = cleanText(this, text);
      if (this.memo.size >= MEMO_SIZE) this.memo.clear(); // a burst of distinct texts: start again, bounded
      this.memo.set(text, cleaned);
    }
    return cleaned;
  }
}

/**
 * Untrusted text as every sink may see it: no stack lines, redacted, capped at `maxLength`, and
 * the call's idempotency key masked wherever it appears.
 */
export function cleanText(options: CleaningOptions, text: string, key?: string, maxLength = options.maxErrorLength): string {
  let source = text;
  if (key !== undefined && source.includes(key)) {
    // Masked before cleaning, on a prefix a little longer than the cleaner reads (linear work).
    const window = maxLength * 4 + 256 + key.length + 1;
    source = maskKey(source.length > window ? source.slice(0, window) : source, key);
  }
  return cleanErrorText(source, { maxLength, redact: options.redact });
}

/**
 * A failure as the model, the logs and the spans may see it: message, suggested action and
 * `details` cleaned (details capped at 4 × `maxErrorLength` as JSON, else `{ truncated }`), a
 * finite `retryAfterMs`, and an `error_code` matching `ERROR_CODE_PATTERN` (else `TOOL_FAILED`).
 * The original stays reachable as `cause`.
 */
export function sanitizeError(cleaner: Cleaner, error: ToolError, key?: string): ToolError {
  const message = cleaner.clean(error.message, key);
  const suggestedAction = cleaner.clean(error.suggestedAction, key);
  const details = cleanDetails(cleaner, error.details, key);
  const code = ERROR_CODE_PATTERN.test(error.code) ? error.code : ErrorCodes.TOOL_FAILED;
  const retry = error.retryAfterMs;
  const retryAfterMs = typeof retry === "number" && Number.isFinite(retry) && retry >= 0 ? retry : undefined;
  if (
    code === error.code &&
    message === error.message &&
    suggestedAction === error.suggestedAction &&
    details === error.details &&
    retryAfterMs === retry
  ) {
    return error;
  }
  return withText(error, { code, message, suggestedAction, details, retryAfterMs });
}

/** A copy of an (already clean) error with some fields replaced; the original is its `cause`. */
export function withText(
  error: ToolError,
  parts: {
    code?: string;
    message?: string;
    recoverable?: boolean;
    suggestedAction?: string;
    details?: Record<string, unknown> | undefined;
    retryAfterMs?: number | undefined;
  },
): ToolError {
  return createToolError({
    code: parts.code ?? error.code,
    message: parts.message ?? error.message,
    recoverable: parts.recoverable ?? error.recoverable,
    suggestedAction: parts.suggestedAction ?? error.suggestedAction,
    retryAfterMs: "retryAfterMs" in parts ? parts.retryAfterMs : error.retryAfterMs,
    details: "details" in parts ? parts.details : error.details,
    kind: error.kind,
    cause: error.cause ?? error,
  });
}

/** `details` cleaned as one JSON text; replaced by `{ truncated: "<the cleaned start>… [truncated]" }` when too long. */
function cleanDetails(
  options: CleaningOptions,
  details: Record<string, unknown> | undefined,
  key: string | undefined,
): Record<string, unknown> | undefined {
  if (details === undefined) return undefined;
  const maxLength = options.maxErrorLength * 4;
  const json = safeJson(details);
  const cleaned = cleanText(options, json, key, maxLength);
  if (cleaned === json) return details;
  if (json.length <= maxLength) {
    try {
      const parsed: unknown = JSON.parse(cleaned);
      if (typeof parsed === "object" && parsed !== null && !Array.isArray(parsed)) return parsed as Record<string, unknown>;
    } catch {
      // The redactor left text that is not JSON: keep its cleaned text.
    }
  }
  return { truncated: cleaned };
}

/** Replaces the key wherever it appears (a short key only where it stands alone). */
function maskKey(text: string, key: string): string {
  if (key.length >= SHORT_KEY) return text.split(key).join(KEY_MASK);
  const escaped = key.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  return text.replace(new RegExp(`(?<![A-Za-z0-9_-])${escaped}(?![A-Za-z0-9_-])`, "g"), KEY_MASK);
}
