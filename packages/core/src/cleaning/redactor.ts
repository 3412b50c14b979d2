import { removeControlCharacters } from "./control-characters.js";
import { redactPrivateKeys } from "./redact-private-keys.js";

/*
 * Where a name or a token may start, `(?<!(?<!\\)[A-Za-z0-9_-])`: not inside a word, but right
 * after an escape such as `\n` (a text inside a JSON string, such as a returned error's `details`,
 * has its line breaks escaped: `"body":"a\nCookie: x"`).
 */

/**
 * A secret header and its value: `Authorization`, `Proxy-Authorization`, `X-Api-Key`, `Api-Key`,
 * `X-Goog-Api-Key`, `X-Auth-Token`, `X-Amz-Security-Token`, `Cookie`, `Set-Cookie`, any case. The
 * value runs to the end of the line, or to a quote, comma or backslash (the header inside a JSON
 * string, a quoted text or a comma-separated list).
 */
const SECRET_HEADER =
  /(?<!(?<!\\)[A-Za-z0-9_-])((?:proxy-)?authorization|x-api-key|x-goog-api-key|api-key|x-auth-token|x-amz-security-token|(?:set-)?cookie)([ \t]*:[ \t]*)[^\s"',\\][^\r\n"',\\]*/gi;

/**
 * A JSON (or Python-style) member whose name is or ends with a secret word, quoted with `"`, `'` or,
 * in JSON encoded inside a JSON string (once or more), `\"` (`\\\"`, ...). Its value: a string with
 * escapes (cut at the end of the line when unterminated), or a bare value (a number, ...). Objects
 * and arrays are not values here: their own members are redacted by name.
 */
const SECRET_JSON_MEMBER =
  /(?<!\\)(\\*["'])([A-Za-z0-9_-]*(?:password|passwd|pwd|pass[_-]?phrase|secret|token|api[_-]?key|access[_-]?key|private[_-]?key|authorization|cookie|credentials?))\1(\s*:\s*)(b?"(?:[^"\\\r\n]|\\.)*(?:"|$)|b?'(?:[^'\\\r\n]|\\.)*(?:'|$)|\\"(?:[^"\\\r\n]|\\(?!"))*(?:\\"|$)|\\{2,}["'](?:[^"'\\\r\n]|\\[^"'\r\n])*(?:\\+["']|$)|[^\s,;:{}[\]()"'\\]+)/gim;

/**
 * An unquoted secret setting: a name that is or ends with `password`, `passwd`, `pwd`,
 * `passphrase`, `secret`, `token`, `api_key`, `access_key`, `private_key` or `credentials` (any
 * case: `PGPASSWORD`, `DB_PASSWORD`, `aws_secret_access_key`), then `:` or `=` (spaces around
 * allowed), then a quoted value (to its quote, or the end of the line) or a bare one (to a space,
 * quote, backslash, `,`, `;` or closing bracket). A value already `[REDACTED]` is left.
 */
const SECRET_SETTING =
  /(?<!(?<!\\)[A-Za-z0-9_-])([A-Za-z0-9_-]*(?:password|passwd|pwd|pass[_-]?phrase|secret|token|api[_-]?key|access[_-]?key|private[_-]?key|credentials?)([ \t]*[:=])[ \t]*)("(?:[^"\\\r\n]|\\.)*"?|'(?:[^'\\\r\n]|\\.)*'?|\\"(?:[^"\\\r\n]|\\(?!"))*(?:\\")?|(?!\[REDACTED\])[^\s"'\\,;<>)\]}]+)/gi;

/** Bare JSON/Python values that hold no secret. */
const HARMLESS_BARE_VALUE = /^(?:null|true|false|none|undefined)$/i;

/** The credentials of a URL (`scheme://user:pass@host`): everything up to the last `@` before the host. */
const URL_CREDENTIALS = /(?<![A-Za-z0-9+.-])([A-Za-z][A-Za-z0-9+.-]*:\/\/)[^\s/?#"'<>\\]+@/g;

/** The secret path of a Slack webhook URL (`https://hooks.slack.com/services/T…/B…/…`). */
const SLACK_WEBHOOK = /(hooks\.slack\.com\/(?:services|workflows|triggers)\/)[A-Za-z0-9_/-]+/g;

/** A JWT: three base64url segments, the header starting `eyJ` (`{"`); the signature may be empty. */
const JWT = /(?<!(?<!\\)[A-Za-z0-9_-])eyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*/g;

/**
 * Tokens known by their prefix: GitHub (`github_pat_…`, `ghp_…`, `gho_…`, `ghu_…`, `ghs_…`,
 * `ghr_…`), Slack (`xoxa-`, `xoxb-`, `xoxp-`, `xoxr-`, `xoxs-`), Google API keys (`AIza…`), GitLab
 * (`glpat-`, `gldt-`, `glrt-`, `glptt-`) and npm (`npm_…`).
 */
const PREFIXED_TOKEN =
  /(?<!(?<!\\)[A-Za-z0-9_-])(?:github_pat_[A-Za-z0-9_]{20,}|gh[pousr]_[A-Za-z0-9]{16,}|xox[abprs]-[A-Za-z0-9-]{10,}|AIza[0-9A-Za-z_-]{30,}|gl(?:pat|dt|rt|ptt)-[0-9A-Za-z_-]{20,}(?:\.[0-9A-Za-z_-]+)*|npm_[A-Za-z0-9]{30,})/g;

/** An AWS access key id: `AKIA…` (long-term) or `ASIA…` (temporary), 20 characters. */
const AWS_KEY_ID = /(?<!(?<!\\)[A-Za-z0-9_])(?:AKIA|ASIA)[0-9A-Z]{16}(?![A-Za-z0-9])/g;

/** A 40-character run that may be an AWS secret access key (base64: letters, digits, `/`, `+`). */
const AWS_SECRET_CANDIDATE = /(?<!(?<!\\)[A-Za-z0-9/+])[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=])/g;

/**
 * The default redactor. First removes control characters (as `cleanErrorText` does: C0 but tab
 * and newline, DEL, C1, bidi overrides and isolates, U+2028/U+2029), so that a secret cut in two by
 * one is still found; then replaces with `[REDACTED]`:
 * - the value of the headers `Authorization`, `Proxy-Authorization`, `X-Api-Key`, `Api-Key`,
 *   `X-Goog-Api-Key`, `X-Auth-Token`, `X-Amz-Security-Token`, `Cookie` and `Set-Cookie`
 *   (`Authorization: [REDACTED]`), to the end of the line or to a quote, comma or backslash;
 * - the value of JSON or Python-style members (`"…"`, `'…'`, or `\"…\"` inside a JSON string) whose
 *   name is or ends with `password`, `passwd`, `pwd`, `passphrase`, `secret`, `token`,
 *   `api_key`/`api-key`/`apikey`, `access_key`/`accessKey`, `private_key`, `authorization`, `cookie`
 *   or `credentials`, any case (`client_secret`, `refresh_token`, `session_token`,
 *   `aws_secret_access_key`, `SecretAccessKey`, ...): a string, or a bare value such as a number,
 *   written as a string so the JSON stays valid; `null`, booleans, objects and arrays are kept (an
 *   object's own members are redacted by their names);
 * - unquoted settings with such a name (`password: …`, `PGPASSWORD=…`, `aws_secret_access_key = …`):
 *   a quoted value always, a bare value after `=` always, a bare value after `:` when it looks like
 *   a credential (it has a digit or a symbol, or is 20+ characters long), so that
 *   "password: Required" or "Invalid token: expired" is kept;
 * - the credentials of a URL (`https://[REDACTED]@host/path`, any scheme), and the path of a Slack
 *   webhook URL (`https://hooks.slack.com/services/[REDACTED]`);
 * - PEM private-key blocks (`-----BEGIN … PRIVATE KEY-----` to its END line, or to the end of the
 *   text or quoted string when cut);
 * - JWTs (`eyJ….….…`), with or without `Bearer`;
 * - the value after `Bearer` or `Basic` (6+ characters), and after `Token` when it looks like a
 *   credential (it has a digit or is 20+ characters long), so "Token expired" is kept;
 * - `sk-…`/`pk-…`/`rk-…` and `sk_live_…`-style keys; GitHub (`github_pat_…`, `ghp_…`, `gho_…`,
 *   `ghu_…`, `ghs_…`, `ghr_…`), Slack (`xoxa-`/`xoxb-`/`xoxp-`/`xoxr-`/`xoxs-…`), Google (`AIza…`),
 *   GitLab (`glpat-…`, `gldt-…`, `glrt-…`, `glptt-…`) and npm (`npm_…`) tokens;
 * - AWS access key ids (`AKIA…`, `ASIA…`) and, in a text that holds one, the 40-character secret
 *   access key beside it (a run of letters, digits, `/` and `+` with upper and lower case letters
 *   and a digit or symbol; a 40-character hex id such as a commit hash is kept);
 * - the value of `key=`, `token=`, `api_key=`, `access_token=`, `secret=`, `password=`, `sig=` and
 *   similar parameters, prefixed ones (`id_token=`, `x-api-key=`) included.
 * Every rule is linear in the length of the text, and runs only when a cheap check finds what it
 * needs in the text. Prose such as "the password is too short", "Authorization failed" or "Token
 * expired" is left as it is.
 */
export function defaultRedactor(text: string): string {
  return redactOrHide(removeControlCharacters(text));
}

/**
 * The rules, failing closed: V8's regular expressions can run out of stack on a text of several
 * megabytes (`RangeError`); such a text is replaced as a whole by `[REDACTED]` rather than passed on.
 */
export function redactOrHide(text: string): string {
  try {
    return redactSecrets(text);
  } catch {
    return "[REDACTED]";
  }
}

/** The default redactor's rules, on a text without control characters. */
function redactSecrets(text: string): string {
  // Each rule runs only when its cheap precondition holds: most error texts hold no secret, and
  // a failure path should not pay a dozen regular-expression scans for nothing.
  let out = text;
  if (out.includes("PRIVATE KEY")) out = redactPrivateKeys(out);
  const colon = out.includes(":");
  const equals = out.includes("=");
  // A secret header, member, setting or scheme needs its word in the text: one scan for all four
  // (redaction only replaces values, so a word found here is still there for the rules below).
  const secretWord = SECRET_WORD.test(out);
  if (colon) {
    if (secretWord && HEADER_HINT.test(out)) out = out.replace(SECRET_HEADER, "$1$2[REDACTED]");
    if (secretWord && (out.includes('"') || out.includes("'"))) out = out.replace(SECRET_JSON_MEMBER, redactJsonMember);
    if (out.includes("://")) {
      if (out.includes("@")) out = out.replace(URL_CREDENTIALS, "$1[REDACTED]@");
      if (out.includes("hooks.slack.com/")) out = out.replace(SLACK_WEBHOOK, "$1[REDACTED]");
    }
  }
  if (out.includes("eyJ")) out = out.replace(JWT, "[REDACTED]");
  if (secretWord && SCHEME_HINT.test(out)) {
    out = out
      .replace(/(?<!(?<!\\)\w)(Bearer|Basic)\s+[A-Za-z0-9._~+/=-]{6,}/gi, "$1 [REDACTED]")
      .replace(/(?<!(?<!\\)\w)(Token)\s+(?=[A-Za-z._~+/=-]*[0-9]|[A-Za-z0-9._~+/=-]{20})[A-Za-z0-9._~+/=-]{6,}/gi, "$1 [REDACTED]");
  }
  if (KEY_PREFIX_HINT.test(out)) {
    out = out
      .replace(/(?<!(?<!\\)\w)(?:sk|pk|rk)-(?:[A-Za-z0-9_]+-)*[A-Za-z0-9_]{8,}/g, "[REDACTED]")
      .replace(/(?<!(?<!\\)\w)(?:sk|pk|rk)_(?:live|test)_[A-Za-z0-9]{8,}/g, "[REDACTED]")
      .replace(PREFIXED_TOKEN, "[REDACTED]");
    if (out.includes("AKIA") || out.includes("ASIA")) out = redactAwsKeys(out);
  }
  if (equals) {
    out = out.replace(
      // A parameter name starts after a non-name character (the lookbehind keeps the scan linear on
      // long hyphenated words) and may carry a prefix: `key=`, `api_key=`, `id_token=`, `x-api-key=`.
      /(?<!(?<!\\)[A-Za-z0-9_-])((?:[A-Za-z0-9]+[_-])*(?:api[_-]?key|key|token|access[_-]?token|refresh[_-]?token|secret|client[_-]?secret|password|passwd|pwd|signature|sig)=)[^&\s"'<>]+/gi,
      "$1[REDACTED]",
    );
  }
  if (secretWord && (colon || equals)) out = out.replace(SECRET_SETTING, redactSetting);
  return out;
}

/** A secret header's name may be in the text (the header rule's precondition). */
const HEADER_HINT = /authoriz|api-key|auth-token|security-token|cookie/i;
/** A secret header, a secret-named JSON member or setting, or `Bearer`/`Basic`/`Token` may be in the text. */
const SECRET_WORD = /passw|pwd|phrase|secret|token|api[_-]?key|access[_-]?key|private[_-]?key|authoriz|cookie|credential|bearer|basic/i;
/** `Bearer`, `Basic` or `Token` may be in the text. */
const SCHEME_HINT = /bearer|basic|token/i;
/** A prefixed key (`sk-`, `pk_live_`, `ghp_`, `github_pat_`, `xoxb-`, `AIza`, `glpat-`, `npm_`, `AKIA`, `ASIA`) may be in the text. */
const KEY_PREFIX_HINT = /[spr]k[-_]|gh[pousr]_|github_pat_|xox[abprs]-|AIza|gl(?:pat|dt|rt|ptt)-|npm_|AKIA|ASIA/;

/** Access key ids; when there was one, the 40-character secret access keys of the same text. */
function redactAwsKeys(text: string): string {
  const out = text.replace(AWS_KEY_ID, "[REDACTED]");
  if (out === text) return text;
  return out.replace(AWS_SECRET_CANDIDATE, (run) => (looksLikeAwsSecret(run) ? "[REDACTED]" : run));
}

/** Random base64 has both cases and a digit or symbol; a hex digest or a word run has not. */
function looksLikeAwsSecret(run: string): boolean {
  return /[A-Z]/.test(run) && /[a-z]/.test(run) && /[0-9/+]/.test(run);
}

/** `name: [REDACTED]` (in the value's quotes), unless a bare value after `:` does not look like a credential. */
function redactSetting(setting: string, head: string, separator: string, value: string): string {
  const quote = /^(?:\\?["'])/.exec(value)?.[0];
  if (quote !== undefined) return `${head}${quote}[REDACTED]${quote}`;
  if (HARMLESS_BARE_VALUE.test(value)) return setting;
  if (separator.endsWith(":") && !looksLikeCredential(value)) return setting;
  return `${head}[REDACTED]`;
}

/** A digit or a symbol (but sentence punctuation at the end), or 20+ characters: not a word of prose. */
function looksLikeCredential(value: string): boolean {
  const word = value.replace(/[.!?:]+$/, "");
  return word.length >= 20 || /[^A-Za-z]/.test(word);
}

/** `"name": "[REDACTED]"`, in the quotes of the value (or of the name, for a bare value). */
function redactJsonMember(member: string, nameQuote: string, name: string, colon: string, value: string): string {
  if (HARMLESS_BARE_VALUE.test(value)) return member;
  const valueQuote = /^b?(\\*["'])/i.exec(value)?.[1] ?? nameQuote;
  return `${nameQuote}${name}${nameQuote}${colon}${valueQuote}[REDACTED]${valueQuote}`;
}
