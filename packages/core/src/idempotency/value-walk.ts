// The walk that writes a value's canonical text (fingerprint.ts), and where it writes: the shapes
// shared by the walk and by the built-in types' writers (built-in-values.ts).

/** Where a walk writes its text: joined into a string (display), or fed to a hash (the fingerprint). */
export interface Sink {
  add(text: string): void;
  /**
   * Adds `"text"` (with its quotes) when nothing in it needs escaping (no quote, backslash, control
   * character or surrogate) and returns true; else adds nothing and returns false.
   */
  addQuoted(text: string): boolean;
}

export class TextSink implements Sink {
  text = "";

  add(text: string): void {
    this.text += text;
  }

  addQuoted(text: string): boolean {
    if (needsEscape(text)) return false;
    this.text += `"${text}"`;
    return true;
  }
}

/** Whether `JSON.stringify` would escape anything in `text`. */
function needsEscape(text: string): boolean {
  for (let index = 0; index < text.length; index++) if (escapedInJson(text.charCodeAt(index))) return true;
  return false;
}

/** A UTF-16 code unit `JSON.stringify` escapes in a string: a control character, a quote, a backslash or a surrogate. */
export function escapedInJson(code: number): boolean {
  return code < 0x20 || code === 0x22 || code === 0x5c || (code >= 0xd800 && code <= 0xdfff);
}

/**
 * One walk over a value. `tagged: false` writes JSON for display; `tagged: true` writes the text that
 * is hashed: JSON data exactly as for display, every other kind of value as a `!`-tagged token
 * (`!bigint(1)`, `!Date(0)`, `!Map[...]`, `!NaN`, ...). A `!` never starts a JSON value, and every
 * token ends unambiguously, so two different values never give the same tagged text. The text goes
 * to `sink` piece by piece: the fingerprint hashes it without building it.
 */
export interface Walk {
  readonly tagged: boolean;
  /** The containers being written, outermost first: meeting one again is a circular reference. */
  readonly ancestors: object[];
  /** A top-level member left out (the idempotency key), or undefined. */
  readonly omit: string | undefined;
  readonly sink: Sink;
}

/** How the built-in types' writers get the text of an entry they sort by it (a Map entry, a Set element): the walk's `textOf`. */
export type TextOf = (walk: Walk, item: unknown, depth: number) => string;

export function writeNumber(walk: Walk, value: number): string {
  if (Number.isFinite(value)) return String(value);
  if (!walk.tagged) return "null";
  if (Number.isNaN(value)) return "!NaN";
  return value > 0 ? "!Infinity" : "!-Infinity";
}
