/** A token known by its format: a fixed prefix, then the real format's characters and length. */
interface TokenFormat {
  /** Whose token it is. */
  readonly issuer: string;
  /** The prefix, as a regular expression's source. */
  readonly prefix: string;
  /** What follows the prefix, as a regular expression's source. */
  readonly rest: string;
}

/**
 * Tokens the default redactor removes wherever they stand, by their format. The lengths and
 * character sets are the issuers' own, so that prose or an identifier that merely starts like one
 * (`hf_hub_download`, "SG." ending a sentence, `npm_config_cache`) is kept.
 */
export const TOKEN_FORMATS: readonly TokenFormat[] = [
  { issuer: "OpenAI and others (`sk-…`, `pk-…`, `rk-…`)", prefix: "(?:sk|pk|rk)-", rest: "(?:[A-Za-z0-9_]+-)*[A-Za-z0-9_]{8,}" },
  { issuer: "Stripe keys (`sk_live_…`, `pk_test_…`, `rk_live_…`)", prefix: "(?:sk|pk|rk)_(?:live|test)_", rest: "[A-Za-z0-9]{8,}" },
  { issuer: "Stripe webhook signing secrets (`whsec_…`)", prefix: "whsec_", rest: "[A-Za-z0-9+/]{24,}={0,2}" },
  { issuer: "GitHub fine-grained tokens (`github_pat_…`)", prefix: "github_pat_", rest: "[A-Za-z0-9_]{20,}" },
  { issuer: "GitHub tokens (`ghp_`, `gho_`, `ghu_`, `ghs_`, `ghr_`)", prefix: "gh[pousr]_", rest: "[A-Za-z0-9]{16,}" },
  {
    issuer: "GitLab tokens (`glpat-`, `gldt-`, `glrt-`, `glptt-`)",
    prefix: "gl(?:pat|dt|rt|ptt)-",
    rest: "[0-9A-Za-z_-]{20,}(?:\\.[0-9A-Za-z_-]+)*",
  },
  { issuer: "Slack tokens (`xoxa-`, `xoxb-`, `xoxp-`, `xoxr-`, `xoxs-`)", prefix: "xox[abprs]-", rest: "[A-Za-z0-9-]{10,}" },
  { issuer: "Google API keys (`AIza…`)", prefix: "AIza", rest: "[0-9A-Za-z_-]{30,}" },
  { issuer: "Google OAuth access tokens (`ya29.…`)", prefix: "ya29\\.", rest: "[0-9A-Za-z_-]{20,}" },
  { issuer: "npm tokens (`npm_…`)", prefix: "npm_", rest: "[A-Za-z0-9]{30,}" },
  { issuer: "Hugging Face tokens (`hf_` and 34 letters)", prefix: "hf_", rest: "[A-Za-z0-9]{34}(?![A-Za-z0-9])" },
  { issuer: "SendGrid API keys (`SG.` 22 `.` 43)", prefix: "SG\\.", rest: "[A-Za-z0-9_-]{22}\\.[A-Za-z0-9_-]{43}" },
  { issuer: "HashiCorp Vault tokens (`hvs.`, `hvb.`, `hvr.`)", prefix: "hv[sbr]\\.", rest: "[A-Za-z0-9_-]{24,}" },
];

/** Any of the formats, where a token may start (not inside a word; right after an escape such as `\n`). */
export const KNOWN_TOKEN = new RegExp(
  `(?<!(?<!\\\\)[A-Za-z0-9_-])(?:${TOKEN_FORMATS.map((format) => format.prefix + format.rest).join("|")})`,
  "g",
);

/** A prefix of one of the formats is in the text (the rule's cheap precondition). */
export const KNOWN_TOKEN_PREFIX = new RegExp(TOKEN_FORMATS.map((format) => format.prefix).join("|"));
