// The default redactor's rules (`redactSecrets`, run by `defaultRedactor` after
// `removeControlCharacters`) and the patterns they look for.

/** Removed from every text: C0 (but tab and newline), DEL and C1, bidi overrides and isolates, U+2028/U+2029. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point.
const CONTROL_CHARACTERS = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

/**
 * Removes the characters that can hide or reorder text, or break a log line (`\r\n` becomes `\n`).
 * Removed, not escaped: an escape such as `\u202e` would turn back into the character when a JSON
 * text is parsed.
 */
export function removeControlCharacters(text: string): string {
  return text.replace(CONTROL_CHARACTERS, "");
}

// Where a name or a token may start, `(?<!(?<!\\)[A-Za-z0-9_-])`: not inside a word, but right after an
// escape such as `\n` (a text inside a JSON string has its line breaks escaped: `"body":"a\nCookie: x"`).

/** The words a secret's name is or ends with, any case (`DB_PASSWORD`, `client_secret`, `SecretAccessKey`, Azure's `AccountKey`). */
const SECRET_WORDS =
  "password|passwd|pwd|pass[_-]?phrase|secret|token|api[_-]?key|access[_-]?key|account[_-]?key|private[_-]?key|credentials?";

/** A name that is or ends with one of `words`, with an encoding suffix or not (`PRIVATE_KEY_B64`, `SIGNING_KEY_BASE64`). */
function nameEndingWith(words: string): string {
  return `[A-Za-z0-9_-]*(?:(?:${words})(?:[_-]?(?:b64|base64))?|key[_-]?(?:b64|base64))`;
}

/**
 * A secret header and its value: `Authorization`, `Proxy-Authorization`, `X-Api-Key`, `Api-Key`,
 * `X-Goog-Api-Key`, `Ocp-Apim-Subscription-Key`, `X-Auth-Token`, `X-Amz-Security-Token`, `Cookie`,
 * `Set-Cookie`, any case. The value runs to the end of the line, or to a quote, comma or backslash
 * (the header inside a JSON string, a quoted text or a comma-separated list).
 */
const SECRET_HEADER =
  /(?<!(?<!\\)[A-Za-z0-9_-])((?:proxy-)?authorization|x-api-key|x-goog-api-key|api-key|ocp-apim-subscription-key|x-auth-token|x-amz-security-token|(?:set-)?cookie)([ \t]*:[ \t]*)[^\s"',\\][^\r\n"',\\]*/gi;

/**
 * A JSON (or Python-style) member with a secret's name (or `authorization`, `cookie`; or exactly
 * `pass` or `auth`, bare or after `_`/`-`: nodemailer's `auth.pass`, a docker config's `auth`),
 * quoted with `"`, `'` or, in JSON encoded inside a JSON string (once or more), `\"` (`\\\"`, ...).
 * Its value: a string with escapes (cut at the end of the line when unterminated), or a bare value
 * (a number, ...). Objects and arrays are not values here: their own members are redacted by name.
 */
const SECRET_JSON_MEMBER = new RegExp(
  `(?<!\\\\)(\\\\*["'])(${nameEndingWith(`${SECRET_WORDS}|authorization|cookie`)}|(?:[A-Za-z0-9_-]*[_-])?(?:pass|auth))\\1` +
    String.raw`(\s*:\s*)(b?"(?:[^"\\\r\n]|\\.)*(?:"|$)|b?'(?:[^'\\\r\n]|\\.)*(?:'|$)|\\"(?:[^"\\\r\n]|\\(?!"))*(?:\\"|$)|\\{2,}["'](?:[^"'\\\r\n]|\\[^"'\r\n])*(?:\\+["']|$)|[^\s,;:{}[\]()"'\\]+)`,
  "gim",
);

/**
 * An unquoted setting with a secret's name, then `:` or `=` (spaces around allowed), then a quoted
 * value (to its quote, or the end of the line) or a bare one (to a space, quote, backslash, `,`, `;`
 * or closing bracket). A value already `[REDACTED]` is left.
 */
const SECRET_SETTING = new RegExp(
  `(?<!(?<!\\\\)[A-Za-z0-9_-])(${nameEndingWith(SECRET_WORDS)}([ \\t]*[:=])[ \\t]*)` +
    String.raw`("(?:[^"\\\r\n]|\\.)*"?|'(?:[^'\\\r\n]|\\.)*'?|\\"(?:[^"\\\r\n]|\\(?!"))*(?:\\")?|(?!\[REDACTED\])[^\s"'\\,;<>)\]}]+)`,
  "gi",
);

/** Bare JSON/Python values that hold no secret. */
const HARMLESS_BARE_VALUE = /^(?:null|true|false|none|undefined)$/i;

/** The credentials of a URL (`scheme://user:pass@host`): everything up to the last `@` before the host. */
const URL_CREDENTIALS = /(?<![A-Za-z0-9+.-])([A-Za-z][A-Za-z0-9+.-]*:\/\/)[^\s/?#"'<>\\]+@/g;

/** The secret path of a Slack or Discord webhook URL (`https://hooks.slack.com/services/T…/B…/…`, `https://discord.com/api/webhooks/<id>/<token>`). */
const WEBHOOK_URL =
  /((?:hooks\.slack\.com\/(?:services|workflows|triggers)|(?:(?:canary|ptb)\.)?discord(?:app)?\.com\/api(?:\/v\d+)?\/webhooks)\/)[A-Za-z0-9_/-]+/g;

/** A JWT: three base64url segments, the header starting `eyJ` (`{"`); the signature may be empty. */
const JWT = /(?<!(?<!\\)[A-Za-z0-9_-])eyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*/g;

/** The credential after `Bearer` or `Basic`, after a space or, in a URL, `%20`. */
const SCHEME_CREDENTIAL = /(?<!(?<!\\)\w)(Bearer|Basic)(\s+|%20)[A-Za-z0-9._~+/=%-]{6,}/gi;

/** The value after `Token` when it looks like a credential (a digit, or 20+ characters): "Token expired" is kept. */
const TOKEN_CREDENTIAL = /(?<!(?<!\\)\w)(Token)\s+(?=[A-Za-z._~+/=-]*[0-9]|[A-Za-z0-9._~+/=-]{20})[A-Za-z0-9._~+/=-]{6,}/gi;

/**
 * A secret parameter (`key=`, `api_key=`, `id_token=`, `x-api-key=`, `auth=`, `authorization=`,
 * `PRIVATE_KEY_B64=`, ...; the `=` URL-encoded too): its value, to `&`, a space or a quote. The name
 * starts after a non-name character (the lookbehind keeps the scan linear on long hyphenated words).
 */
const SECRET_PARAMETER =
  /(?<!(?<!\\)[A-Za-z0-9_-])((?:[A-Za-z0-9]+[_-])*(?:api[_-]?key|key|token|access[_-]?token|refresh[_-]?token|secret|client[_-]?secret|password|passwd|pwd|signature|sig|auth|authorization)(?:[_-]?(?:b64|base64))?(?:=|%3D))[^&\s"'<>]+/gi;

/** Between netrc tokens: white space, or a line break escaped inside a JSON string. */
const NETRC_SPACE = String.raw`(?:\s|\\[nrt])+`;
const NETRC_WORD = String.raw`[^\s\\"']+`;
const NETRC_PAIR = `${NETRC_SPACE}(?:login|account|port)${NETRC_SPACE}${NETRC_WORD}`;
/**
 * The password of a netrc entry: `machine <host>` (or `default` and a `login`), `login`, `account`
 * or `port` pairs, then `password <value>`, on one line or several. "the password is" is kept.
 */
const NETRC_PASSWORD = new RegExp(
  `(?<!(?<!\\\\)[A-Za-z0-9_-])((?:machine${NETRC_SPACE}${NETRC_WORD}(?:${NETRC_PAIR})*|default(?:${NETRC_PAIR})+)${NETRC_SPACE}password${NETRC_SPACE})${NETRC_WORD}`,
  "g",
);

/**
 * Tokens removed wherever they stand, by their format (regular expressions' sources). The lengths
 * and character sets are the issuers' own, so that prose or an identifier that merely starts like
 * one (`hf_hub_download`, "SG." ending a sentence, `npm_config_cache`) is kept.
 */
const TOKEN_FORMATS = [
  "(?:sk|pk|rk)-(?:[A-Za-z0-9_]+-)*[A-Za-z0-9_]{8,}", // OpenAI and others (`sk-…`, `pk-…`, `rk-…`)
  "(?:sk|pk|rk)_(?:live|test)_[A-Za-z0-9]{8,}", // Stripe keys (`sk_live_…`, `pk_test_…`, `rk_live_…`)
  "whsec_[A-Za-z0-9+/]{24,}={0,2}", // Stripe webhook signing secrets (`whsec_…`)
  "github_pat_[A-Za-z0-9_]{20,}", // GitHub fine-grained tokens (`github_pat_…`)
  "gh[pousr]_[A-Za-z0-9]{16,}", // GitHub tokens (`ghp_`, `gho_`, `ghu_`, `ghs_`, `ghr_`)
  "gl(?:pat|dt|rt|ptt)-[0-9A-Za-z_-]{20,}(?:\\.[0-9A-Za-z_-]+)*", // GitLab tokens (`glpat-`, `gldt-`, `glrt-`, `glptt-`)
  "xox[abprs]-[A-Za-z0-9-]{10,}", // Slack tokens (`xoxa-`, `xoxb-`, `xoxp-`, `xoxr-`, `xoxs-`)
  "AIza[0-9A-Za-z_-]{30,}", // Google API keys (`AIza…`)
  "ya29\\.[0-9A-Za-z_-]{20,}", // Google OAuth access tokens (`ya29.…`)
  "npm_[A-Za-z0-9]{30,}", // npm tokens (`npm_…`)
  "hf_[A-Za-z0-9]{34}(?![A-Za-z0-9])", // Hugging Face tokens (`hf_` and 34 letters)
  "SG\\.[A-Za-z0-9_-]{22}\\.[A-Za-z0-9_-]{43}", // SendGrid API keys (`SG.` 22 `.` 43)
  "hv[sbr]\\.[A-Za-z0-9_-]{24,}", // HashiCorp Vault tokens (`hvs.`, `hvb.`, `hvr.`)
];

/** Any of the formats, where a token may start (not inside a word; right after an escape such as `\n`). */
const KNOWN_TOKEN = new RegExp(`(?<!(?<!\\\\)[A-Za-z0-9_-])(?:${TOKEN_FORMATS.join("|")})`, "g");

/** An AWS access key id: `AKIA…` (long-term) or `ASIA…` (temporary), 20 characters. */
const AWS_KEY_ID = /(?<!(?<!\\)[A-Za-z0-9_])(?:AKIA|ASIA)[0-9A-Z]{16}(?![A-Za-z0-9])/g;

/** A 40-character run that may be an AWS secret access key (base64: letters, digits, `/`, `+`). */
const AWS_SECRET_CANDIDATE = /(?<!(?<!\\)[A-Za-z0-9/+])[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=])/g;

/** AWS access key ids and, when the text held one, the 40-character secret access keys beside it. */
function redactAwsKeys(text: string): string {
  const out = text.replace(AWS_KEY_ID, "[REDACTED]");
  if (out === text) return text;
  return out.replace(AWS_SECRET_CANDIDATE, (run) => (looksLikeAwsSecret(run) ? "[REDACTED]" : run));
}

/** Random base64 has both cases and a digit or symbol; a hex digest or a word run has not. */
function looksLikeAwsSecret(run: string): boolean {
  return /[A-Z]/.test(run) && /[a-z]/.test(run) && /[0-9/+]/.test(run);
}

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
function redactPrivateKeys(text: string): string {
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

/** The default redactor's rules, in the order they run (each replaces values only: the words a later rule needs stay). */
export function redactSecrets(text: string): string {
  const partly = redactPrivateKeys(text)
    .replace(SECRET_HEADER, "$1$2[REDACTED]")
    .replace(SECRET_JSON_MEMBER, redactJsonMember)
    .replace(URL_CREDENTIALS, "$1[REDACTED]@")
    .replace(WEBHOOK_URL, "$1[REDACTED]")
    .replace(JWT, "[REDACTED]")
    .replace(SCHEME_CREDENTIAL, "$1$2[REDACTED]")
    .replace(TOKEN_CREDENTIAL, "$1 [REDACTED]")
    .replace(KNOWN_TOKEN, "[REDACTED]");
  return redactAwsKeys(partly)
    .replace(SECRET_PARAMETER, "$1[REDACTED]")
    .replace(NETRC_PASSWORD, "$1[REDACTED]")
    .replace(SECRET_SETTING, redactSetting);
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
