/** An AWS access key id: `AKIA…` (long-term) or `ASIA…` (temporary), 20 characters. */
const AWS_KEY_ID = /(?<!(?<!\\)[A-Za-z0-9_])(?:AKIA|ASIA)[0-9A-Z]{16}(?![A-Za-z0-9])/g;

/** A 40-character run that may be an AWS secret access key (base64: letters, digits, `/`, `+`). */
const AWS_SECRET_CANDIDATE = /(?<!(?<!\\)[A-Za-z0-9/+])[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=])/g;

/**
 * AWS access key ids (`AKIA…`, `ASIA…`) and, when the text held one, its 40-character secret
 * access keys: runs of letters, digits, `/` and `+` with upper and lower case letters and a digit or
 * symbol (a 40-character hex id, such as a commit hash, is kept).
 */
export function redactAwsKeys(text: string): string {
  const out = text.replace(AWS_KEY_ID, "[REDACTED]");
  if (out === text) return text;
  return out.replace(AWS_SECRET_CANDIDATE, (run) => (looksLikeAwsSecret(run) ? "[REDACTED]" : run));
}

/** Random base64 has both cases and a digit or symbol; a hex digest or a word run has not. */
function looksLikeAwsSecret(run: string): boolean {
  return /[A-Z]/.test(run) && /[a-z]/.test(run) && /[0-9/+]/.test(run);
}
