import { REDACTION_RULES, type RedactionRule } from "./redaction-rules.js";
import { TRUNCATION_MARK } from "./text-budget.js";

// Untrusted text as every sink may see it: control characters and stack lines removed, secrets
// redacted, capped, the call's idempotency key masked; with a memo of recent texts.

/** Removed from every text: C0 (but tab and newline), DEL and C1, bidi overrides and isolates, U+2028/U+2029. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point.
const CONTROL_CHARACTERS = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point.
const HAS_CONTROL_CHARACTER = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/;

/**
 * Removes the characters that can hide or reorder text, or break a log line (`\r\n` becomes `\n`).
 * Removed, not escaped: an escape such as `\u202e` would turn back into the character when a JSON
 * text is parsed.
 */
export function removeControlCharacters(text: string): string {
  return HAS_CONTROL_CHARACTER.test(text) ? text.replace(CONTROL_CHARACTERS, "") : text;
}

/**
 * The default redactor: removes control characters (so that a secret cut in two by one is still
 * found), then replaces with `[REDACTED]` secret header values, secret-named JSON members and
 * settings, netrc passwords, URL credentials and webhook paths, PEM private keys, JWTs, credentials
 * after `Bearer`/`Basic`/`Token`, tokens known by their format, AWS access keys and secret
 * parameters (the full list: docs/errors.md). Prose such as "the password is too short" or "Token
 * expired" is kept. Every rule is linear in the length of the text, and runs only when a cheap
 * check finds what it needs.
 */
export function defaultRedactor(text: string): string {
  return redactOrHide(removeControlCharacters(text));
}

/**
 * The rules, failing closed: V8's regular expressions can run out of stack on a text of several
 * megabytes (`RangeError`); such a text is replaced as a whole by `[REDACTED]` rather than passed on.
 */
function redactOrHide(text: string): string {
  try {
    let out = text;
    for (const rule of REDACTION_RULES) if (applies(rule, out)) out = rule.redact(out);
    return out;
  } catch {
    return "[REDACTED]";
  }
}

function applies(rule: RedactionRule, text: string): boolean {
  return rule.needs.every((need) =>
    typeof need === "string" ? text.includes(need) : need instanceof RegExp ? need.test(text) : need.some((part) => text.includes(part)),
  );
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
  let cleaned = wasLong ? text.slice(0, window) : text;
  cleaned = removeControlCharacters(cleaned)
    .replace(STACK_LINE, "")
    .replace(/\n{2,}/g, "\n")
    .trim();
  // The default redactor's own control-character pass would find nothing: skip it. A custom one
  // might put some back: they are removed again after it.
  cleaned = options.redact === defaultRedactor ? redactOrHide(cleaned) : removeControlCharacters(safeRedact(cleaned, options.redact));
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

const KEY_MASK = "[REDACTED]";
/** Keys shorter than this are masked only where they stand alone (a key "42" is not cut out of "HTTP 420"). */
const SHORT_KEY = 4;
const MEMO_SIZE = 256;
const MEMO_MAX_TEXT = 4096;

/** How untrusted text is cleaned: the plugin's `maxErrorLength` and `redact`. */
interface CleaningOptions {
  readonly maxErrorLength: number;
  readonly redact: (text: string) => string;
}

/**
 * The plugin's cleaner: `cleanText` with a small memo of recent texts. A failing tool repeats the
 * same message (and the same `details`), and cleaning is most of a failure's cost; the memo holds
 * short texts only, without a key to mask, and assumes `redact` is a pure function of its text (as
 * documented).
 */
export class Cleaner implements CleaningOptions {
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
export function cleanText(options: CleaningOptions, text: string, key?: string, maxLength = options.maxErrorLength): string {
  let source = text;
  if (key !== undefined && source.includes(key)) {
    // Masked before cleaning, on a prefix a little longer than the cleaner reads (linear work).
    const window = maxLength * 4 + 256 + key.length + 1;
    source = maskKey(source.length > window ? source.slice(0, window) : source, key);
  }
  return cleanErrorText(source, { maxLength, redact: options.redact });
}

/** Replaces the key wherever it appears (a short key only where it stands alone). */
function maskKey(text: string, key: string): string {
  if (key.length >= SHORT_KEY) return text.split(key).join(KEY_MASK);
  const escaped = key.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  return text.replace(new RegExp(`(?<![A-Za-z0-9_-])${escaped}(?![A-Za-z0-9_-])`, "g"), KEY_MASK);
}
