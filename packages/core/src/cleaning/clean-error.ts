import { DEFAULT_OPTIONS } from "../config/option-table.js";
import { ErrorCodes, isNonArrayObject } from "../errors/error-codes.js";
import { asDelay, createToolError, readDetails, type ToolError, type ToolErrorInit, unreadableErrorInit } from "../errors/tool-error.js";
import { UNSERIALIZABLE } from "../texts/model-texts.js";
import { Cleaner, cutText, defaultRedactor, MAX_DETAILS_DEPTH, mapStrings, setMember, TRUNCATION_MARK } from "./clean-text.js";
import { removeControlCharacters } from "./redaction-rules.js";

/** What an `error_code` may look like; anything else becomes `TOOL_FAILED` (bounded metric cardinality). */
const ERROR_CODE_PATTERN = /^[A-Z][A-Z0-9_]{0,63}$/;

/**
 * A failure as the model, the logs and the spans may see it, each field read once (one that throws
 * makes it the unreadable failure): texts cleaned, `details` copied ({@link cleanDetails}), a valid
 * `error_code`. A new error of plain fields: nothing downstream reads the tool's object again.
 */
export function sanitizeError(cleaner: Cleaner, error: ToolError, key?: string): ToolError {
  let read: { readonly [Name in keyof ToolErrorInit]?: unknown };
  try {
    const { code, message, recoverable, suggestedAction, toolSuggestedAction, retryAfterMs, kind, cause } = error;
    read = { code, message, recoverable, suggestedAction, toolSuggestedAction, retryAfterMs, kind, cause };
  } catch {
    return createToolError(unreadableErrorInit(error));
  }
  const { code, message, recoverable, suggestedAction, toolSuggestedAction, kind } = read;
  if (typeof message !== "string" || typeof recoverable !== "boolean") return createToolError(unreadableErrorInit(error));
  return createToolError({
    code: typeof code === "string" && ERROR_CODE_PATTERN.test(code) ? code : ErrorCodes.TOOL_FAILED,
    message: cleaner.clean(message, key),
    recoverable,
    suggestedAction: typeof suggestedAction === "string" ? cleaner.clean(suggestedAction, key) : "",
    toolSuggestedAction: typeof toolSuggestedAction === "string" ? cleaner.clean(toolSuggestedAction, key) : undefined,
    retryAfterMs: asDelay(read.retryAfterMs),
    details: cleanDetails(cleaner, readDetails(error), key),
    // A kind that is not one of the three is derived from the code again.
    kind: kind === "transient" || kind === "invalid_arguments" || kind === "other" ? kind : undefined,
    cause: read.cause ?? error,
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

/** A copy of an (already clean) error with the fields `parts` has replaced; the original is its `cause`. */
export function withText(error: ToolError, parts: Partial<Omit<ToolErrorInit, "kind" | "cause">>): ToolError {
  const { code, message, recoverable, suggestedAction, toolSuggestedAction, retryAfterMs, details, kind } = error;
  const fields = { code, message, recoverable, suggestedAction, toolSuggestedAction, retryAfterMs, details };
  return createToolError({ ...fields, ...parts, kind, cause: error.cause ?? error });
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
  const copying: Copying = { left: maxErrorLength * 4 + 256, stringLimit: maxErrorLength + 256, cut: false, path: [] };
  const copy = copyValue(details, 1, copying, false);
  if (copy === UNSERIALIZABLE) return { truncated: UNSERIALIZABLE };
  if (!isNonArrayObject(copy)) return undefined; // not an object: dropped, as `fromJSON` does
  const json = JSON.stringify(copy);
  // Redacted (and the key masked) as one text; the copy is bounded already, so nothing is cut here.
  const cleaned = cleaner.cleanJson(json, key);
  let result: unknown = copy;
  try {
    if (cleaned !== json) result = JSON.parse(cleaned);
  } catch {
    result = undefined; // the redactor left text that is not JSON: its cleaned text is kept
  }
  if (!isNonArrayObject(result)) return { truncated: cutText(cleaned, maxErrorLength * 4) };
  const capped = mapStrings(result, (text) => cutText(text, maxErrorLength)) as Record<string, unknown>;
  // A copy that stopped at its window: the start of its JSON, as one text.
  return copying.cut ? { truncated: cutText(JSON.stringify(capped), maxErrorLength * 4) } : capped;
}

/** One copy: characters of JSON left, the longest string kept, whether it stopped, the objects above. */
interface Copying {
  left: number;
  readonly stringLimit: number;
  cut: boolean;
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
    try {
      const toJSON: unknown = (value as { toJSON?: unknown }).toJSON;
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
      setMember(out, removeControlCharacters(name), copied);
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
