import { removeControlCharacters } from "./control-characters.js";
import { REDACTION_RULES, type RedactionRule } from "./redaction-rules.js";

/**
 * The default redactor. First removes control characters (as `cleanErrorText` does: C0 but tab
 * and newline, DEL, C1, bidi overrides and isolates, U+2028/U+2029), so that a secret cut in two by
 * one is still found; then replaces with `[REDACTED]` (the rules are `REDACTION_RULES`):
 * - the value of the headers `Authorization`, `Proxy-Authorization`, `X-Api-Key`, `Api-Key`,
 *   `X-Goog-Api-Key`, `Ocp-Apim-Subscription-Key`, `X-Auth-Token`, `X-Amz-Security-Token`, `Cookie`
 *   and `Set-Cookie` (`Authorization: [REDACTED]`), to the end of the line or to a quote, comma or
 *   backslash;
 * - the value of JSON or Python-style members (`"…"`, `'…'`, or `\"…\"` inside a JSON string) whose
 *   name is or ends with `password`, `passwd`, `pwd`, `passphrase`, `secret`, `token`,
 *   `api_key`/`api-key`/`apikey`, `access_key`/`accessKey`, `account_key`/`AccountKey`,
 *   `private_key`, `authorization`, `cookie` or `credentials` (an encoding suffix allowed:
 *   `private_key_b64`), or is `pass` or `auth` (nodemailer's `auth.pass`, a docker config's `auth`;
 *   also after `_` or `-`: `smtp_pass`), any case (`client_secret`, `refresh_token`,
 *   `session_token`, `aws_secret_access_key`, `SecretAccessKey`, `PASS`, ...): a string, or a bare
 *   value such as a number, written as a string so the JSON stays valid; `null`, booleans, objects
 *   and arrays are kept (an object's own members are redacted by their names);
 * - unquoted settings with such a name, `pass` and `auth` aside (`password: …`, `PGPASSWORD=…`,
 *   `aws_secret_access_key = …`, Azure's `AccountKey=…`, `PRIVATE_KEY_B64=…`): a quoted value
 *   always, a bare value after `=` always, a bare value after `:` when it looks like a credential
 *   (it has a digit or a symbol, or is 20+ characters long), so that "password: Required" or
 *   "Invalid token: expired" is kept;
 * - the password of a netrc entry (`machine h login u password [REDACTED]`, on one line or
 *   several), while "the password is too short" is kept;
 * - the credentials of a URL (`https://[REDACTED]@host/path`, any scheme), and the path of a Slack
 *   or Discord webhook URL (`https://hooks.slack.com/services/[REDACTED]`,
 *   `https://discord.com/api/webhooks/[REDACTED]`, `discordapp.com` too);
 * - PEM private-key blocks (`-----BEGIN … PRIVATE KEY-----` to its END line, or to the end of the
 *   text or quoted string when cut);
 * - JWTs (`eyJ….….…`), with or without `Bearer`;
 * - the value after `Bearer` or `Basic` (6+ characters, after a space or, in a URL, `%20`), and
 *   after `Token` when it looks like a credential (it has a digit or is 20+ characters long), so
 *   "Token expired" is kept;
 * - tokens known by their format (`TOKEN_FORMATS`): `sk-…`/`pk-…`/`rk-…` and `sk_live_…`-style
 *   keys, Stripe `whsec_…`, GitHub (`github_pat_…`, `ghp_…`, `gho_…`, `ghu_…`, `ghs_…`, `ghr_…`),
 *   GitLab (`glpat-…`, `gldt-…`, `glrt-…`, `glptt-…`), Slack (`xoxa-`/`xoxb-`/`xoxp-`/`xoxr-`/`xoxs-…`),
 *   Google (`AIza…` keys, `ya29.…` access tokens), npm (`npm_…`), Hugging Face (`hf_…`), SendGrid
 *   (`SG.….…`) and Vault (`hvs.…`, `hvb.…`, `hvr.…`);
 * - AWS access key ids (`AKIA…`, `ASIA…`) and, in a text that holds one, the 40-character secret
 *   access key beside it (a run of letters, digits, `/` and `+` with upper and lower case letters
 *   and a digit or symbol; a 40-character hex id such as a commit hash is kept);
 * - the value of `key=`, `token=`, `api_key=`, `access_token=`, `secret=`, `password=`, `sig=`,
 *   `auth=`, `authorization=` (`?authorization=Bearer%20…` in a URL) and similar parameters,
 *   prefixed ones (`id_token=`, `x-api-key=`) and encoded ones (`SIGNING_KEY_B64=`) included, the
 *   `=` written `%3D` too.
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

/** The default redactor's rules, in order, on a text without control characters: each where the text holds what it needs. */
function redactSecrets(text: string): string {
  let out = text;
  for (const rule of REDACTION_RULES) if (applies(rule, out)) out = rule.redact(out);
  return out;
}

function applies(rule: RedactionRule, text: string): boolean {
  return rule.needs.every((need) =>
    typeof need === "string" ? text.includes(need) : need instanceof RegExp ? need.test(text) : need.some((part) => text.includes(part)),
  );
}
