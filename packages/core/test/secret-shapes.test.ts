import { describe, expect, it } from "vitest";
import type { CallEnd, RetryReflectEvent } from "../src/events.js";
import { consoleLogger, type RetryReflectOptions, RetryReflectPlugin, ToolError } from "../src/index.js";
import { defaultRedactor } from "../src/primitives.js";
import { createFakeClock, drive } from "../src/testing.js";
import { leaksOf, SECRET_SHAPES, type SecretShape } from "./helpers/secret-shapes.js";

// The secret shapes of issue 50 never reach a sink of the core: the model text of `reflect` and
// `failed` outcomes, the structured error JSON, the events, `consoleLogger()` and the error an
// observer's `onCallEnd` gets (what the otel package records). Each row goes through a real plugin,
// in a thrown error's message, in a thrown ToolError's details and in a returned error's details and
// suggested action. (The otel and mcp sinks: packages/otel/test/secret-shapes.test.ts and
// packages/mcp/test/structured-tool-error.test.ts, on the same table.)

interface Sinks {
  readonly status: string;
  readonly bySink: Record<string, string>;
}

/** Every string in a value (object keys excluded), unescaped. */
function stringsOf(value: unknown): string[] {
  if (typeof value === "string") return [value];
  if (Array.isArray(value)) return value.flatMap(stringsOf);
  if (typeof value === "object" && value !== null) return Object.values(value).flatMap(stringsOf);
  return [];
}

/** One failing call through a real plugin, and what each sink got. */
async function sinksOf(tool: () => unknown, options: RetryReflectOptions = {}): Promise<Sinks> {
  const events: RetryReflectEvent[] = [];
  const ends: CallEnd[] = [];
  const lines: string[] = [];
  const clock = createFakeClock();
  const plugin = RetryReflectPlugin.create({
    clock,
    observers: [
      { onEvent: (event) => events.push(event), onCallEnd: (_call, end) => void ends.push(end) },
      consoleLogger({ write: (line) => lines.push(line) }),
    ],
    ...options,
  });
  const outcome = await drive(clock, plugin.execute({ toolName: "call_api", args: { id: 1 }, scope: "run" }, tool));
  if (outcome.status === "success") throw new Error("expected a failure outcome");
  return {
    status: outcome.status,
    bySink: {
      "model text": outcome.message,
      "structured error JSON": JSON.stringify(outcome.error.toJSON()),
      "structured error strings": stringsOf(outcome.error.toJSON()).join("\n"),
      events: stringsOf(events.map((event) => ({ message: event.message, fields: event.fields }))).join("\n"),
      "consoleLogger()": lines.join("\n"),
      "onCallEnd error": stringsOf(ends.map((end) => end.error?.toJSON())).join("\n"),
    },
  };
}

function expectNoLeak(row: SecretShape, sinks: Sinks, route: string): void {
  for (const [sink, text] of Object.entries(sinks.bySink)) expect(leaksOf(row, text), `${route}: ${sink}`).toEqual([]);
  expect(sinks.bySink["model text"], `${route}: the model is told something was redacted`).toContain("[REDACTED]");
}

const routes: Record<string, { tool: (row: SecretShape) => () => unknown; options?: RetryReflectOptions; status?: string }> = {
  "thrown message": {
    tool: (row) => () => {
      throw new Error(row.text);
    },
  },
  "thrown message, no retries left (failed)": {
    tool: (row) => () => {
      throw new Error(row.text);
    },
    options: { maxRetries: 0 },
    status: "failed",
  },
  "thrown ToolError's message and details": {
    tool: (row) => () => {
      throw new ToolError({ code: "UPSTREAM_ERROR", message: row.text, recoverable: true, details: { request: row.value } });
    },
    status: "reflect",
  },
  "returned error's details and suggested action (reflect)": {
    tool: (row) => () => ({
      error_code: "UPSTREAM_ERROR",
      message: "upstream failed",
      recoverable: true,
      suggested_action: row.text,
      details: { body: row.text, request: row.value },
    }),
    status: "reflect",
  },
  "returned error, not recoverable (failed)": {
    tool: (row) => () => ({ error_code: "UPSTREAM_ERROR", message: row.text, recoverable: false, details: { request: row.value } }),
    status: "failed",
  },
};

describe("the secret shapes of issue 50 are absent from every core sink", () => {
  it.each(SECRET_SHAPES)("$shape", async (row) => {
    let consoleLines = "";
    for (const [route, { tool, options, status }] of Object.entries(routes)) {
      const sinks = await sinksOf(tool(row), options);
      if (status !== undefined) expect(sinks.status, route).toBe(status);
      expectNoLeak(row, sinks, route);
      consoleLines += sinks.bySink["consoleLogger()"];
    }
    // A retry or an exhausted call is logged (a failure that is not recoverable is not): the console was a sink.
    expect(consoleLines).toContain("[REDACTED]");
  });

  it.each(SECRET_SHAPES)("$shape: defaultRedactor alone, on the text and on the value's JSON", (row) => {
    expect(leaksOf(row, defaultRedactor(row.text))).toEqual([]);
    expect(leaksOf(row, defaultRedactor(JSON.stringify(row.value)))).toEqual([]);
    // Inside a JSON string (a returned error's details, serialized): quotes and line breaks escaped.
    expect(leaksOf(row, defaultRedactor(JSON.stringify({ body: row.text })))).toEqual([]);
  });
});

describe("what the issue 50 rules replace, and what they leave", () => {
  it("replaces the secret only: the text around it stays, and JSON stays JSON", () => {
    const cases: [string, string][] = [
      [
        "AccountName=a;AccountKey=Zm9vYmFyYmF6cXV4+/==;EndpointSuffix=core.windows.net",
        "AccountName=a;AccountKey=[REDACTED];EndpointSuffix=core.windows.net",
      ],
      ["accountKey: Zm9vYmFyYmF6cXV4+/==", "accountKey: [REDACTED]"],
      ["ocp-apim-subscription-key: 0123456789abcdef0123456789abcdef", "ocp-apim-subscription-key: [REDACTED]"],
      [
        "POST https://canary.discord.com/api/webhooks/123/abc-DEF_456 failed",
        "POST https://canary.discord.com/api/webhooks/[REDACTED] failed",
      ],
      ["GET /cb?authorization%3DBearer%2520abc123def456 failed", "GET /cb?authorization%3D[REDACTED] failed"],
      ["GET /items?auth=Bearer%20abc123def456 failed", "GET /items?auth=[REDACTED] failed"],
      ["header was Bearer%20abc123def456", "header was Bearer%20[REDACTED]"],
      ["SIGNING_KEY_BASE64=c2VjcmV0 and TOKEN_B64=dG9rZW4= set", "SIGNING_KEY_BASE64=[REDACTED] and TOKEN_B64=[REDACTED] set"],
      [
        "machine a.example login u password p1 machine b.example password p2",
        "machine a.example login u password [REDACTED] machine b.example password [REDACTED]",
      ],
      ["default login anonymous password guest@example.com", "default login anonymous password [REDACTED]"],
      ["renew hvb.AAAAAQKmLbZ2xGfC7vT0s1Rw9yPj then hvr.AAAAAQKmLbZ2xGfC7vT0s1Rw9yPj", "renew [REDACTED] then [REDACTED]"],
    ];
    for (const [text, redacted] of cases) expect(defaultRedactor(text), text).toBe(redacted);
  });

  it('redacts the member "pass" in any case and quoting, and after `_` or `-`; its objects and booleans are kept', () => {
    const body = JSON.stringify({ PASS: "a1", Pass: 42, smtp_pass: "b2", "db-pass": "c3", pass: { nested: "kept" }, bypass: "kept" });
    expect(JSON.parse(defaultRedactor(body))).toEqual({
      PASS: "[REDACTED]",
      Pass: "[REDACTED]",
      smtp_pass: "[REDACTED]",
      "db-pass": "[REDACTED]",
      pass: { nested: "kept" },
      bypass: "kept",
    });
    expect(defaultRedactor("{'user': 'bob', 'pass': 'Py-7x'}")).toBe("{'user': 'bob', 'pass': '[REDACTED]'}");
    expect(JSON.parse(defaultRedactor('{"auth":"dXNlcjpwdw==","auths":{},"oauth":"on","basic_auth":"YTpi"}'))).toEqual({
      auth: "[REDACTED]",
      auths: {},
      oauth: "on",
      basic_auth: "[REDACTED]",
    });
  });

  it("leaves prose and look-alikes alone", () => {
    const prose = [
      "the password is too short",
      "Enter your password and try again",
      "login failed: password incorrect",
      "the default password is too weak",
      "machine learning model failed: password required",
      "contact the team at SG.",
      "SG. 1234 is not a key",
      "hf_hub_download failed: repository not found",
      "set HF_TOKEN or pass hf_ prefixed tokens",
      "ya29. tokens expire after an hour",
      "whsec_ secrets are shown in the Stripe dashboard",
      "hvs. is the prefix of Vault service tokens",
      "see https://discord.com/developers/docs/resources/webhook",
      "AccountKey is required",
      "AccountKey: required",
      "Ocp-Apim-Subscription-Key header is missing",
      '{"pass":true,"bypass":"yes","compass":"north","passes":3}',
      '{"auth":null,"oauth":"enabled","authors":"me"}',
      "2 of 5 tests pass: retry",
      "KEY_B64 must be set",
    ];
    for (const text of prose) expect(defaultRedactor(text), text).toBe(text);
  });
});

describe("the issue 50 rules stay linear on 1 MB adversarial input", () => {
  const MB = 1_000_000;
  const fill = (unit: string) => unit.repeat(Math.ceil(MB / unit.length)).slice(0, MB);
  const inputs: Record<string, string> = {
    "machine chains": fill("machine "),
    "netrc pairs, no password": `machine h${fill(" login u")}`,
    "netrc words named like keywords": `machine ${fill("login ")}`,
    "default login chains": fill("default login u "),
    "escaped netrc separators": `machine h${fill("\\n login u")}`,
    "SG. prefixes": fill("SG."),
    "SG. with a long first part": `SG.${fill("a")}`,
    "hf_ prefixes": fill("hf_"),
    "ya29. prefixes": fill("ya29."),
    "whsec_ prefixes": fill("whsec_"),
    "hvs. prefixes": fill("hvs."),
    "Discord webhook prefixes": fill("discord.com/api/webhooks/"),
    "%3D chains": fill("token%3D"),
    "Bearer%20 chains": fill("Bearer%20"),
    "pass member names, unterminated": fill('"pass'),
    "separated pass names": fill('"a_pass_pass'),
    "key_b64 names": fill("a_key_b64"),
    "AccountKey chains": fill("AccountKey="),
    "Ocp-Apim headers": fill("Ocp-Apim-Subscription-Key:"),
  };

  it.each(Object.entries(inputs))("%s", (_name, input) => {
    // Process CPU time, not the wall clock: a loaded machine's waits do not count.
    const before = process.cpuUsage();
    const redacted = defaultRedactor(input);
    const used = process.cpuUsage(before);
    const elapsed = (used.user + used.system) / 1000;
    expect(typeof redacted).toBe("string");
    // A quadratic rule takes minutes on 1 MB; a linear one well under a second even on a slow runner.
    expect(elapsed, `took ${elapsed.toFixed(0)} ms of CPU`).toBeLessThan(1_500);
  });
});
