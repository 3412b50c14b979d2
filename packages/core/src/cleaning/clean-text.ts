import { redactSecrets, removeControlCharacters } from "./redaction-rules.js";

// Untrusted text as every sink may see it: control characters and stack lines removed, secrets
// redacted, capped, the call's idempotency key masked; with a memo of recent texts. And texts and
// `details` fitted into `maxErrorLength`: lengths counted as JSON writes them (escaped), cut texts
// ending with the truncation mark.

/**
 * The default redactor: removes control characters (so that a secret cut in two by one is still
 * found), then replaces with `[REDACTED]` secret header values, secret-named JSON members and
 * settings, netrc passwords, URL credentials and webhook paths, PEM private keys, JWTs, credentials
 * after `Bearer`/`Basic`/`Token`, tokens known by their format, AWS access keys and secret
 * parameters (the full list: docs/errors.md). Prose such as "the password is too short" or "Token
 * expired" is kept. Every rule is linear in the length of the text. Fails closed: V8's regular
 * expressions can run out of stack on a text of several megabytes (`RangeError`); such a text is
 * replaced as a whole by `[REDACTED]` rather than passed on.
 */
export function defaultRedactor(text: string): string {
  try {
    return redactSecrets(removeControlCharacters(text));
  } catch {
    return "[REDACTED]";
  }
}

/**
 * A stack-frame line: V8 frames are indented (`    at fn (file:1:2)`); an unindented `at ...` line
 * counts only when it ends like a frame (`file:line:col`, `(native)`, `(<anonymous>)`, `(index n)`),
 * so that a message line such as "at least one field is required" is kept. Firefox/Safari
 * frames (`fn@file:line:col`) too.
 */
const STACK_LINE = /^(?:[ \t]+at [^\n]*|at [^\n]*(?::\d+:\d+\)?|\((?:native|<anonymous>|index \d+)\))|[^\s@]*@[^\s@]*:\d+:\d+)[ \t\r]*$/gm;

export interface CleanOptions {
  /** Longest result, the truncation mark included. */
  readonly maxLength: number;
  readonly redact: (text: string) => string;
}

/**
 * What reaches the model and the logs: no control characters (C0 but tab and newline, DEL and C1,
 * bidi overrides and isolates, U+2028/U+2029: removed, before redaction and again after a custom
 * `redact`), no stack-trace lines, secrets redacted, at most `maxLength` characters (a cut text ends
 * with "… [truncated]"). Bounded work even on a 10 MB input.
 */
export function cleanErrorText(text: string, options: CleanOptions): string {
  // Work on a bounded prefix: redaction and stack stripping never see more than a few times the cap.
  const window = options.maxLength * 4 + 256;
  const wasLong = text.length > window;
  const stripped = removeControlCharacters(text.slice(0, window))
    .replace(STACK_LINE, "")
    .replace(/\n{2,}/g, "\n")
    .trim();
  // A custom `redact` might put control characters back: they are removed again after it.
  const cleaned = removeControlCharacters(safeRedact(stripped, options.redact));
  if (!wasLong && cleaned.length <= options.maxLength) return cleaned;
  return cleaned.slice(0, Math.max(0, options.maxLength - TRUNCATION_MARK.length)) + TRUNCATION_MARK;
}

function safeRedact(text: string, redact: (text: string) => string): string {
  try {
    const result = redact(text);
    return typeof result === "string" ? result : defaultRedactor(text);
  } catch {
    return defaultRedactor(text);
  }
}

/** Keys shorter than this are masked only where they stand alone (a key "42" is not cut out of "HTTP 420"). */
const SHORT_KEY = 4;
const MEMO_SIZE = 256;
const MEMO_MAX_TEXT = 4096;

/**
 * The plugin's cleaner: `cleanText` with a small memo of recent texts. A failing tool repeats the
 * same message (and the same `details`); the memo holds short texts only, without a key to mask,
 * and assumes `redact` is a pure function of its text (as documented).
 */
export class Cleaner {
  private readonly memo = new Map<string, string>();
  private readonly jsonMemo = new Map<string, string>();

  constructor(
    readonly maxErrorLength: number,
    readonly redact: (text: string) => string,
  ) {}

  clean(text: string, key?: string): string {
    return this.remembered(this.memo, text, key, this.maxErrorLength);
  }

  /** The JSON text of a failure's `details`, as one text (its copy is bounded already: the cap only keeps the work linear). */
  cleanJson(json: string, key?: string): string {
    return this.remembered(this.jsonMemo, json, key, json.length * 4 + 1024);
  }

  private remembered(memo: Map<string, string>, text: string, key: string | undefined, maxLength: number): string {
    if (text.length > MEMO_MAX_TEXT || (key !== undefined && text.includes(key))) return cleanText(this, text, key, maxLength);
    let cleaned = memo.get(text);
    if (cleaned === undefined) {
      cleaned = cleanText(this, text, undefined, maxLength);
      if (memo.size >= MEMO_SIZE) memo.clear(); // a burst of distinct texts: start again, bounded
      memo.set(text, cleaned);
    }
    return cleaned;
  }
}

/** Untrusted text as every sink may see it: `cleanErrorText`, and the call's idempotency key masked wherever it appears. */
export function cleanText(cleaner: Cleaner, text: string, key?: string, maxLength = cleaner.maxErrorLength): string {
  // Masked before cleaning, on a prefix a little longer than the cleaner reads (linear work).
  const masked = key !== undefined && text.includes(key) ? maskKey(text.slice(0, maxLength * 4 + 256 + key.length + 1), key) : text;
  return cleanErrorText(masked, { maxLength, redact: cleaner.redact });
}

/** Replaces the key with `[REDACTED]` wherever it appears (a short key only where it stands alone). */
function maskKey(text: string, key: string): string {
  if (key.length >= SHORT_KEY) return text.split(key).join("[REDACTED]");
  const escaped = key.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  return text.replace(new RegExp(`(?<![A-Za-z0-9_-])${escaped}(?![A-Za-z0-9_-])`, "g"), "[REDACTED]");
}

/** What ends a cut text. */
export const TRUNCATION_MARK = "… [truncated]";

/** How deep `details` are copied: `details` itself is level 1; an object or array below level 8 becomes `"[unserializable]"`. */
export const MAX_DETAILS_DEPTH = 8;

/** The length of a string's content as JSON writes it (without its quotes). */
function escapedLength(text: string): number {
  return JSON.stringify(text).length - 2;
}

/**
 * `text` cut so that JSON writes at most `max` characters of it (quotes not counted), ending with the
 * truncation mark when there is room for it. Never splits a surrogate pair.
 */
export function cutEscaped(text: string, max: number): string {
  return escapedLength(text) <= max ? text : cut(text, max, escapedLength);
}

/** `text` cut to at most `max` characters as it is (a bare value), marked when there is room. Never splits a surrogate pair. */
export function cutText(text: string, max: number): string {
  return text.length <= max ? text : cut(text, max, (char) => char.length);
}

/** The longest start of `text` (whole code points) whose `width` fits `max`, with the mark when there is room for it. */
function cut(text: string, max: number, width: (char: string) => number): string {
  const room = max - TRUNCATION_MARK.length;
  const limit = room >= 0 ? room : max;
  let used = 0;
  let end = 0;
  for (const char of text) {
    used += width(char);
    if (used > limit) break;
    end += char.length;
  }
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
  const needs: number[] = [];
  mapStrings(details, (text) => {
    needs.push(escapedLength(text));
    return text;
  });
  const skeleton = json.length - needs.reduce((sum, need) => sum + need, 0);
  if (skeleton <= max && needs.length > 0) {
    const given = shareBudget(needs, max - skeleton);
    let next = 0;
    return mapStrings(details, (text) => cutEscaped(text, given[next++] as number)) as Record<string, unknown>;
  }
  if (max < TRUNCATED_SHELL) return undefined;
  return { truncated: cutEscaped(json, max - TRUNCATED_SHELL) };
}

/** A copy of a plain JSON value with each string replaced, in the order `JSON.stringify` writes them (keys aside). */
export function mapStrings(value: unknown, replace: (text: string) => string, depth = 1): unknown {
  if (typeof value === "string") return replace(value);
  if (typeof value !== "object" || value === null || depth > MAX_DETAILS_DEPTH + 1) return value;
  if (Array.isArray(value)) return value.map((item) => mapStrings(item, replace, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [name, item] of Object.entries(value)) setMember(out, name, mapStrings(item, replace, depth + 1));
  return out;
}

/** Sets `out[name]`; `__proto__` as a plain member (an assignment would set the object's prototype). */
export function setMember(out: Record<string, unknown>, name: string, value: unknown): void {
  if (name === "__proto__") Object.defineProperty(out, name, { value, enumerable: true, writable: true, configurable: true });
  else out[name] = value;
}
