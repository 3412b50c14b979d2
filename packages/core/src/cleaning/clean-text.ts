import { removeControlCharacters } from "./control-characters.js";
import { defaultRedactor, redactOrHide } from "./redactor.js";
import { TRUNCATION_MARK } from "./text-budget.js";

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
