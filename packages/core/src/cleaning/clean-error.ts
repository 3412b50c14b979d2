import { DEFAULT_OPTIONS } from "../config/option-table.js";
import { ErrorCodes } from "../errors/error-codes.js";
import { createToolError, type ToolError, type ToolErrorInit, unreadableErrorInit } from "../errors/tool-error.js";
import { UNSERIALIZABLE } from "../texts/model-texts.js";
import { Cleaner, defaultRedactor, removeControlCharacters } from "./clean-text.js";
import { capStrings, cutText, MAX_DETAILS_DEPTH, TRUNCATION_MARK } from "./text-budget.js";

/** What an `error_code` may look like; anything else becomes `TOOL_FAILED` (bounded metric cardinality). */
const ERROR_CODE_PATTERN = /^[A-Z][A-Z0-9_]{0,63}$/;

/**
 * A failure as the model, the logs and the spans may see it, each field read once (one that throws
 * makes it the unreadable failure): texts cleaned, `details` copied ({@link cleanDetails}), a valid
 * `error_code`. A new error of plain fields: nothing downstream reads the tool's object again.
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
export function withText(error: ToolError, parts: Partial<Omit<ToolErrorInit, "kind" | "cause">>): ToolError {
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
 * `details` as every sink may see them: a plain, JSON-safe copy, at most {@link MAX_DETAILS_DEPTH}
 * levels deep, redacted as one JSON text, then each string cut to `maxErrorLength` (after redaction,
 * on a string the redactor saw 256 characters further: a cut never leaves the start of a secret).
 * What cannot be serialized (too deep, a cycle, a getter that throws) is `"[unserializable]"`.
 * Details past 4 × `maxErrorLength` + 256 characters of JSON become `{ truncated: "<their start>… [truncated]" }`.
 */
function cleanDetails(cleaner: Cleaner, details: unknown, key?: string): Record<string, unknown> | undefined {
  if (details === undefined) return undefined;
  const { maxErrorLength } = cleaner;
  const copying: Copying = { left: maxErrorLength * 4 + 256, stringLimit: maxErrorLength + 256, cut: false, longest: 0, path: [] };
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

/** One copy: characters of JSON left, the longest string kept, whether it stopped, its longest string, the objects above. */
interface Copying {
  left: number;
  readonly stringLimit: number;
  cut: boolean;
  longest: number;
  readonly path: object[];
}

/**
 * A JSON-safe copy of one value (JSON's rules for `undefined`, functions, symbols, non-finite numbers),
 * or `"[unserializable]"`. Stops (marking `cut`) once past its window: a huge value costs no more.
 */
function copyValue(value: unknown, depth: number, copying: Copying, viaToJSON: boolean): unknown {
  switch (typeof value) {
    case "string": {
      // A long string is kept a little past `maxErrorLength` (it is cut to it after redaction).
      // Control characters go before anything is measured: JSON would only escape them (`\u0000`), and the text sinks never see them raw.
      let text = removeControlCharacters(value.length > copying.stringLimit ? value.slice(0, copying.stringLimit) : value);
      if (text.length > copying.left) {
        // Past the window: not a part of it (a part could be the start of a secret the redactor cannot tell).
        copying.cut = true;
        text = TRUNCATION_MARK;
      }
      if (text.length > copying.longest) copying.longest = text.length;
      copying.left -= text.length + 2;
      return text;
    }
    case "number":
      copying.left -= 8;
      return Number.isFinite(value) ? value : null;
    case "boolean":
      copying.left -= 5;
      return value;
    case "bigint":
      return copyValue(value.toString(), depth, copying, false);
    case "object":
      if (value === null) {
        copying.left -= 4;
        return null;
      }
      break;
    default:
      return undefined;
  }
  if (depth > MAX_DETAILS_DEPTH) return unserializable(copying);
  if (!viaToJSON) {
    let toJSON: unknown;
    try {
      toJSON = (value as { toJSON?: unknown }).toJSON;
      // As JSON.stringify: once per value (a `toJSON` returning an object with its own is not called again).
      if (typeof toJSON === "function") return copyValue(toJSON.call(value), depth, copying, true);
    } catch {
      return unserializable(copying);
    }
  }
  // A cycle: an object that holds itself, cut where it closes.
  if (copying.path.includes(value)) return unserializable(copying);
  copying.path.push(value);
  try {
    copying.left -= 2;
    if (Array.isArray(value)) {
      const out: unknown[] = [];
      const length = value.length;
      for (let index = 0; index < length; index++) {
        if (copying.left <= 0) {
          copying.cut = true;
          break;
        }
        const copied = copyValue(readMember(value, index), depth + 1, copying, false);
        out.push(copied === undefined ? null : copied);
        copying.left -= 1;
      }
      return out;
    }
    const out: Record<string, unknown> = {};
    for (const name of Object.keys(value)) {
      if (copying.left <= name.length) {
        copying.cut = true;
        break;
      }
      const copied = copyValue(readMember(value, name), depth + 1, copying, false);
      if (copied === undefined) continue;
      copying.left -= name.length + 4;
      const member = removeControlCharacters(name);
      // `__proto__` as a plain member (an assignment would set the copy's prototype).
      if (member === "__proto__")
        Object.defineProperty(out, member, { value: copied, enumerable: true, writable: true, configurable: true });
      else out[member] = copied;
    }
    return out;
  } catch {
    // `Object.keys` or `Array.isArray` threw (a proxy, a revoked proxy): the value as a whole.
    return unserializable(copying);
  } finally {
    copying.path.pop();
  }
}

function unserializable(copying: Copying): string {
  copying.left -= UNSERIALIZABLE.length + 2;
  return UNSERIALIZABLE;
}

function readMember(value: object, name: string | number): unknown {
  try {
    return (value as Record<string | number, unknown>)[name];
  } catch {
    return UNSERIALIZABLE;
  }
}
