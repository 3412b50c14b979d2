// The secret shapes of issue 50 (DESIGN.md Part 4: "The redactor also removes"), one row each, as a
// tool, a server or a log line would hold them. The core, otel and mcp tests feed every row through
// every sink they reach: one table, so that a shape added here is checked everywhere. Plain data,
// no imports: the otel and mcp tests import this file by its path.

export interface SecretShape {
  /** What the row is about. */
  readonly shape: string;
  /** A tool's error text holding the secret. */
  readonly text: string;
  /** Arguments or a result holding it (captured content, a returned error's `details`). */
  readonly value: Record<string, unknown>;
  /** The secret's distinctive parts: none may appear in any sink (each also by its middle twelve characters). */
  readonly secrets: readonly string[];
}

const AZURE_KEY = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==";
const APIM_KEY = "9f8e7d6c5b4a39281706f5e4d3c2b1a0";
const GOOGLE_ACCESS_TOKEN = "ya29.a0AfB_byC3kLmN0pQrStUvWxYz1234567890AbCdEfGhIjKlMnOpQrStUvWxYz-_aBcD";
const DISCORD_TOKEN = "xP3vK9mQ2wL7nR4tY8zB5cD1fG6hJ0kS-aE_uI2oW9qN3rT7yU4pM8vX6bZ1cF5gH0jK";
const STRIPE_WEBHOOK_SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
const HUGGING_FACE_TOKEN = "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";
const SENDGRID_KEY = "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";
const DOCKER_AUTH = "YWxpY2U6czNjcjN0LVRva2VuLTQ3MTE="; // alice:s3cr3t-Token-4711
const OPAQUE_BEARER = "opaq7Tk.Zx9-Lm2Qw4Er6Ty8Ui0";
const NETRC_PASSWORD = "N3trc-Pw-8841x";
const KEY_B64 = "LS0tLS1CRUdJTiBQUklWQVRFIEtFWS0tLS0tCk1JSUV2UUlCQURBTkJna3Foa2lHOXcwQkFRRUZBQVND";
const VAULT_TOKEN = "hvs.CAESIJ7Fz8kLm3Qx9Rt2Vw5Yb8Nc4Pd6Sf1Gh3Jk7Lm9Np0GiAKHGh2cy5aWXk3UzBqcVl4";
const SMTP_PASS = "Sm7p-Pass-9931q";

/** A row whose value is its text in a field (JSON-escaped once when serialized). */
function row(shape: string, text: string, secrets: readonly string[], value: Record<string, unknown> = { output: text }): SecretShape {
  return { shape, text, value, secrets };
}

export const SECRET_SHAPES: readonly SecretShape[] = [
  row(
    "Azure storage connection string (AccountKey=)",
    `Azure Storage: container "invoices" not found using DefaultEndpointsProtocol=https;AccountName=acmestore;AccountKey=${AZURE_KEY};EndpointSuffix=core.windows.net`,
    [AZURE_KEY.slice(0, 40), AZURE_KEY.slice(40, 86)],
  ),
  row(
    "Azure API Management header (Ocp-Apim-Subscription-Key:)",
    `403 quota exceeded for this subscription.\nrequest headers:\nOcp-Apim-Subscription-Key: ${APIM_KEY}\naccept: application/json`,
    [APIM_KEY],
  ),
  row("Google OAuth access token (ya29.)", `Google Sheets API 404: spreadsheet not found (sent ${GOOGLE_ACCESS_TOKEN})`, [
    GOOGLE_ACCESS_TOKEN.slice(5),
  ]),
  row(
    "Discord webhook URL (discord.com)",
    `POST https://discord.com/api/webhooks/1234567890123456789/${DISCORD_TOKEN} returned 404 Unknown Webhook`,
    [DISCORD_TOKEN],
  ),
  row(
    "Discord webhook URL (discordapp.com, versioned)",
    `POST https://discordapp.com/api/v10/webhooks/1234567890123456789/${DISCORD_TOKEN}?wait=true returned 429`,
    [DISCORD_TOKEN],
  ),
  row(
    "Stripe webhook signing secret (whsec_)",
    `No signatures found matching the expected signature for payload; check ${STRIPE_WEBHOOK_SECRET} against the dashboard`,
    [STRIPE_WEBHOOK_SECRET.slice(6)],
  ),
  row("Hugging Face token (hf_)", `Repository not found for model acme/llama-7b with ${HUGGING_FACE_TOKEN} (gated repo)`, [
    HUGGING_FACE_TOKEN.slice(3),
  ]),
  row("SendGrid API key (SG.)", `SendGrid 400: from address not verified, sent with ${SENDGRID_KEY}.`, [SENDGRID_KEY.slice(3)]),
  row(
    'docker config "auth" member',
    `docker pull failed: no basic auth credentials in {"auths":{"registry.example.com":{"auth":"${DOCKER_AUTH}"}}}`,
    [DOCKER_AUTH.slice(0, -1)],
    { auths: { "registry.example.com": { auth: DOCKER_AUTH } } },
  ),
  row(
    "authorization=Bearer%20… in a URL",
    `GET https://api.example.com/v1/items?limit=10&authorization=Bearer%20${OPAQUE_BEARER}&page=2 returned 404`,
    [OPAQUE_BEARER],
  ),
  row("netrc entry on one line (password X)", `could not use ~/.netrc: machine api.example.com login bob password ${NETRC_PASSWORD}`, [
    NETRC_PASSWORD,
  ]),
  row("netrc entry over lines", `curl: (67) from ~/.netrc:\nmachine ftp.example.com\n  login deploy\n  password ${NETRC_PASSWORD}\n`, [
    NETRC_PASSWORD,
  ]),
  row("*_KEY_B64= environment assignment", `env check failed: PRIVATE_KEY_B64=${KEY_B64} NODE_ENV=production`, [
    KEY_B64.slice(0, 40),
    KEY_B64.slice(40),
  ]),
  row("Vault token (hvs.)", `Vault: permission denied on secret/data/payments for ${VAULT_TOKEN} (policy default)`, [VAULT_TOKEN.slice(4)]),
  row(
    'JSON member "pass" (nodemailer auth.pass)',
    `Invalid login: 535 Authentication failed for {"host":"smtp.example.com","auth":{"user":"mailer","pass":"${SMTP_PASS}"}}`,
    [SMTP_PASS],
    { host: "smtp.example.com", port: 465, auth: { user: "mailer", pass: SMTP_PASS } },
  ),
];

/** The value and its middle twelve characters (a partial leak counts). */
export function fragments(secret: string): string[] {
  if (secret.length <= 12) return [secret];
  const middle = Math.floor(secret.length / 2);
  return [secret, secret.slice(middle - 6, middle + 6)];
}

/** The fragments of a row's secrets found in `text`: none, when nothing leaked. */
export function leaksOf(row: SecretShape, text: string): string[] {
  return row.secrets.flatMap(fragments).filter((fragment) => text.includes(fragment));
}
