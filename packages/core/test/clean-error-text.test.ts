import { describe, expect, it } from "vitest";
import { cleanErrorText, defaultRedactor, errorMessageOf } from "../src/primitives.js";

const clean = (text: string, maxLength = 1000, redact: (text: string) => string = defaultRedactor) =>
  cleanErrorText(text, { maxLength, redact });

describe("cleanErrorText: stack traces", () => {
  it("strips V8 stack-frame lines and keeps the message", () => {
    const error = new Error("Invalid units. Supported: celsius, fahrenheit");
    expect(error.stack).toContain("\n    at ");
    expect(clean(error.stack ?? "")).toBe("Error: Invalid units. Supported: celsius, fahrenheit");
  });

  it("strips every frame form: named, anonymous, async, new, native, file URLs", () => {
    const text = [
      "TypeError: fetch failed",
      "    at node:internal/deps/undici/undici:13502:13",
      "    at async getWeather (file:///app/src/tools/weather.ts:12:5)",
      "    at new Client (/app/node_modules/client/index.js:40:11)",
      "    at Array.map (<anonymous>)",
      "    at Promise.all (index 0)",
      "\tat process.processTicksAndRejections (node:internal/process/task_queues:95:5)",
      "caused by: connect ECONNREFUSED 127.0.0.1:8080",
      "    at TCPConnectWrap.afterConnect [as oncomplete] (node:net:1555:16)",
    ].join("\n");
    expect(clean(text)).toBe("TypeError: fetch failed\ncaused by: connect ECONNREFUSED 127.0.0.1:8080");
  });

  it("keeps message lines that merely start with the word 'at'", () => {
    expect(clean("at least one of city or zip is required")).toBe("at least one of city or zip is required");
    expect(clean("Validation failed:\nat most 5 recipients are allowed\nattachments must be PDF")).toBe(
      "Validation failed:\nat most 5 recipients are allowed\nattachments must be PDF",
    );
  });

  it("keeps a short clean message as it is", () => {
    expect(clean("Invalid units. Supported: celsius, fahrenheit")).toBe("Invalid units. Supported: celsius, fahrenheit");
  });
});

describe("defaultRedactor", () => {
  it("redacts bearer and basic credentials", () => {
    expect(defaultRedactor("401: Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.abc-DEF_123 rejected")).toBe(
      "401: Bearer [REDACTED] rejected",
    );
    expect(defaultRedactor("upstream said 401 with Bearer abcdefghijklmnop")).toBe("upstream said 401 with Bearer [REDACTED]");
    // As a header, the whole value goes, the scheme with it.
    expect(defaultRedactor("401 for Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.abc-DEF_123")).toBe(
      "401 for Authorization: [REDACTED]",
    );
    expect(defaultRedactor("sent basic dXNlcjpwYXNzd29yZA== upstream")).toBe("sent basic [REDACTED] upstream");
  });

  it("redacts sk-... API keys, project keys with - and _ included", () => {
    expect(defaultRedactor("Incorrect API key provided: sk-abcdefghijklmnopqrstuvwxyz012345.")).toBe(
      "Incorrect API key provided: [REDACTED].",
    );
    const projectKey = "sk-proj-Ab3_xY-9kLmNoPqRsTuV_wXyZ0123456789-abcdEFGH";
    const redacted = defaultRedactor(`key ${projectKey} rejected`);
    expect(redacted).not.toContain("9kLmNoPqRsTuV");
    expect(redacted).not.toContain("wXyZ0123456789");
    expect(redacted).toBe("key [REDACTED] rejected");
    expect(defaultRedactor("anthropic key sk-ant-api03-AbCdEfGh12345678 denied")).toBe("anthropic key [REDACTED] denied");
  });

  it("redacts key=, token= and api_key= query values and leaves the rest of the URL", () => {
    expect(defaultRedactor("GET https://api.example.com/v1/weather?city=nyc&key=abc123secret&units=kelvin failed")).toBe(
      "GET https://api.example.com/v1/weather?city=nyc&key=[REDACTED]&units=kelvin failed",
    );
    expect(defaultRedactor("https://x.test/cb?token=t0k3n-value")).toBe("https://x.test/cb?token=[REDACTED]");
    expect(defaultRedactor("https://x.test/q?api_key=AKv8s9d&page=2")).toBe("https://x.test/q?api_key=[REDACTED]&page=2");
    expect(defaultRedactor("https://x.test/q?access_token=ya29.a0Af&x=1")).toBe("https://x.test/q?access_token=[REDACTED]&x=1");
  });

  it("redacts prefixed secret parameters such as id_token= and x-api-key=", () => {
    expect(defaultRedactor("https://x.test/cb?id_token=eyJhbGciOi.payload.sig&state=1")).toBe(
      "https://x.test/cb?id_token=[REDACTED]&state=1",
    );
    expect(defaultRedactor("https://x.test/q?auth_token=abcdef123")).toBe("https://x.test/q?auth_token=[REDACTED]");
    expect(defaultRedactor("x-api-key=abcdef123 rejected")).toBe("x-api-key=[REDACTED] rejected");
  });

  it("redacts a JWT without a Bearer prefix", () => {
    const jwt = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjMifQ.abc_DEF-123";
    expect(defaultRedactor(`token ${jwt}`)).toBe("token [REDACTED]");
    expect(defaultRedactor(`invalid JWT ${jwt} for user 42`)).toBe("invalid JWT [REDACTED] for user 42");
    expect(defaultRedactor(`{"jwt":"${jwt}","user":"bob"}`)).toBe('{"jwt":"[REDACTED]","user":"bob"}');
    expect(defaultRedactor(`session=${jwt}; Path=/`)).toBe("session=[REDACTED]; Path=/");
  });

  it("redacts the credentials of a URL and keeps its host", () => {
    expect(defaultRedactor("GET https://user:pass@api.example.com/v1/items failed")).toBe(
      "GET https://[REDACTED]@api.example.com/v1/items failed",
    );
    expect(defaultRedactor("connect postgres://admin:s3cr%40t@db.internal:5432/app refused")).toBe(
      "connect postgres://[REDACTED]@db.internal:5432/app refused",
    );
    expect(defaultRedactor("redis://:hunter2@cache:6379")).toBe("redis://[REDACTED]@cache:6379");
    // A password with an unescaped @: everything up to the last @ before the host.
    expect(defaultRedactor("amqp://guest:p@ss@queue/vhost")).toBe("amqp://[REDACTED]@queue/vhost");
    expect(defaultRedactor('{"url":"https://bot:tok3n@hooks.example.com/x"}')).toBe('{"url":"https://[REDACTED]@hooks.example.com/x"}');
  });

  it("redacts secret header values to the end of the line, keeping the header name", () => {
    expect(defaultRedactor("Authorization: Basic dXNlcjpwYXNz")).toBe("Authorization: [REDACTED]");
    expect(defaultRedactor("authorization: sometoken")).toBe("authorization: [REDACTED]");
    expect(defaultRedactor("X-Api-Key: abc123")).toBe("X-Api-Key: [REDACTED]");
    expect(defaultRedactor("Proxy-Authorization:Basic Zm9vOmJhcg==")).toBe("Proxy-Authorization:[REDACTED]");
    expect(defaultRedactor("request headers:\nCookie: session=abc; theme=dark\nAccept: */*")).toBe(
      "request headers:\nCookie: [REDACTED]\nAccept: */*",
    );
    // The carriage return is a control character: removed, so CRLF becomes a newline.
    expect(defaultRedactor("Set-Cookie: sid=31d4d96e407aad42; Secure\r\nContent-Type: text/html")).toBe(
      "Set-Cookie: [REDACTED]\nContent-Type: text/html",
    );
  });

  it("ends a header value at a closing quote or comma, and keeps what follows", () => {
    expect(defaultRedactor('{"error":"rejected header Authorization: Bearer abcdef123456","status":401}')).toBe(
      '{"error":"rejected header Authorization: [REDACTED]","status":401}',
    );
    expect(defaultRedactor("sent X-Api-Key: abc123, Accept: application/json")).toBe(
      "sent X-Api-Key: [REDACTED], Accept: application/json",
    );
    expect(defaultRedactor("'authorization: sometoken' was refused")).toBe("'authorization: [REDACTED]' was refused");
    // Inside a JSON string, an escaped quote or newline ends the value and stays intact.
    expect(defaultRedactor('{"detail":"header \\"Cookie: a=b\\" invalid\\nnext"}')).toBe(
      '{"detail":"header \\"Cookie: [REDACTED]\\" invalid\\nnext"}',
    );
  });

  it("redacts secret-named fields of a JSON error body, keeping it valid JSON", () => {
    expect(defaultRedactor('{"password":"hunter2","user":"bob"}')).toBe('{"password":"[REDACTED]","user":"bob"}');
    const body =
      '{ "client_secret" : "cs_9f8e", "access_token":"ya29.A0", "refresh_token": "1//0g", "id_token":"x", "api_key":"k1", ' +
      '"apiKey":"k2", "APIKEY":"k3", "x-api-key":"k4", "Authorization":"Basic Zm9v", "passwd":"p", "secret":"s", "token":"t", "scope":"read" }';
    const redacted = defaultRedactor(body);
    expect(JSON.parse(redacted)).toEqual({
      client_secret: "[REDACTED]",
      access_token: "[REDACTED]",
      refresh_token: "[REDACTED]",
      id_token: "[REDACTED]",
      api_key: "[REDACTED]",
      apiKey: "[REDACTED]",
      APIKEY: "[REDACTED]",
      "x-api-key": "[REDACTED]",
      Authorization: "[REDACTED]",
      passwd: "[REDACTED]",
      secret: "[REDACTED]",
      token: "[REDACTED]",
      scope: "read",
    });
  });

  it("redacts a JSON string value with escaped quotes in full", () => {
    expect(defaultRedactor('{"password":"hun\\"ter\\\\2","user":"bob"}')).toBe('{"password":"[REDACTED]","user":"bob"}');
  });

  it("redacts non-string JSON values as a string, and leaves null and booleans", () => {
    expect(defaultRedactor('{"token": 12345, "retry": true}')).toBe('{"token": "[REDACTED]", "retry": true}');
    expect(JSON.parse(defaultRedactor('{"pin_token":-1.5e3}'))).toEqual({ pin_token: "[REDACTED]" });
    expect(defaultRedactor('{"token":null,"secret":false}')).toBe('{"token":null,"secret":false}');
  });

  it("redacts secret fields in Python-style dicts and in JSON encoded inside a JSON string", () => {
    expect(defaultRedactor("{'password': 'x', 'user': 'bob'}")).toBe("{'password': '[REDACTED]', 'user': 'bob'}");
    expect(defaultRedactor("{'api_key': b'abc', 'n': 1}")).toBe("{'api_key': '[REDACTED]', 'n': 1}");
    const nested = JSON.stringify({ error: JSON.stringify({ password: "hunter2", user: "bob" }) });
    expect(JSON.parse(JSON.parse(defaultRedactor(nested)).error)).toEqual({ password: "[REDACTED]", user: "bob" });
  });

  it("redacts an unterminated secret string to the end of the line (a cut body)", () => {
    expect(defaultRedactor('{"user":"bob","password":"hunter2')).toBe('{"user":"bob","password":"[REDACTED]"');
  });

  it("redacts a Token value only when it looks like a credential", () => {
    expect(defaultRedactor("Token expired")).toBe("Token expired");
    expect(defaultRedactor("Token revoked by the administrator")).toBe("Token revoked by the administrator");
    expect(defaultRedactor("sent Token 9f86d081884c7d65 upstream")).toBe("sent Token [REDACTED] upstream");
    expect(defaultRedactor("sent token abcdefghijklmnopqrstuvwx upstream")).toBe("sent token [REDACTED] upstream");
  });

  it("leaves prose about passwords, tokens and authorization alone", () => {
    const prose = [
      "Invalid units. Supported: celsius, fahrenheit",
      "Token expired",
      "the password is too short",
      "Authorization failed",
      "at least one field is required",
      "password: String must contain at least 8 character(s)",
      "Invalid token: expired",
      "see https://docs.example.com/errors#auth or mail support@example.com",
      '{"field":"password","message":"too short"}',
      '{"password":["This password is too common."]}',
      '{"usage":{"prompt_tokens":12,"completion_tokens":3},"token_type":"bearer"}',
      "Cookie policy not accepted; authorization header missing",
    ];
    for (const text of prose) expect(defaultRedactor(text)).toBe(text);
  });

  it("leaves ordinary text alone", () => {
    const text = "Invalid units. Supported: celsius, fahrenheit (monkey=banana, risk-assessment-report, task-1234567890)";
    expect(defaultRedactor(text)).toBe(text);
  });
});

describe("cleanErrorText: redaction", () => {
  it("redacts with the default redactor", () => {
    expect(clean("upstream said 401 with Bearer abcdefghijklmnop")).toBe("upstream said 401 with Bearer [REDACTED]");
  });

  it("uses a custom redactor instead of the default", () => {
    const redact = (text: string) => text.replace(/customer-\d+/g, "customer-***");
    // The custom redactor replaces the default one: a bearer token is left to it.
    expect(clean("customer-42 not found (Bearer abcdefghijklmnop)", 1000, redact)).toBe("customer-*** not found (Bearer abcdefghijklmnop)");
  });

  it("falls back to the default redactor when the custom one throws", () => {
    const redact = () => {
      throw new Error("redactor bug");
    };
    expect(clean("failed with key=supersecret", 1000, redact)).toBe("failed with key=[REDACTED]");
  });

  it("falls back to the default redactor when the custom one returns a non-string", () => {
    const redact = (() => undefined) as unknown as (text: string) => string;
    expect(clean("failed with key=supersecret", 1000, redact)).toBe("failed with key=[REDACTED]");
  });
});

describe("cleanErrorText: length", () => {
  it("cuts a long text to maxLength and marks it as cut", () => {
    const cleaned = clean("x".repeat(5_000), 100);
    expect(cleaned).toHaveLength(100);
    expect(cleaned.endsWith("… [truncated]")).toBe(true);
    expect(cleaned.startsWith("xxxx")).toBe(true);
  });

  it("does not mark a text that fits exactly", () => {
    expect(clean("y".repeat(100), 100)).toBe("y".repeat(100));
  });

  it("handles a 10 MB message quickly, capped with the truncation mark", () => {
    const huge = `Bearer abcdefghijklmnop ${"z".repeat(1_000)}\n    at f (a.js:1:2)\n`.repeat(10_000);
    expect(huge.length).toBeGreaterThan(10_000_000);
    let cleaned = "";
    const elapsed = cpuMs(() => {
      cleaned = clean(huge, 1000);
    });
    expect(cleaned.length).toBeLessThanOrEqual(1000);
    expect(cleaned.endsWith("… [truncated]")).toBe(true);
    expect(cleaned.startsWith("Bearer [REDACTED] zzz")).toBe(true);
    expect(cleaned).not.toContain("abcdefghijklmnop");
    // Bounded work: only a prefix is examined. Generous bound (CPU ms), far below a full scan's regex cost.
    expect(elapsed).toBeLessThan(500);
  });

  it("does not leave a secret half-visible at the cut", () => {
    const text = `${"a".repeat(60)} key=${"s".repeat(200)}`;
    const cleaned = clean(text, 100);
    expect(cleaned).not.toContain("sss");
    expect(cleaned.length).toBeLessThanOrEqual(100);
  });
});

describe("errorMessageOf", () => {
  it("returns a string as it is", () => {
    expect(errorMessageOf("Invalid units")).toBe("Invalid units");
  });

  it("describes undefined and null", () => {
    expect(errorMessageOf(undefined)).toBe("the tool failed without an error message (undefined)");
    expect(errorMessageOf(null)).toBe("the tool failed without an error message (null)");
  });

  it("uses an Error's message, or its name when the message is empty", () => {
    expect(errorMessageOf(new RangeError("units out of range"))).toBe("units out of range");
    expect(errorMessageOf(new Error())).toBe("Error");
    expect(errorMessageOf(new TypeError(""))).toBe("TypeError");
  });

  it("reads a plain object's message", () => {
    expect(errorMessageOf({ message: "quota exceeded", code: 42 })).toBe("quota exceeded");
  });

  it("joins the text parts of an MCP-style result", () => {
    const result = {
      isError: true,
      content: [
        { type: "text", text: "Invalid units." },
        { type: "image", data: "..." },
        { type: "text", text: "Supported: celsius, fahrenheit" },
      ],
    };
    expect(errorMessageOf(result)).toBe("Invalid units.\nSupported: celsius, fahrenheit");
  });

  it("serialises other objects as JSON, with BigInts as strings", () => {
    expect(errorMessageOf({ status: "down", retries: 3n })).toBe('{"status":"down","retries":"3"}');
  });

  it("survives a circular object", () => {
    const circular: Record<string, unknown> = { reason: "loop" };
    circular.self = circular;
    expect(errorMessageOf(circular)).toBe('{"reason":"loop","self":"[Circular]"}');
  });

  it("survives an object whose getters throw", () => {
    const hostile = {
      get message(): string {
        throw new Error("getter exploded");
      },
      get content(): unknown {
        throw new Error("getter exploded");
      },
    };
    expect(() => errorMessageOf(hostile)).not.toThrow();
    expect(typeof errorMessageOf(hostile)).toBe("string");
  });

  it("survives a proxy that throws on every access", () => {
    const proxy = new Proxy(
      {},
      {
        get() {
          throw new Error("no");
        },
        ownKeys() {
          throw new Error("no");
        },
      },
    );
    expect(() => errorMessageOf(proxy)).not.toThrow();
  });

  it("describes numbers, booleans, symbols and functions", () => {
    expect(errorMessageOf(404)).toBe("404");
    expect(errorMessageOf(false)).toBe("false");
    expect(errorMessageOf(Symbol("boom"))).toBe("Symbol(boom)");
    expect(errorMessageOf(function fetchWeather() {})).toContain("fetchWeather");
    expect(errorMessageOf(10n)).toBe("10");
  });
});

/** CPU milliseconds `run` takes (process CPU time, not the wall clock: a loaded machine's waits do not count). */
function cpuMs(run: () => void): number {
  const before = process.cpuUsage();
  run();
  const used = process.cpuUsage(before);
  return (used.user + used.system) / 1000;
}

// Linear, not quadratic: a super-linear rule on these 100,000-200,000-character inputs takes
// minutes of CPU (4e10 steps), a linear one milliseconds; the bounds sit far from both.
describe("cleanErrorText: pathological input stays fast", () => {
  it("long hyphenated words, sk- chains and unclosed frames with a large cap", () => {
    const inputs = [
      "a-".repeat(100_000),
      "sk-a".repeat(50_000),
      `${"x_".repeat(100_000)}=`,
      `at ${"a".repeat(200_000)}`,
      `Bearer ${"b".repeat(5)}`.repeat(20_000),
    ];
    const used = cpuMs(() => {
      for (const input of inputs) expect(clean(input, 100_000).length).toBeLessThanOrEqual(100_000);
    });
    expect(used).toBeLessThan(3_000);
  });

  it("each redaction rule stays linear on long adversarial input", () => {
    const inputs = [
      "a:".repeat(100_000),
      '"password":"'.repeat(16_000),
      "'password': '".repeat(15_000),
      '\\"token\\":\\"'.repeat(15_000),
      `${'"x'.repeat(50_000)}_token":${"1".repeat(100_000)}`,
      `${"a_".repeat(100_000)}password`,
      "eyJ".repeat(70_000),
      "eyJa.".repeat(40_000),
      `eyJ${"a".repeat(100_000)}.${"b".repeat(100_000)}`,
      "a://".repeat(50_000),
      `https://${"u".repeat(200_000)}`,
      `${"x".repeat(200_000)}://`,
      "Authorization:".repeat(15_000),
      "authorization".repeat(15_000),
      "Token ".repeat(35_000),
      `Token ${"a".repeat(200_000)}`,
    ];
    for (const input of inputs) {
      let redacted: unknown;
      const used = cpuMs(() => {
        redacted = defaultRedactor(input);
      });
      expect(typeof redacted).toBe("string");
      expect(used, `${JSON.stringify(input.slice(0, 20))}... took ${used.toFixed(0)} ms of CPU`).toBeLessThan(1_000);
    }
  });
});
