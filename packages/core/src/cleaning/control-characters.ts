/** Removed from every text: C0 (but tab and newline), DEL and C1, bidi overrides and isolates, U+2028/U+2029. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point.
const CONTROL_CHARACTERS = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point.
const HAS_CONTROL_CHARACTER = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/;

/**
 * Removes the characters that can hide or reorder text, or break a log line: C0 controls other
 * than tab and newline (U+0000–U+0008, U+000B–U+001F: so `\r\n` becomes `\n`), DEL and the C1
 * controls (U+007F–U+009F), the bidirectional overrides and isolates (U+202A–U+202E,
 * U+2066–U+2069) and the line and paragraph separators U+2028/U+2029. Removed, not escaped: an
 * escape such as `\u202e` would turn back into the character when a JSON text is parsed.
 */
export function removeControlCharacters(text: string): string {
  return HAS_CONTROL_CHARACTER.test(text) ? text.replace(CONTROL_CHARACTERS, "") : text;
}
