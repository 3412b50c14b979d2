import { describe, expect, it } from "vitest";
import type { RetryReflectEvent } from "../src/events.js";
import { consoleLogger, RetryReflectPlugin } from "../src/index.js";
import { cleanErrorText, defaultRedactor } from "../src/primitives.js";
import { createFakeClock } from "../src/testing.js";

// Secrets and control characters never reach a sink: the model text, the structured error,
// the events and the console log. One row per secret shape, one assertion per sink.

interface SecretRow {
  /** What the row is about. */
  readonly shape: string;
  /** A tool's error text holding the secret. */
  readonly text: string;
  /** Every value that must not be seen (each is also checked by its middle twelve characters). */
  readonly secrets: readonly string[];
}

const PEM_BODY = [
  "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7VJTUt9Us8cKj",
  "MzEfYyjiWA4R4/M2bS1GB4t7NXp98C3SC6dVMvDuictGeurT8jNbvJZHtCSuYEvu",
  "NMoSfm76oqFvAp8Gy0iz5sxjZmSnXyCdPEovGhLa0VzMaQ8s+CLOyS56YyCFGeJZ",
];
const PEM_BLOCK = ["-----BEGIN PRIVATE KEY-----", ...PEM_BODY, "-----END PRIVATE KEY-----"].join("\n");
const RSA_BLOCK = ["-----BEGIN RSA PRIVATE KEY-----", ...PEM_BODY, "-----END RSA PRIVATE KEY-----"].join("\n");
const AWS_ID = "AKIAIOSFODNN7EXAMPLE";
const AWS_SESSION_ID = "ASIAY34FZKBOKMUTVV7A";
const AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY";
const AWS_SECRET_2 = "Zq8vL2nR4tY8wZ3bC5dF7gH9jK1mP3sU6xA0eI+o";
const GITHUB_PAT = "github_pat_11ABCDEFG0aBcDeFgHiJkLmN_oPqRsTuVwXyZ0123456789aBcDeFgHiJkLmNoPqRsTuVwXyZ01234567";
const GOOGLE_KEY = "AIzaSyA1b2C3d4E5f6G7h8I9j0KlMnOpQrStUvW";
const NPM_TOKEN = "npm_aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5";
const SLACK_HOOK_PATH = "T0123ABCD/B0456EFGH/aBcDeFgHiJkLmNoPqRsTuVwX";

/** JSON members whose names must be redacted (any case, `-`/`_` variants). */
const SECRET_MEMBER_NAMES = [
  "aws_secret_access_key",
  "secret_access_key",
  "SECRET-ACCESS-KEY",
  "SecretAccessKey",
  "accessKey",
  "access_key",
  "ACCESS-KEY",
  "pwd",
  "PWD",
  "passphrase",
  "pass_phrase",
  "credentials",
  "Credentials",
  "client_secret",
  "client-secret",
  "private_key",
  "privateKey",
  "refresh_token",
  "RefreshToken",
  "session_token",
  "session-token",
  "SessionToken",
];

const ROWS: readonly SecretRow[] = [
  { shape: "GitHub fine-grained token (github_pat_)", text: `GitHub said 401 for ${GITHUB_PAT} (bad credentials)`, secrets: [GITHUB_PAT] },
  ...["ghp", "gho", "ghu", "ghs", "ghr"].map((prefix) => {
    const token = `${prefix}_16C7e42F292c6912E7710c838347Ae178B4a`;
    return { shape: `GitHub token (${prefix}_)`, text: `git push refused: token ${token} revoked`, secrets: [token] };
  }),
  {
    shape: "Google API key (AIza)",
    text: `geocoding found no result for "Springfield" with key ${GOOGLE_KEY}, be more specific`,
    secrets: [GOOGLE_KEY],
  },
  {
    shape: "GitLab token (glpat-)",
    text: "GitLab: branch main is protected (pushed with glpat-xK9mQ2vL7nR4tY8wZ3bC).",
    secrets: ["glpat-xK9mQ2vL7nR4tY8wZ3bC"],
  },
  {
    shape: "npm token (npm_)",
    text: `npm ERR! version 1.2.0 already exists - PUT https://registry.npmjs.org/pkg - ${NPM_TOKEN}`,
    secrets: [NPM_TOKEN],
  },
  ...["xoxa", "xoxb", "xoxp", "xoxr", "xoxs"].map((prefix) => {
    const token = `${prefix}-1234567890-0987654321-aBcDeFgHiJkLmNoP`;
    return { shape: `Slack token (${prefix}-)`, text: `slack: invalid_auth for ${token}`, secrets: [token] };
  }),
  {
    shape: "Slack webhook URL",
    text: `POST https://hooks.slack.com/services/${SLACK_HOOK_PATH} returned 404 no_service`,
    secrets: [SLACK_HOOK_PATH, "aBcDeFgHiJkLmNoPqRsTuVwX"],
  },
  {
    shape: "AWS access key id (AKIA) and the secret beside it",
    text: `InvalidClientTokenId: ${AWS_ID} ${AWS_SECRET} was rejected`,
    secrets: [AWS_ID, AWS_SECRET],
  },
  {
    shape: "AWS temporary key id (ASIA) and its secret after a colon",
    text: `signing with ${AWS_SESSION_ID}:${AWS_SECRET_2} failed: SignatureDoesNotMatch`,
    secrets: [AWS_SESSION_ID, AWS_SECRET_2],
  },
  {
    shape: "AWS credentials file (aws_secret_access_key = …)",
    text: `could not load profile:\n[default]\naws_access_key_id = ${AWS_ID}\naws_secret_access_key = ${AWS_SECRET}\nregion = us-east-1`,
    secrets: [AWS_ID, AWS_SECRET],
  },
  {
    shape: "aws_secret_access_key=… and AWS_SECRET_ACCESS_KEY: … without a key id",
    text: `env check failed: aws_secret_access_key=${AWS_SECRET_2}; AWS_SECRET_ACCESS_KEY: ${AWS_SECRET}`,
    secrets: [AWS_SECRET_2, AWS_SECRET],
  },
  { shape: "PEM private key block", text: `could not parse key:\n${PEM_BLOCK}\nunsupported algorithm`, secrets: PEM_BODY },
  { shape: "PEM RSA private key block", text: `ssh: ${RSA_BLOCK} rejected`, secrets: PEM_BODY },
  {
    shape: "PEM private key cut before its END line",
    text: `key file truncated: -----BEGIN OPENSSH PRIVATE KEY-----\n${PEM_BODY.join("\n")}`,
    secrets: PEM_BODY,
  },
  {
    shape: "PEM private key inside a JSON string",
    text: JSON.stringify({ error: "bad key", key: `-----BEGIN EC PRIVATE KEY-----\n${PEM_BODY.join("\n")}\n-----END EC PRIVATE KEY-----` }),
    secrets: PEM_BODY,
  },
  { shape: "unquoted password: value", text: "login failed with password: hunter2-Qx7 for user bob", secrets: ["hunter2-Qx7"] },
  { shape: "unquoted DB_PASSWORD: value", text: "config: DB_PASSWORD: Tr0ub4dor&3x, DB_USER: app", secrets: ["Tr0ub4dor"] },
  {
    shape: "quoted value after an unquoted password:",
    text: 'yaml: password: "correct-horse-7" is not allowed',
    secrets: ["correct-horse-7"],
  },
  { shape: "password=value", text: "connect: host=db user=app password=s3cr3t-Pw9 dbname=shop", secrets: ["s3cr3t-Pw9"] },
  { shape: "PGPASSWORD=value", text: "psql exited 2: PGPASSWORD=Pg-Secret-4711 psql -h db -U app", secrets: ["Pg-Secret-4711"] },
  {
    shape: "x-goog-api-key header",
    text: "request headers:\nx-goog-api-key: k9Lm2Nq7Rs4Tv8Wx\naccept: */*",
    secrets: ["k9Lm2Nq7Rs4Tv8Wx"],
  },
  { shape: "Cookie header", text: "request headers:\nCookie: session=Ck-77af9b31e0; theme=dark", secrets: ["Ck-77af9b31e0"] },
  { shape: "Set-Cookie header", text: "response: Set-Cookie: sid=Sc-31d4d96e407aad42; Secure; HttpOnly", secrets: ["Sc-31d4d96e407aad42"] },
  ...SECRET_MEMBER_NAMES.map((name, index) => {
    const value = `Mv${index}-9Qz7-Lk2p`;
    return { shape: `JSON member "${name}"`, text: `upstream 400: {"user":"bob","${name}":"${value}","region":"eu"}`, secrets: [value] };
  }),
  {
    shape: "Python-style member 'SecretAccessKey'",
    text: "boto said {'AccessKeyId': 'id-1', 'SecretAccessKey': 'Py-Secret-8841'}",
    secrets: ["Py-Secret-8841"],
  },
  {
    shape: 'JSON member inside a JSON string (\\"passphrase\\")',
    text: JSON.stringify({ body: JSON.stringify({ passphrase: "Nested-Phrase-5521" }) }),
    secrets: ["Nested-Phrase-5521"],
  },
];

/** The value and its middle twelve characters (a partial leak counts). */
function fragments(secret: string): string[] {
  if (secret.length <= 12) return [secret];
  const middle = Math.floor(secret.length / 2);
  return [secret, secret.slice(middle - 6, middle + 6)];
}

function setup(options: Parameters<typeof RetryReflectPlugin.create>[0] = {}) {
  const events: RetryReflectEvent[] = [];
  const lines: string[] = [];
  const plugin = RetryReflectPlugin.create({
    clock: createFakeClock(),
    observers: [{ onEvent: (event) => events.push(event) }, consoleLogger({ write: (line) => lines.push(line) })],
    ...options,
  });
  return { plugin, events, lines };
}

interface Sinks {
  readonly model: string;
  readonly error: unknown;
  readonly events: readonly unknown[];
  readonly console: readonly string[];
}

/**
 * Runs one failing call (thrown, or returned as a structured error) and collects what each sink got:
 * `reflect` with the default retry budget, `failed` with `maxRetries: 0`.
 */
async function sinksOf(fail: () => unknown, status: "reflect" | "failed"): Promise<Sinks> {
  const { plugin, events, lines } = setup(status === "failed" ? { maxRetries: 0 } : {});
  const outcome = await plugin.execute({ toolName: "call_api", args: { id: 1 }, scope: "run" }, fail);
  if (outcome.status !== status) throw new Error(`expected ${status}, got ${outcome.status}`);
  return {
    model: outcome.message,
    error: outcome.error.toJSON(),
    events: events.map((event) => ({ message: event.message, fields: event.fields })),
    console: lines,
  };
}

const thrown = (text: string) => () => {
  throw new Error(text);
};
const returned = (text: string) => () => ({
  error_code: "UPSTREAM_ERROR",
  message: "upstream failed",
  recoverable: true,
  details: { body: text },
});
const suggested = (text: string) => () => ({
  error_code: "UPSTREAM_ERROR",
  message: "upstream failed",
  recoverable: true,
  suggested_action: text,
});

/** Every string in a value (object keys excluded), unescaped. */
function stringsOf(value: unknown): string[] {
  if (typeof value === "string") return [value];
  if (Array.isArray(value)) return value.flatMap(stringsOf);
  if (typeof value === "object" && value !== null) return Object.values(value).flatMap(stringsOf);
  return [];
}

function expectNoSecret(sinks: Sinks, row: SecretRow): void {
  const bySink: Record<string, string> = {
    model: sinks.model,
    error: stringsOf(sinks.error).join("\n"),
    events: stringsOf(sinks.events).join("\n"),
    console: sinks.console.join("\n"),
  };
  for (const [sink, text] of Object.entries(bySink)) {
    for (const secret of row.secrets) {
      for (const fragment of fragments(secret)) expect(text, `${row.shape}: "${fragment}" in ${sink}`).not.toContain(fragment);
    }
  }
  expect(sinks.model, `${row.shape}: the model is told something was redacted`).toContain("[REDACTED]");
  expect(sinks.events.length, `${row.shape}: an event was emitted`).toBeGreaterThan(0);
  expect(sinks.console.length, `${row.shape}: a console line was written`).toBeGreaterThan(0);
}

describe("every secret shape is gone from every sink", () => {
  it.each(ROWS)("$shape: thrown, reflect (model text, structured error, events, console)", async (row) => {
    expectNoSecret(await sinksOf(thrown(row.text), "reflect"), row);
  });

  it.each(ROWS)("$shape: thrown, failed (model text, structured error, events, console)", async (row) => {
    expectNoSecret(await sinksOf(thrown(row.text), "failed"), row);
  });

  it.each(ROWS)("$shape: in a returned error's details and suggested action", async (row) => {
    for (const fail of [returned(row.text), suggested(row.text)]) {
      const sinks = await sinksOf(fail, "reflect");
      const all = [sinks.model, ...stringsOf(sinks.error), ...stringsOf(sinks.events), ...sinks.console].join("\n");
      for (const secret of row.secrets)
        for (const fragment of fragments(secret)) expect(all, `${row.shape}: "${fragment}"`).not.toContain(fragment);
    }
  });

  it.each(ROWS)("$shape: defaultRedactor alone", (row) => {
    const redacted = defaultRedactor(row.text);
    for (const secret of row.secrets) for (const fragment of fragments(secret)) expect(redacted).not.toContain(fragment);
  });
});

describe("what the new rules leave in place", () => {
  it("keeps the text around a secret, and JSON valid", () => {
    expect(defaultRedactor(`token ${GITHUB_PAT} revoked`)).toBe("token [REDACTED] revoked");
    expect(defaultRedactor(`API key not valid: ${GOOGLE_KEY}.`)).toBe("API key not valid: [REDACTED].");
    expect(defaultRedactor("401 for glpat-xK9mQ2vL7nR4tY8wZ3bC.")).toBe("401 for [REDACTED].");
    expect(defaultRedactor(`POST https://hooks.slack.com/services/${SLACK_HOOK_PATH} returned 404`)).toBe(
      "POST https://hooks.slack.com/services/[REDACTED] returned 404",
    );
    expect(defaultRedactor(`rejected ${AWS_ID} ${AWS_SECRET} (403)`)).toBe("rejected [REDACTED] [REDACTED] (403)");
    expect(defaultRedactor(`could not parse:\n${PEM_BLOCK}\nunsupported`)).toBe("could not parse:\n[REDACTED]\nunsupported");
    expect(defaultRedactor("login failed with password: hunter2-Qx7 for bob")).toBe("login failed with password: [REDACTED] for bob");
    expect(defaultRedactor("PGPASSWORD=Pg-Secret-4711 psql")).toBe("PGPASSWORD=[REDACTED] psql");
    expect(defaultRedactor("x-goog-api-key: k9Lm2Nq7Rs4Tv8Wx")).toBe("x-goog-api-key: [REDACTED]");
    const body = JSON.stringify({ user: "bob", SecretAccessKey: "s", pwd: "p", passphrase: "x", credentials: "c", region: "eu" });
    expect(JSON.parse(defaultRedactor(body))).toEqual({
      user: "bob",
      SecretAccessKey: "[REDACTED]",
      pwd: "[REDACTED]",
      passphrase: "[REDACTED]",
      credentials: "[REDACTED]",
      region: "eu",
    });
    const pem = JSON.stringify({ key: `-----BEGIN PRIVATE KEY-----\n${PEM_BODY[0]}`, next: "kept" });
    expect(JSON.parse(defaultRedactor(pem))).toEqual({ key: "[REDACTED]", next: "kept" });
  });

  it("leaves prose and look-alikes alone (no false positives)", () => {
    const prose = [
      "the password is too short",
      "Authorization failed",
      "Token expired",
      "Invalid token: expired",
      "password: Required",
      "password: expected string; received number",
      "password: String must contain at least 8 character(s)",
      "Invalid credentials",
      "invalid passphrase for key file",
      "accessKey is required",
      "missing aws_secret_access_key in profile default",
      "git commit 3f786850e387550fdab836ed7e6dc881de23001b not found",
      "object 3f786850e387550fdab836ed7e6dc881de23001b has no AKIA key",
      "npm_config_cache is not writable",
      "ghp_ tokens are not accepted here",
      "see https://hooks.slack.com/ for the webhook docs",
      "-----BEGIN CERTIFICATE-----\nMIIDdzCCAl+gAwIBAgIEAgAAuTANBgkqhkiG9w0BAQUFADBa\n-----END CERTIFICATE-----",
      "the private key must be PEM encoded",
      '{"field":"pwd","message":"too short"}',
      '{"credentials":null,"accessKey":false}',
      "AIza is a Google key prefix",
    ];
    for (const text of prose) expect(defaultRedactor(text), text).toBe(text);
  });
});

// ---- control characters ----

/** Every character that must not reach a sink: C0 (but tab and newline), DEL and C1, bidi overrides and isolates, U+2028/U+2029. */
const CONTROL_CODES = [
  ...range(0x00, 0x08),
  ...range(0x0b, 0x1f),
  ...range(0x7f, 0x9f),
  ...range(0x202a, 0x202e),
  ...range(0x2066, 0x2069),
  0x2028,
  0x2029,
];
// biome-ignore lint/suspicious/noControlCharactersInRegex: the characters under test.
const FORBIDDEN = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/;
/** A forbidden character escaped by JSON.stringify (C0 controls): its removal must happen before. */
const ESCAPED_CONTROL = /\\u00[01][0-9a-f]|\\[bfr]/i;

function range(from: number, to: number): number[] {
  return Array.from({ length: to - from + 1 }, (_, index) => from + index);
}

function hex(code: number): string {
  return `U+${code.toString(16).toUpperCase().padStart(4, "0")}`;
}

describe("control characters are gone from every sink", () => {
  it("the forbidden set is the documented one", () => {
    expect(CONTROL_CODES).toHaveLength(30 + 33 + 5 + 4 + 2);
    for (const code of CONTROL_CODES) expect(FORBIDDEN.test(String.fromCharCode(code)), hex(code)).toBe(true);
    for (const kept of ["\t", "\n", " ", "é", "\u200b", "\u202f"]) expect(FORBIDDEN.test(kept)).toBe(false);
  });

  it.each(CONTROL_CODES.map((code) => ({ code, name: hex(code) })))("$name: thrown and returned, every sink", async ({ code }) => {
    const char = String.fromCharCode(code);
    const text = `disk${char} full\tnow\nretry later${char}`;
    const routes: [() => unknown, "reflect" | "failed"][] = [
      [thrown(text), "reflect"],
      [thrown(text), "failed"],
      [suggested(text), "reflect"],
    ];
    // In `details` too: its strings (and member names) are copied without them.
    routes.push([returned(text), "reflect"]);
    for (const [fail, status] of routes) {
      const sinks = await sinksOf(fail, status);
      const bySink: Record<string, readonly string[]> = {
        model: [sinks.model],
        error: stringsOf(sinks.error),
        events: stringsOf(sinks.events),
        console: sinks.console,
      };
      for (const [sink, texts] of Object.entries(bySink)) {
        for (const piece of texts) expect(FORBIDDEN.test(piece), `${hex(code)} in ${sink}: ${JSON.stringify(piece)}`).toBe(false);
      }
      for (const line of sinks.console) expect(line, `${hex(code)} escaped in console`).not.toMatch(ESCAPED_CONTROL);
      expect(sinks.model, "the rest of the text is kept").toContain("retry later");
    }
  });

  it("C0 controls inside a returned error's `details` (values and member names) never reach a sink, not even JSON-escaped", async () => {
    const sinks = await sinksOf(
      () => ({ error_code: "UPSTREAM_ERROR", message: "upstream failed", recoverable: true, details: { "na\u0000me": "a\u0000b\u001bc" } }),
      "reflect",
    );
    expect(sinks.model).toContain('"details":{"name":"abc"}');
    expect(JSON.stringify(sinks.error)).not.toMatch(/\\u00(0|1)[0-9a-f]/);
  });

  it("keeps tab and newline", () => {
    expect(cleanErrorText("a\tb\nc", { maxLength: 100, redact: defaultRedactor })).toBe("a\tb\nc");
  });

  it("removes them, CRLF becoming a newline", () => {
    const clean = (text: string) => cleanErrorText(text, { maxLength: 100, redact: (t) => t });
    expect(clean("a\r\nb")).toBe("a\nb");
    expect(clean("invoice\u202e fdp.exe")).toBe("invoice fdp.exe");
    expect(clean("\u001b[31mred\u001b[0m")).toBe("[31mred[0m");
    expect(clean("nul\u0000byte\u0085next\u2028line")).toBe("nulbytenextline");
    expect(defaultRedactor("bidi \u2066isolate\u2069 and \u0007bell")).toBe("bidi isolate and bell");
  });

  it("removes them before redaction, so that a secret split by one is still found", () => {
    const clean = (text: string) => cleanErrorText(text, { maxLength: 200, redact: defaultRedactor });
    expect(clean("key sk-\u0000abcdefghijklmnopqrstuv rejected")).toBe("key [REDACTED] rejected");
    expect(clean(`id ${AWS_ID.slice(0, 4)}\u202e${AWS_ID.slice(4)} denied`)).toBe("id [REDACTED] denied");
  });

  it("removes them after a custom redactor too", () => {
    const cleaned = cleanErrorText("plain text", { maxLength: 100, redact: (text) => `${text}\u202e\u0000` });
    expect(cleaned).toBe("plain text");
  });
});

// ---- linear time, bounded stack ----

describe("the new rules stay linear on 1 MB adversarial input", () => {
  const MB = 1_000_000;
  const fill = (unit: string) => unit.repeat(Math.ceil(MB / unit.length)).slice(0, MB);
  const inputs: Record<string, string> = {
    "many BEGIN headers, no END": fill("-----BEGIN PRIVATE KEY-----\n"),
    "BEGIN then a long body, no END": `-----BEGIN PRIVATE KEY-----${fill("A")}`,
    "almost-BEGIN headers": fill("-----BEGIN RSA PRIVATE KE"),
    "many END lines": `-----BEGIN PRIVATE KEY-----${fill("-----END RSA PRIVAT")}`,
    "one long base64 run beside a key id": `${AWS_ID} ${fill("aB3/")}`,
    "many 40-character runs beside a key id": `${AWS_ID} ${fill(`${AWS_SECRET}A`)}`,
    "key ids back to back": fill(AWS_ID),
    "github_pat_ prefixes": fill("github_pat_"),
    "a long github_pat_": `github_pat_${fill("a")}`,
    "AIza prefixes": fill("AIza"),
    "glpat- dotted": `glpat-${fill("abcdefghijklmnopqrstu.")}`,
    "npm_ prefixes": fill("npm_"),
    "xoxs- prefixes": fill("xoxs-"),
    "Slack webhook prefixes": fill("hooks.slack.com/services/"),
    "password: chains": fill("password:"),
    "password: with long values": `password: ${fill("a")}`,
    "long name ending in password": `${fill("a_")}password: x1`,
    "long name, no separator": `${fill("a")}: x1`,
    "x-goog-api-key headers": fill("x-goog-api-key:"),
    "PGPASSWORD= chains": fill("PGPASSWORD="),
    "secret member names": fill('"SecretAccessKey":"'),
    "member names, unterminated": fill('"credentials'),
    "backslash runs": fill("\\"),
    "escaped quotes before names": fill('\\\\\\"passphrase'),
    "deeply escaped member, unterminated": `\\\\\\"pwd\\\\\\":\\\\\\"${fill("\\\\a")}`,
    "escaped newlines before names": fill("\\npassword:\\tAKIA"),
    "an escape before every letter": fill("\\a"),
    "an escape before every hyphenated word": fill("\\na-b-c-d-e-f-g-h="),
    "password: with an unterminated quote": `password: "${fill("a")}`,
    "password: with an unterminated escaped quote": `password: \\"${fill("a\\")}`,
    "control characters": fill("\u0000\u202e\u2028"),
    "control characters between words": fill("a\u0085"),
  };
  it("a private key block of 16 MB is redacted (not one regular expression: no stack overflow)", () => {
    const body = fill("MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7VJTUt9Us8cKj\n").repeat(16);
    expect(defaultRedactor(`key:\n-----BEGIN PRIVATE KEY-----\n${body}-----END PRIVATE KEY-----\nnext`)).toBe("key:\n[REDACTED]\nnext");
  });

  it("fails closed: a text its rules cannot scan (V8 regular expressions out of stack) is hidden, not thrown or passed on", () => {
    const huge = `Bearer ${"a".repeat(16 * MB)}`;
    expect(() => "x".concat(huge).replace(/[a-z]{6,}/g, "")).toThrow(RangeError);
    expect(defaultRedactor(huge)).toBe("[REDACTED]");
    expect(cleanErrorText(huge, { maxLength: 8 * MB, redact: defaultRedactor })).toBe("[REDACTED]");
  });

  it.each(Object.entries(inputs))("%s", (_name, input) => {
    // Process CPU time, not the wall clock: a loaded machine's waits do not count.
    const before = process.cpuUsage();
    const redacted = defaultRedactor(input);
    const cleaned = cleanErrorText(input, { maxLength: MB, redact: defaultRedactor });
    const used = process.cpuUsage(before);
    const elapsed = (used.user + used.system) / 1000;
    expect(typeof redacted).toBe("string");
    expect(typeof cleaned).toBe("string");
    // A quadratic rule takes minutes on 1 MB; a linear one well under a second even on a slow runner.
    expect(elapsed, `took ${elapsed.toFixed(0)} ms of CPU`).toBeLessThan(1_500);
  });
});
