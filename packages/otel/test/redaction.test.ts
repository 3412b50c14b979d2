import { SpanStatusCode } from "@opentelemetry/api";
import type { ReadableSpan } from "@opentelemetry/sdk-trace-base";
import { InvalidOptionError, RetryReflectPlugin } from "@retry-reflect/core";
import { createFakeClock } from "@retry-reflect/core/testing";
import { afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { openTelemetryObserver } from "../src/index.js";
import { makeCall, makeEnd } from "./helpers/fake-calls.js";
import { createTelemetry, installContextManager, type Telemetry } from "./helpers/telemetry-harness.js";

// Secrets and control characters never reach a span, a span event, a span status or a log record,
// captured content included; with `errorText: "code-only"`, no error text at all does.
// The secret shapes are the core's (packages/core/test/redactor-secrets.test.ts), one row each.

let telemetry: Telemetry;
beforeAll(installContextManager);
beforeEach(() => {
  telemetry = createTelemetry();
});
afterEach(() => telemetry.shutdown());

interface SecretRow {
  readonly shape: string;
  /** A text holding the secret. */
  readonly text: string;
  /** Values that must not be seen (each also by its middle twelve characters). */
  readonly secrets: readonly string[];
}

const PEM_BODY = [
  "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7VJTUt9Us8cKj",
  "MzEfYyjiWA4R4/M2bS1GB4t7NXp98C3SC6dVMvDuictGeurT8jNbvJZHtCSuYEvu",
];
const AWS_ID = "AKIAIOSFODNN7EXAMPLE";
const AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY";
const GITHUB_PAT = "github_pat_11ABCDEFG0aBcDeFgHiJkLmN_oPqRsTuVwXyZ0123456789aBcDeFgHiJkLmNoPqRsTuVwXyZ01234567";
const GOOGLE_KEY = "AIzaSyA1b2C3d4E5f6G7h8I9j0KlMnOpQrStUvW";
const NPM_TOKEN = "npm_aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5";
const SLACK_HOOK_PATH = "T0123ABCD/B0456EFGH/aBcDeFgHiJkLmNoPqRsTuVwX";

const MEMBER_NAMES = [
  "aws_secret_access_key",
  "secret_access_key",
  "SecretAccessKey",
  "accessKey",
  "pwd",
  "passphrase",
  "credentials",
  "client_secret",
  "private_key",
  "refresh_token",
  "session_token",
  "Session-Token",
];

const ROWS: readonly SecretRow[] = [
  { shape: "github_pat_", text: `push with ${GITHUB_PAT} rejected`, secrets: [GITHUB_PAT] },
  { shape: "ghp_", text: "token ghp_16C7e42F292c6912E7710c838347Ae178B4a rejected", secrets: ["ghp_16C7e42F292c6912E7710c838347Ae178B4a"] },
  { shape: "AIza", text: `geocoding found nothing with key ${GOOGLE_KEY}`, secrets: [GOOGLE_KEY] },
  { shape: "glpat-", text: "branch protected (pushed with glpat-xK9mQ2vL7nR4tY8wZ3bC)", secrets: ["glpat-xK9mQ2vL7nR4tY8wZ3bC"] },
  { shape: "npm_", text: `version exists - ${NPM_TOKEN}`, secrets: [NPM_TOKEN] },
  {
    shape: "xoxs-",
    text: "slack: channel_not_found for xoxs-1234567890-0987654321-aBcDeFgH",
    secrets: ["xoxs-1234567890-0987654321-aBcDeFgH"],
  },
  { shape: "Slack webhook", text: `POST https://hooks.slack.com/services/${SLACK_HOOK_PATH} gave no_service`, secrets: [SLACK_HOOK_PATH] },
  { shape: "AKIA and its secret", text: `signing with ${AWS_ID} ${AWS_SECRET} failed`, secrets: [AWS_ID, AWS_SECRET] },
  {
    shape: "ASIA and its secret",
    text: `signing with ASIAY34FZKBOKMUTVV7A:${AWS_SECRET} failed`,
    secrets: ["ASIAY34FZKBOKMUTVV7A", AWS_SECRET],
  },
  { shape: "aws_secret_access_key = …", text: `profile:\naws_secret_access_key = ${AWS_SECRET}\nregion = eu`, secrets: [AWS_SECRET] },
  {
    shape: "PEM private key",
    text: `bad key:\n-----BEGIN RSA PRIVATE KEY-----\n${PEM_BODY.join("\n")}\n-----END RSA PRIVATE KEY-----`,
    secrets: PEM_BODY,
  },
  { shape: "PEM private key, cut", text: `cut: -----BEGIN PRIVATE KEY-----\n${PEM_BODY.join("\n")}`, secrets: PEM_BODY },
  { shape: "password: x", text: "login failed with password: hunter2-Qx7 for bob", secrets: ["hunter2-Qx7"] },
  { shape: "PGPASSWORD=", text: "psql exited 2: PGPASSWORD=Pg-Secret-4711 psql -h db", secrets: ["Pg-Secret-4711"] },
  { shape: "x-goog-api-key", text: "headers:\nx-goog-api-key: k9Lm2Nq7Rs4Tv8Wx\naccept: */*", secrets: ["k9Lm2Nq7Rs4Tv8Wx"] },
  { shape: "Cookie", text: "headers:\nCookie: session=Ck-77af9b31e0; theme=dark", secrets: ["Ck-77af9b31e0"] },
  ...MEMBER_NAMES.map((name, index) => {
    const value = `Mv${index}-9Qz7-Lk2p`;
    return { shape: `member "${name}"`, text: `upstream 400: {"user":"bob","${name}":"${value}"}`, secrets: [value] };
  }),
];

/** The value and its middle twelve characters (a partial leak counts). */
function fragments(secret: string): string[] {
  if (secret.length <= 12) return [secret];
  const middle = Math.floor(secret.length / 2);
  return [secret, secret.slice(middle - 6, middle + 6)];
}

function observer(options: Parameters<typeof openTelemetryObserver>[0] = {}) {
  return openTelemetryObserver({ tracerProvider: telemetry.tracerProvider, loggerProvider: telemetry.loggerProvider, ...options });
}

/** Every string a span and the log records hold, by sink: attributes, events, status, log records. */
function sinks(span: ReadableSpan): Record<string, string[]> {
  const records = telemetry.logExporter.getFinishedLogRecords();
  return {
    "span attributes": Object.values(span.attributes).filter((value): value is string => typeof value === "string"),
    "span events": span.events.flatMap((event) => [event.name, ...Object.values(event.attributes ?? {}).map(String)]),
    "span status": [span.status.message ?? ""],
    "log records": records.flatMap((record) => [String(record.body), ...Object.values(record.attributes).map(String)]),
  };
}

function expectNoSecret(span: ReadableSpan, row: SecretRow): void {
  for (const [sink, texts] of Object.entries(sinks(span))) {
    const text = texts.join("\n");
    for (const secret of row.secrets) {
      for (const fragment of fragments(secret)) expect(text, `${row.shape}: "${fragment}" in ${sink}`).not.toContain(fragment);
    }
  }
}

/** One call through the real plugin that fails for good (`maxRetries: 0`): a retries-exhausted event, a span status. */
async function failThroughPlugin(text: string, options: Parameters<typeof openTelemetryObserver>[0] = {}) {
  const plugin = RetryReflectPlugin.create({ maxRetries: 0, clock: createFakeClock(), observers: [observer(options)] });
  const outcome = await plugin.execute({ toolName: "call_api", args: {}, scope: "run" }, () => {
    throw new Error(text);
  });
  expect(outcome.status).toBe("failed");
  return telemetry.span("execute_tool call_api");
}

/** A call the observer sees end with something thrown out of `execute` (status `error`). */
function endWithThrown(thrown: unknown, options: Parameters<typeof openTelemetryObserver>[0] = {}) {
  const observe = observer(options);
  const call = makeCall("call_api");
  observe.onCallStart?.(call);
  observe.onCallEnd?.(call, makeEnd({ status: "error", thrown }));
  return telemetry.span("execute_tool call_api");
}

/** A call with content capture on: these arguments, this result. */
function captureContent(args: unknown, value: unknown, options: Parameters<typeof openTelemetryObserver>[0] = {}) {
  const observe = observer({ captureContent: true, ...options });
  const call = makeCall("call_api", { args });
  observe.onCallStart?.(call);
  observe.onCallEnd?.(call, makeEnd({ status: "success", value }));
  return telemetry.span("execute_tool call_api");
}

describe("every secret shape is gone from every OTel sink", () => {
  it.each(ROWS)("$shape: a failure through the plugin (span events, span status, log records)", async (row) => {
    const span = await failThroughPlugin(row.text);
    expect(span.status.code).toBe(SpanStatusCode.ERROR);
    expect(span.status.message).toContain("[REDACTED]");
    expect(span.events.some((event) => event.name === "retries exhausted")).toBe(true);
    expect(telemetry.logExporter.getFinishedLogRecords().length).toBeGreaterThan(0);
    expectNoSecret(span, row);
  });

  it.each(ROWS)("$shape: thrown out of execute (span status, exception event)", (row) => {
    const span = endWithThrown(new Error(row.text));
    expect(span.status.code).toBe(SpanStatusCode.ERROR);
    expect(span.events.map((event) => event.name)).toEqual(["exception"]);
    expectNoSecret(span, row);
  });

  it.each(ROWS)("$shape: captured arguments and result", (row) => {
    const span = captureContent({ query: row.text, page: 2 }, { body: row.text, status: "ok" });
    expect(span.attributes["gen_ai.tool.call.arguments"]).toContain('"page":2');
    expect(span.attributes["gen_ai.tool.call.result"]).toContain('"status":"ok"');
    expectNoSecret(span, row);
    telemetry.spanExporter.reset();
    const text = captureContent(row.text, row.text);
    expectNoSecret(text, row);
  });
});

describe("captureContent: values pass through the redactor", () => {
  it("secret-named fields and known token shapes are redacted; the rest is kept, as JSON", () => {
    const args = { city: "nyc", api_key: "k-3f9a2b7c", token: "t-8e1d4c", auth: { password: "hunter2", user: "bob" } };
    const result = { temperature: 21, session_token: "s-77aa", note: `signed ${AWS_ID}` };
    const span = captureContent(args, result);
    expect(JSON.parse(span.attributes["gen_ai.tool.call.arguments"] as string)).toEqual({
      city: "nyc",
      api_key: "[REDACTED]",
      token: "[REDACTED]",
      auth: { password: "[REDACTED]", user: "bob" },
    });
    expect(JSON.parse(span.attributes["gen_ai.tool.call.result"] as string)).toEqual({
      temperature: 21,
      session_token: "[REDACTED]",
      note: "signed [REDACTED]",
    });
  });

  it("redacts before it cuts: a secret at the cut is not left half-visible", () => {
    // Cut first, `{"pad":"ppp","token":"tok-01…[truncated]` would show the key's start.
    const span = captureContent({ pad: "ppp", token: "tok-0123456789abcdef" }, "ok", { maxContentLength: 40 });
    const args = span.attributes["gen_ai.tool.call.arguments"] as string;
    expect(args.length).toBeLessThanOrEqual(40);
    expect(args).not.toMatch(/tok-|0123/);
    expect(args).toBe('{"pad":"ppp","token":"[REDACTED]"}');
  });

  it("the idempotency key is still left out, and prose is kept", () => {
    const span = captureContent({ idempotency_key: "idem-1", message: "the password is too short" }, "Token expired");
    expect(span.attributes["gen_ai.tool.call.arguments"]).toBe(JSON.stringify({ message: "the password is too short" }));
    expect(span.attributes["gen_ai.tool.call.result"]).toBe("Token expired");
  });
});

// ---- control characters ----

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

function range(from: number, to: number): number[] {
  return Array.from({ length: to - from + 1 }, (_, index) => from + index);
}

function expectNoControl(span: ReadableSpan, label: string): void {
  for (const [sink, texts] of Object.entries(sinks(span))) {
    for (const text of texts) expect(FORBIDDEN.test(text), `${label} in ${sink}: ${JSON.stringify(text)}`).toBe(false);
  }
}

describe("control characters are gone from every OTel sink", () => {
  it.each(CONTROL_CODES.map((code) => ({ code, name: `U+${code.toString(16).toUpperCase().padStart(4, "0")}` })))(
    "$name: through the plugin, thrown out of execute, and in captured content",
    async ({ code, name }) => {
      const char = String.fromCharCode(code);
      const text = `disk${char} full${char}\tretry later`;
      expectNoControl(await failThroughPlugin(text), `${name} (plugin)`);
      telemetry.spanExporter.reset();
      telemetry.logExporter.reset();
      const thrown = endWithThrown(new Error(text));
      expectNoControl(thrown, `${name} (thrown)`);
      expect(thrown.status.message).toContain("retry later");
      telemetry.spanExporter.reset();
      const content = captureContent(text, { body: text });
      expectNoControl(content, `${name} (content)`);
      expect(content.attributes["gen_ai.tool.call.arguments"]).toContain("retry later");
    },
  );
});

// ---- errorText: "code-only" ----

describe('errorText: "code-only"', () => {
  const SECRET_FREE_TEXT = "Invalid units. Supported: celsius, fahrenheit";

  it("a failure through the plugin: codes only, no error text on spans, events, status or log records", async () => {
    const span = await failThroughPlugin(SECRET_FREE_TEXT, { errorText: "code-only" });
    expect(span.status).toEqual({ code: SpanStatusCode.ERROR });
    expect(span.attributes).toMatchObject({ "error.type": "RETRIES_EXHAUSTED", "retry_reflect.error_code": "RETRIES_EXHAUSTED" });
    const exhausted = span.events.find((event) => event.name === "retries exhausted");
    expect(exhausted?.attributes).toEqual({
      "gen_ai.tool.name": "call_api",
      "retry_reflect.attempts": 1,
      "retry_reflect.retry_after_ms": 60_000,
    });
    const records = telemetry.logExporter.getFinishedLogRecords();
    expect(records.map((record) => [record.body, { ...record.attributes }])).toEqual([
      ["retries exhausted", { "gen_ai.tool.name": "call_api", "retry_reflect.attempts": 1, "retry_reflect.retry_after_ms": 60_000 }],
    ]);
    for (const texts of Object.values(sinks(span))) expect(texts.join("\n")).not.toMatch(/Invalid units|celsius/);
  });

  it("the default (redacted) keeps the cleaned text", async () => {
    const span = await failThroughPlugin(SECRET_FREE_TEXT);
    expect(span.status.message).toContain(SECRET_FREE_TEXT);
    expect(span.events.find((event) => event.name === "retries exhausted")?.attributes?.["retry_reflect.error"]).toBe(SECRET_FREE_TEXT);
  });

  it("a retry event keeps its code and loses its text", async () => {
    const plugin = RetryReflectPlugin.create({ clock: createFakeClock(), observers: [observer({ errorText: "code-only" })] });
    const outcome = await plugin.execute({ toolName: "call_api", args: {}, scope: "run" }, () => {
      throw new Error(SECRET_FREE_TEXT);
    });
    expect(outcome.status).toBe("reflect");
    const span = telemetry.span("execute_tool call_api");
    expect(span.events.map((event) => ({ ...event.attributes }))).toEqual([
      {
        "gen_ai.tool.name": "call_api",
        "retry_reflect.attempt": 1,
        "retry_reflect.max": 3,
        "retry_reflect.backoff_ms": 500,
        "retry_reflect.error_code": "INVALID_ARGUMENTS",
        "retry_reflect.mode": "reflect",
      },
    ]);
  });

  it("something thrown out of execute: its type only, no message or stack", () => {
    const thrown = Object.assign(new TypeError(`tool is not a function ${GITHUB_PAT}`), { code: "ERR_INVALID_ARG_TYPE" });
    const span = endWithThrown(thrown, { errorText: "code-only" });
    expect(span.status).toEqual({ code: SpanStatusCode.ERROR });
    expect(span.attributes["error.type"]).toBe("TypeError");
    expect(span.events.map((event) => [event.name, { ...event.attributes }])).toEqual([
      ["exception", { "exception.type": "ERR_INVALID_ARG_TYPE" }],
    ]);
  });

  it('"redacted" keeps a thrown error\'s type, code, cleaned message and stack', () => {
    const thrown = Object.assign(new TypeError(`tool is not a function ${GITHUB_PAT}`), { code: "ERR_INVALID_ARG_TYPE" });
    const span = endWithThrown(thrown);
    expect(span.status).toEqual({ code: SpanStatusCode.ERROR, message: "tool is not a function [REDACTED]" });
    const exception = span.events[0]?.attributes ?? {};
    expect(exception["exception.type"]).toBe("ERR_INVALID_ARG_TYPE");
    expect(exception["exception.message"]).toBe("tool is not a function [REDACTED]");
    expect(exception["exception.stacktrace"]).toMatch(/^TypeError: tool is not a function \[REDACTED\]\n\s+at /);
  });

  it("content capture is its own choice: still recorded (redacted) with code-only", () => {
    const span = captureContent({ city: "nyc", token: "t-1" }, { ok: true }, { errorText: "code-only" });
    expect(span.attributes["gen_ai.tool.call.arguments"]).toBe('{"city":"nyc","token":"[REDACTED]"}');
  });

  it("an invalid errorText throws the core's InvalidOptionError naming the option and the value", () => {
    for (const value of ["raw", "", "Redacted", true, 0]) {
      let caught: unknown;
      try {
        openTelemetryObserver({ errorText: value as "redacted" });
      } catch (error) {
        caught = error;
      }
      expect(caught).toBeInstanceOf(InvalidOptionError);
      expect(caught).toMatchObject({ option: "errorText", value });
      expect((caught as Error).message).toContain("`errorText`");
    }
    expect(() => openTelemetryObserver({ errorText: "redacted" })).not.toThrow();
    expect(() => openTelemetryObserver({ errorText: undefined })).not.toThrow();
  });
});
