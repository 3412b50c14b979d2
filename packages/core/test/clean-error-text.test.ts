import { describe, expect, it } from "vitest";
import { cleanErrorText, defaultRedactor, errorMessageOf } from "../src/index.js";

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
    expect(defaultRedactor("401 for Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.abc-DEF_123")).toBe(
      "401 for Authorization: Bearer [REDACTED]",
    );
    expect(defaultRedactor("sent basic dXNlcjpwYXNzd29yZA== upstream")).toBe("sent basic [REDACTED] upstream");
  });

  it("redacts sk-... API keys, project keys with - and _ included", () => {
    expect(defaultRedactor("Incorrect API key provided: sk-abcdefghijklmnopqrstuvwxyz012345.")).toBe("Incorrect API key provided: [REDACTED].");
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
    expect(defaultRedactor("https://x.test/cb?id_token=eyJhbGciOi.payload.sig&state=1")).toBe("https://x.test/cb?id_token=[REDACTED]&state=1");
    expect(defaultRedactor("https://x.test/q?auth_token=abcdef123")).toBe("https://x.test/q?auth_token=[REDACTED]");
    expect(defaultRedactor("x-api-key=abcdef123 rejected")).toBe("x-api-key=[REDACTED] rejected");
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
    const huge = ("Bearer abcdefghijklmnop " + "z".repeat(1_000) + "\n    at f (a.js:1:2)\n").repeat(10_000);
    expect(huge.length).toBeGreaterThan(10_000_000);
    const started = performance.now();
    const cleaned = clean(huge, 1000);
    const elapsed = performance.now() - started;
    expect(cleaned.length).toBeLessThanOrEqual(1000);
    expect(cleaned.endsWith("… [truncated]")).toBe(true);
    expect(cleaned.startsWith("Bearer [REDACTED] zzz")).toBe(true);
    expect(cleaned).not.toContain("abcdefghijklmnop");
    // Bounded work: only a prefix is examined. Generous bound, far below a full scan's regex cost.
    expect(elapsed).toBeLessThan(500);
  });

  it("does not leave a secret half-visible at the cut", () => {
    const text = "a".repeat(60) + " key=" + "s".repeat(200);
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

describe("cleanErrorText: pathological input stays fast", () => {
  it("long hyphenated words, sk- chains and unclosed frames with a large cap", () => {
    const inputs = [
      "a-".repeat(100_000),
      "sk-a".repeat(50_000),
      "x_".repeat(100_000) + "=",
      "at " + "a".repeat(200_000),
      ("Bearer " + "b".repeat(5)).repeat(20_000),
    ];
    const started = performance.now();
    for (const input of inputs) {
      const cleaned = clean(input, 100_000);
      expect(cleaned.length).toBeLessThanOrEqual(100_000);
    }
    expect(performance.now() - started).toBeLessThan(1_000);
  });
});
