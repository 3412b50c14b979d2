/** The first line of a PEM private key (`RSA`, `EC`, `OPENSSH`, `ENCRYPTED`, PGP's `PRIVATE KEY BLOCK`). */
const PEM_BEGIN = /-----BEGIN[A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----/g;
/** The last line of a PEM private key. */
const PEM_END = /-----END[A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----/g;
/** A quote with the backslashes that escape it: where the (JSON or quoted) string a cut key is in ends. */
const QUOTE = /(?<!\\)\\*["']/g;

/**
 * PEM private-key blocks, each from its BEGIN line to its END line; a block cut before its END runs
 * to the end of the text, or to the quote that ends the string it is in (so that JSON stays JSON).
 * Not one regular expression: a lazy scan to the END line would need stack in proportion to the
 * block, and each search here only moves forward (linear).
 */
export function redactPrivateKeys(text: string): string {
  let out = "";
  let done = 0;
  let end: RegExpExecArray | null | undefined;
  let quote: RegExpExecArray | null | undefined;
  PEM_BEGIN.lastIndex = 0;
  for (let begin = PEM_BEGIN.exec(text); begin !== null; begin = PEM_BEGIN.exec(text)) {
    const body = PEM_BEGIN.lastIndex;
    end = nextMatch(PEM_END, text, body, end);
    quote = nextMatch(QUOTE, text, body, quote);
    const stop = quote?.index ?? text.length;
    const blockEnd = end && end.index < stop ? end.index + end[0].length : stop;
    out += `${text.slice(done, begin.index)}[REDACTED]`;
    done = blockEnd;
    PEM_BEGIN.lastIndex = blockEnd;
  }
  PEM_BEGIN.lastIndex = 0;
  return out === "" ? text : out + text.slice(done);
}

/**
 * The first match of a global `pattern` at or after `from`: the previous answer when it is still
 * ahead (`null`: there was none after an earlier point, so there is none after this one).
 */
function nextMatch(pattern: RegExp, text: string, from: number, previous: RegExpExecArray | null | undefined): RegExpExecArray | null {
  if (previous === null) return null;
  if (previous !== undefined && previous.index >= from) return previous;
  pattern.lastIndex = from;
  const match = pattern.exec(text);
  pattern.lastIndex = 0;
  return match;
}
