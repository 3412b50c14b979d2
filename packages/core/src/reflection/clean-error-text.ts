const TRUNCATION_MARK = "… [truncated]";
/**
 * A stack-frame line: V8 frames are indented (`    at fn (file:1:2)`); an unindented `at ...` line
 * counts only when it ends like a frame (`file:line:col`, `(native)`, `(<anonymous>)`, `(index n)`),
 * so that a message line such as "at least one field is required" is kept. Firefox/Safari
 * frames (`fn@file:line:col`) too.
 */
const STACK_LINE = /^(?:[ \t]+at [^\n]*|at [^\n]*(?::\d+:\d+\)?|\((?:native|<anonymous>|index \d+)\))|[^\s@]*@[^\s@]*:\d+:\d+)[ \t\r]*$/gm;

/**
 * A secret header and its value: `Authorization`, `Proxy-Authorization`, `X-Api-Key`, `Api-Key`,
 * `X-Auth-Token`, `Cookie`, `Set-Cookie`, any case. The value runs to the end of the line, or to a
 * quote, comma or backslash (the header inside a JSON string, a quoted text or a comma-separated list).
 */
const SECRET_HEADER =
  /(?<![A-Za-z0-9_-])((?:proxy-)?authorization|x-api-key|api-key|x-auth-token|(?:set-)?cookie)([ \t]*:[ \t]*)[^\s"',\\][^\r\n"',\\]*/gi;

/**
 * A JSON (or Python-style) member whose name is or ends with a secret word, quoted with `"`, `'` or,
 * in JSON encoded inside a JSON string, `\"`. Its value: a string with escapes (cut at the end of the
 * line when unterminated), or a bare value (a number, ...). Objects and arrays are not values here:
 * their own members are redacted by name.
 */
const SECRET_JSON_MEMBER =
  /(\\?["'])([A-Za-z0-9_-]*(?:password|passwd|secret|token|api[_-]?key|private[_-]?key|authorization|cookie))\1(\s*:\s*)(b?"(?:[^"\\\r\n]|\\.)*(?:"|$)|b?'(?:[^'\\\r\n]|\\.)*(?:'|$)|\\"(?:[^"\\\r\n]|\\(?!"))*(?:\\"|$)|[^\s,;:{}[\]()"'\\]+)/gim;

/** Bare JSON/Python values that hold no secret. */
const HARMLESS_BARE_VALUE = /^(?:null|true|false|none|undefined)$/i;

/** The credentials of a URL (`scheme://user:pass@host`): everything up to the last `@` before the host. */
const URL_CREDENTIALS = /(?<![A-Za-z0-9+.-])([A-Za-z][A-Za-z0-9+.-]*:\/\/)[^\s/?#"'<>\\]+@/g;

/** A JWT: three base64url segments, the header starting `eyJ` (`{"`); the signature may be empty. */
const JWT = /(?<![A-Za-z0-9_-])eyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*/g;

/**
 * The default redactor. Replaces with `[REDACTED]`:
 * - the value of the headers `Authorization`, `Proxy-Authorization`, `X-Api-Key`, `Api-Key`,
 *   `X-Auth-Token`, `Cookie` and `Set-Cookie` (`Authorization: [REDACTED]`), to the end of the line
 *   or to a quote, comma or backslash;
 * - the value of JSON or Python-style members (`"…"`, `'…'`, or `\"…\"` inside a JSON string) whose
 *   name is or ends with `password`, `passwd`, `secret`, `token`, `api_key`/`api-key`/`apikey`,
 *   `private_key` or `authorization` or `cookie`, any case (`client_secret`, `access_token`, `apiKey`,
 *   `x-api-key`, ...): a string, or a bare value such as a number, written as a string so the JSON
 *   stays valid; `null`, booleans, objects and arrays are kept;
 * - the credentials of a URL (`https://[REDACTED]@host/path`, any scheme);
 * - JWTs (`eyJ….….…`), with or without `Bearer`;
 * - the value after `Bearer` or `Basic` (6+ characters), and after `Token` when it looks like a
 *   credential (it has a digit or is 20+ characters long), so "Token expired" is kept;
 * - `sk-…`/`pk-…`/`rk-…` and `sk_live_…`-style keys, GitHub (`ghp_…`), Slack (`xoxb-…`) and AWS
 *   (`AKIA…`) tokens;
 * - the value of `key=`, `token=`, `api_key=`, `access_token=`, `secret=`, `password=`, `sig=` and
 *   similar parameters, prefixed ones (`id_token=`, `x-api-key=`) included.
 * Every rule is linear in the length of the text. Prose such as "the password is too short" or
 * "Authorization failed" is left as it is.
 */
export function defaultRedactor(text: string): string {
  // Each rule runs only when its cheap precondition holds: most error texts hold no secret, and
  // a failure path should not pay ten regular-expression scans for nothing.
  let out = text;
  if (out.includes(":")) {
    if (HEADER_HINT.test(out)) out = out.replace(SECRET_HEADER, "$1$2[REDACTED]");
    if ((out.includes('"') || out.includes("'")) && SECRET_WORD.test(out)) out = out.replace(SECRET_JSON_MEMBER, redactJsonMember);
    if (out.includes("://") && out.includes("@")) out = out.replace(URL_CREDENTIALS, "$1[REDACTED]@");
  }
  if (out.includes("eyJ")) out = out.replace(JWT, "[REDACTED]");
  if (SCHEME_HINT.test(out)) {
    out = out
      .replace(/\b(Bearer|Basic)\s+[A-Za-z0-9._~+/=-]{6,}/gi, "$1 [REDACTED]")
      .replace(/\b(Token)\s+(?=[A-Za-z._~+/=-]*[0-9]|[A-Za-z0-9._~+/=-]{20})[A-Za-z0-9._~+/=-]{6,}/gi, "$1 [REDACTED]");
  }
  if (KEY_PREFIX_HINT.test(out)) {
    out = out
      .replace(/\b(?:sk|pk|rk)-(?:[A-Za-z0-9_]+-)*[A-Za-z0-9_]{8,}/g, "[REDACTED]")
      .replace(/\b(?:sk|pk|rk)_(?:live|test)_[A-Za-z0-9]{8,}/g, "[REDACTED]")
      .replace(/\b(gh[pousr]_[A-Za-z0-9]{16,}|xox[abpr]-[A-Za-z0-9-]{10,}|AKIA[0-9A-Z]{16})\b/g, "[REDACTED]");
  }
  if (out.includes("=")) {
    out = out.replace(
      // A parameter name starts after a non-name character (the lookbehind keeps the scan linear on
      // long hyphenated words) and may carry a prefix: `key=`, `api_key=`, `id_token=`, `x-api-key=`.
      /(?<![A-Za-z0-9_-])((?:[A-Za-z0-9]+[_-])*(?:api[_-]?key|key|token|access[_-]?token|refresh[_-]?token|secret|client[_-]?secret|password|passwd|pwd|signature|sig)=)[^&\s"'<>]+/gi,
      "$1[REDACTED]",
    );
  }
  return out;
}

/** A secret header's name may be in the text (the header rule's precondition). */
const HEADER_HINT = /authoriz|api-key|auth-token|cookie/i;
/** A secret-named JSON member may be in the text. */
const SECRET_WORD = /passw|secret|token|api[_-]?key|private[_-]?key|authoriz|cookie/i;
/** `Bearer`, `Basic` or `Token` may be in the text. */
const SCHEME_HINT = /bearer|basic|token/i;
/** A prefixed key (`sk-`, `pk_live_`, `ghp_`, `xoxb-`, `AKIA`) may be in the text. */
const KEY_PREFIX_HINT = /[spr]k[-_]|gh[pousr]_|xox[abpr]-|AKIA/;

/** `"name": "[REDACTED]"`, in the quotes of the value (or of the name, for a bare value). */
function redactJsonMember(member: string, nameQuote: string, name: string, colon: string, value: string): string {
  if (HARMLESS_BARE_VALUE.test(value)) return member;
  const valueQuote = /^b?(\\?["'])/i.exec(value)?.[1] ?? nameQuote;
  return `${nameQuote}${name}${nameQuote}${colon}${valueQuote}[REDACTED]${valueQuote}`;
}

/**
 * Turns anything a tool threw or returned into one line-safe text: strings as they are, errors by
 * their message, other values as JSON (circular references and BigInts handled), never throwing.
 */
export function errorMessageOf(error: unknown): string {
  if (typeof error === "string") return error;
  if (error === undefined) return "the tool failed without an error message (undefined)";
  if (error === null) return "the tool failed without an error message (null)";
  if (typeof error === "object") {
    const message = readMessage(error);
    if (message !== undefined) return message;
    return safeJson(error);
  }
  if (typeof error === "function") return `the tool failed with a function (${error.name || "anonymous"})`;
  return String(error);
}

function readMessage(error: object): string | undefined {
  try {
    const { message, name } = error as { message?: unknown; name?: unknown };
    if (typeof message === "string" && message.length > 0) return message;
    if (error instanceof Error) return typeof name === "string" && name ? name : "Error";
    const content = (error as { content?: unknown }).content;
    if (Array.isArray(content)) {
      const texts = content
        .map((part: unknown) => (typeof part === "object" && part !== null ? (part as { text?: unknown }).text : undefined))
        .filter((text): text is string => typeof text === "string");
      if (texts.length > 0) return texts.join("\n");
    }
    if (typeof content === "string" && content.length > 0) return content;
  } catch {
    // A getter that throws: fall through to JSON.
  }
  return undefined;
}

/** JSON that never throws: BigInts as strings, circular references as "[Circular]". */
export function safeJson(value: object): string {
  const seen = new WeakSet<object>();
  try {
    const json = JSON.stringify(value, (_key, item: unknown) => {
      if (typeof item === "bigint") return item.toString();
      if (typeof item === "object" && item !== null) {
        if (seen.has(item)) return "[Circular]";
        seen.add(item);
      }
      return item;
    });
    return json === undefined ? typeTag(value) : json;
  } catch {
    return typeTag(value);
  }
}

function typeTag(value: object): string {
  try {
    return Object.prototype.toString.call(value);
  } catch {
    // A proxy whose traps throw (even on Symbol.toStringTag).
    return "[object Object]";
  }
}

export interface CleanOptions {
  /** Longest result, the truncation mark included. */
  readonly maxLength: number;
  readonly redact: (text: string) => string;
}

/**
 * What reaches the model and the logs: no stack-trace lines, secrets redacted, at most
 * `maxLength` characters (a cut text ends with "… [truncated]"). Bounded work even on a 10 MB input.
 */
export function cleanErrorText(text: string, options: CleanOptions): string {
  // Work on a bounded prefix: redaction and stack stripping never see more than a few times the cap.
  const window = options.maxLength * 4 + 256;
  const wasLong = text.length > window;
  let cleaned = wasLong ? text.slice(0, window) : text;
  cleaned = cleaned
    .replace(STACK_LINE, "")
    .replace(/\n{2,}/g, "\n")
    .trim();
  cleaned = safeRedact(cleaned, options.redact);
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

export { TRUNCATION_MARK };
