import { ErrorCodes } from "../errors/error-codes.js";
import { createToolError, type ToolError, unreadableErrorInit } from "../errors/tool-error.js";
import { UNSERIALIZABLE } from "../texts/model-texts.js";
import { cleanErrorText, removeControlCharacters, TRUNCATION_MARK } from "./clean-text.js";

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
  let retry: unknown;
  let kind: unknown;
  let cause: unknown;
  try {
    code = error.code;
    message = error.message;
    recoverable = error.recoverable;
    suggestedAction = error.suggestedAction;
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
    retryAfterMs: typeof retry === "number" && Number.isFinite(retry) && retry >= 0 ? retry : undefined,
    details: cleanDetails(cleaner, details, key),
    // A kind that is not one of the three is derived from the code again.
    kind: kind === "transient" || kind === "invalid_arguments" || kind === "other" ? kind : undefined,
    cause: cause ?? error,
  });
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

/** How deep `details` are copied: `details` itself is level 1; an object or array below level 8 becomes `"[unserializable]"`. */
export const MAX_DETAILS_DEPTH = 8;

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
export function cleanDetails(options: CleaningOptions, details: unknown, key?: string): Record<string, unknown> | undefined {
  if (details === undefined) return undefined;
  const { maxErrorLength } = options;
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
  const cleaned = cleanText(options, json, key, json.length * 4 + 1024);
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

/**
 * The state of one copy: characters of JSON left before it stops, the longest string it keeps,
 * whether it stopped, its longest string, the objects above the value being copied.
 */
interface Copying {
  left: number;
  readonly stringLimit: number;
  cut: boolean;
  longest: number;
  readonly path: object[];
}

/**
 * A JSON-safe copy of one value (JSON's rules: `undefined`, functions and symbols left out of
 * objects and `null` in arrays, non-finite numbers `null`), or `"[unserializable]"`. Stops taking
 * members (marking `cut`) once the copy passes its window: a huge or wide value costs no more than
 * the window.
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

/** A copy of a plain JSON value whose strings longer than `max` are cut and marked. */
function capStrings(value: unknown, max: number, depth: number): unknown {
  if (typeof value === "string") return value.length > max ? cutText(value, max) : value;
  if (typeof value !== "object" || value === null || depth > MAX_DETAILS_DEPTH + 1) return value;
  if (Array.isArray(value)) return value.map((item) => capStrings(item, max, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [name, item] of Object.entries(value)) {
    const capped = capStrings(item, max, depth + 1);
    if (name === "__proto__") Object.defineProperty(out, name, { value: capped, enumerable: true, writable: true, configurable: true });
    else out[name] = capped;
  }
  return out;
}

// Fitting a whole model-visible error into `maxErrorLength`: lengths are counted as JSON writes
// them (escaped), and cut texts end with the truncation mark.

/** How many characters `JSON.stringify` writes for the UTF-16 unit at `index` (and the one after it, for a surrogate pair). */
function escapedUnit(text: string, index: number): { length: number; units: number } {
  const unit = text.charCodeAt(index);
  if (unit === 0x22 || unit === 0x5c) return { length: 2, units: 1 };
  if (unit < 0x20) return { length: unit === 8 || unit === 9 || unit === 10 || unit === 12 || unit === 13 ? 2 : 6, units: 1 };
  if (unit >= 0xd800 && unit <= 0xdbff) {
    const next = text.charCodeAt(index + 1);
    return next >= 0xdc00 && next <= 0xdfff ? { length: 2, units: 2 } : { length: 6, units: 1 };
  }
  if (unit >= 0xdc00 && unit <= 0xdfff) return { length: 6, units: 1 };
  return { length: 1, units: 1 };
}

/** The length of a string's content as JSON writes it (without its quotes). */
export function escapedLength(text: string): number {
  return JSON.stringify(text).length - 2;
}

/**
 * `text` cut so that JSON writes at most `max` characters of it (quotes not counted), ending with the
 * truncation mark when there is room for it. Never splits a surrogate pair.
 */
export function cutEscaped(text: string, max: number): string {
  if (escapedLength(text) <= max) return text;
  const room = max - TRUNCATION_MARK.length;
  const limit = room >= 0 ? room : max;
  let used = 0;
  let index = 0;
  while (index < text.length) {
    const { length, units } = escapedUnit(text, index);
    if (used + length > limit) break;
    used += length;
    index += units;
  }
  return room >= 0 ? text.slice(0, index) + TRUNCATION_MARK : text.slice(0, index);
}

/** `text` cut to at most `max` characters as it is (a bare value), marked when there is room. Never splits a surrogate pair. */
export function cutText(text: string, max: number): string {
  if (text.length <= max) return text;
  const room = max - TRUNCATION_MARK.length;
  let end = Math.max(0, room >= 0 ? room : max);
  const last = text.charCodeAt(end - 1);
  if (end > 0 && last >= 0xd800 && last <= 0xdbff) end -= 1;
  return room >= 0 ? text.slice(0, end) + TRUNCATION_MARK : text.slice(0, end);
}

/**
 * Shares `budget` among items that need `needs` each: an item that needs less than an equal share
 * gets what it needs, and what it leaves goes to the others (the longest are cut, the short kept whole).
 */
export function shareBudget(needs: readonly number[], budget: number): number[] {
  const order = needs.map((_, index) => index).sort((a, b) => (needs[a] as number) - (needs[b] as number));
  const given = needs.map(() => 0);
  let left = Math.max(0, budget);
  let count = needs.length;
  for (const index of order) {
    const give = Math.min(needs[index] as number, Math.floor(left / count));
    given[index] = give;
    left -= give;
    count--;
  }
  return given;
}

/** The `{ truncated }` form's own characters: `{"truncated":""}`. */
const TRUNCATED_SHELL = 16;

/**
 * Clean `details` whose JSON is at most `max` characters: as they are when they fit; else with their
 * longest strings cut (the structure kept); else `{ truncated: "<the start of their JSON>… [truncated]" }`;
 * undefined when not even that fits.
 */
export function fitDetails(details: Record<string, unknown>, json: string, max: number): Record<string, unknown> | undefined {
  if (json.length <= max) return details;
  const strings: string[] = [];
  collectStrings(details, strings, 1);
  const needs = strings.map(escapedLength);
  const skeleton = json.length - needs.reduce((sum, need) => sum + need, 0);
  if (skeleton <= max && strings.length > 0) {
    const given = shareBudget(needs, max - skeleton);
    let next = 0;
    const fitted = mapStrings(
      details,
      (text) => {
        const index = next++;
        return (given[index] as number) < (needs[index] as number) ? cutEscaped(text, given[index] as number) : text;
      },
      1,
    ) as Record<string, unknown>;
    return fitted;
  }
  if (max < TRUNCATED_SHELL) return undefined;
  return { truncated: cutEscaped(json, max - TRUNCATED_SHELL) };
}

/** The strings of a plain JSON value, in the order `JSON.stringify` writes them (keys aside). */
function collectStrings(value: unknown, into: string[], depth: number): void {
  if (typeof value === "string") into.push(value);
  else if (typeof value === "object" && value !== null && depth <= MAX_DETAILS_DEPTH + 1) {
    for (const item of Array.isArray(value) ? value : Object.values(value)) collectStrings(item, into, depth + 1);
  }
}

/** A copy of a plain JSON value with each string replaced, in the order `collectStrings` found them. */
function mapStrings(value: unknown, replace: (text: string) => string, depth: number): unknown {
  if (typeof value === "string") return replace(value);
  if (typeof value !== "object" || value === null || depth > MAX_DETAILS_DEPTH + 1) return value;
  if (Array.isArray(value)) return value.map((item) => mapStrings(item, replace, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [name, item] of Object.entries(value)) {
    const mapped = mapStrings(item, replace, depth + 1);
    if (name === "__proto__") Object.defineProperty(out, name, { value: mapped, enumerable: true, writable: true, configurable: true });
    else out[name] = mapped;
  }
  return out;
}

/** Replaces the key wherever it appears (a short key only where it stands alone). */
function maskKey(text: string, key: string): string {
  if (key.length >= SHORT_KEY) return text.split(key).join(KEY_MASK);
  const escaped = key.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  return text.replace(new RegExp(`(?<![A-Za-z0-9_-])${escaped}(?![A-Za-z0-9_-])`, "g"), KEY_MASK);
}
