import { cleanErrorText } from "./clean-text.js";

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
  /** The same for the JSON text of `details` (cleaned with a cap of its own: see `cleanJson`). */
  private readonly jsonMemo = new Map<string, string>();

  constructor(
    readonly maxErrorLength: number,
    readonly redact: (text: string) => string,
  ) {}

  clean(text: string, key?: string): string {
    return this.remembered(this.memo, text, key, this.maxErrorLength);
  }

  /**
   * The JSON text of a failure's `details`, cleaned as one text (its copy is bounded already, so
   * the cap only keeps the cleaner linear): a failure that repeats repeats its details too (the same
   * bad arguments named, the same status), and cleaning them is ~1-2 µs.
   */
  cleanJson(json: string, key?: string): string {
    return this.remembered(this.jsonMemo, json, key, json.length * 4 + 1024);
  }

  /** Long texts, and texts holding the key to mask, are cleaned each time; others once, while remembered. */
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

/** Replaces the key wherever it appears (a short key only where it stands alone). */
function maskKey(text: string, key: string): string {
  if (key.length >= SHORT_KEY) return text.split(key).join(KEY_MASK);
  const escaped = key.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  return text.replace(new RegExp(`(?<![A-Za-z0-9_-])${escaped}(?![A-Za-z0-9_-])`, "g"), KEY_MASK);
}
