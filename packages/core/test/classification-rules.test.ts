import { describe, expect, it } from "vitest";
import { ErrorCodes, RetryReflectPlugin, ToolError } from "../src/index.js";
import { classifyError, DEFAULT_SUGGESTED_ACTIONS, retryAfterMsOf } from "../src/primitives.js";
import { createFakeClock } from "../src/testing.js";

// The classification rules of DESIGN Part 2 ("Per-tool policies and the resilience options users
// expect"): an HTTP status in the error text, Retry-After in more places, credential errors, and
// faults in the tool's own code.

describe("as users met them: the engine's decision", () => {
  it("a plain Error('HTTP 503 Service Unavailable') is retried in place, not reflected", async () => {
    const clock = createFakeClock();
    const plugin = RetryReflectPlugin.create({ clock });
    let calls = 0;
    const outcome = plugin.execute({ toolName: "get_weather", args: { city: "Paris" } }, () => {
      calls++;
      if (calls === 1) throw new Error("HTTP 503 Service Unavailable");
      return "sunny";
    });
    await clock.runAll();
    expect(await outcome).toMatchObject({ status: "success", value: "sunny", attempt: 2 });
    expect(calls).toBe(2);
  });

  it("Error('Invalid API key') stops as not recoverable, tells the model the tool is not authorised, counts for the breaker", async () => {
    const plugin = RetryReflectPlugin.create({ clock: createFakeClock(), circuitBreakerThreshold: 2 });
    let calls = 0;
    const tool = () => {
      calls++;
      throw new Error("Invalid API key");
    };
    const first = await plugin.execute({ toolName: "get_weather", args: { city: "Paris" }, scope: "a" }, tool);
    expect(calls).toBe(1);
    expect(first.status).toBe("failed");
    if (first.status !== "failed") return;
    expect(first.reason).toBe("not_recoverable");
    expect(first.error.code).toBe("UNAUTHORIZED");
    expect(first.message).toContain(DEFAULT_SUGGESTED_ACTIONS.UNAUTHORIZED);
    await plugin.execute({ toolName: "get_weather", args: { city: "Paris" }, scope: "b" }, tool);
    expect(plugin.circuits.state("get_weather")).toBe("open");
  });
});

describe("an HTTP status in the error text counts like a status field", () => {
  it("5xx in the usual phrasings is TRANSIENT, retried in place", () => {
    for (const message of [
      "HTTP 503",
      "HTTP 503 Service Unavailable",
      "HTTP/1.1 503",
      "HTTP/2 502",
      "status 502",
      "status: 500",
      "HTTP error! status: 503",
      "503 Service Unavailable",
      "502 Bad Gateway",
      "500 Internal Server Error",
      "Request failed with status code 500",
      "Error: 504 Gateway Timeout",
      "Response code 503 (Service Unavailable)",
      "upstream returned statusCode=502",
    ]) {
      const classified = classifyError(new Error(message));
      expect(classified.code, message).toBe("TRANSIENT");
      expect(classified.kind, message).toBe("transient");
      expect(classified.recoverable, message).toBe(true);
      expect(classified.message, message).toBe(message);
    }
  });

  it("429 in the text is RATE_LIMITED", () => {
    for (const message of ["429 Too Many Requests", "status code 429", "HTTP 429", "Request failed with status code 429"]) {
      const classified = classifyError(new Error(message));
      expect(classified.code, message).toBe("RATE_LIMITED");
      expect(classified.suggestedAction, message).toBe(DEFAULT_SUGGESTED_ACTIONS.RATE_LIMITED);
    }
  });

  it("408 in the text is TIMEOUT, as the status field is", () => {
    expect(classifyError(new Error("HTTP 408 Request Timeout")).code).toBe("TIMEOUT");
    expect(classifyError(new Error("408 Request Timeout")).code).toBe("TIMEOUT");
  });

  it("400 and 422 in the text are INVALID_ARGUMENTS", () => {
    for (const message of ["Request failed with status code 400", "422 Unprocessable Entity", "HTTP 400 Bad Request"]) {
      expect(classifyError(new Error(message)).code, message).toBe("INVALID_ARGUMENTS");
    }
  });

  it("501 and 505 in the text are not transient, as the status fields are not", () => {
    expect(classifyError(new Error("HTTP 501")).kind).not.toBe("transient");
    expect(classifyError(new Error("status code 505")).kind).not.toBe("transient");
  });

  it("a thrown string and an MCP error result are read the same way", () => {
    expect(classifyError("HTTP 503 Service Unavailable").code).toBe("TRANSIENT");
    expect(classifyError({ isError: true, content: [{ type: "text", text: "upstream said 429 Too Many Requests" }] }).code).toBe(
      "RATE_LIMITED",
    );
  });

  it("a number that is not said to be a status is not read as one", () => {
    for (const message of [
      "order 503 not found",
      "id 42901",
      "customer 5030 has no invoices",
      "HTTP 5030",
      "row 429 of 1000 failed",
      "exit code 500",
      "substatus 503",
    ]) {
      const classified = classifyError(new Error(message));
      expect(classified.code, message).toBe("TOOL_FAILED");
      expect(classified.recoverable, message).toBe(true);
    }
  });

  it("a status field on the error wins over the text", () => {
    const error = Object.assign(new Error("HTTP 503 Service Unavailable"), { status: 429 });
    expect(classifyError(error).code).toBe("RATE_LIMITED");
    const notFound = Object.assign(new Error("proxy said 503 Service Unavailable earlier"), { status: 404 });
    expect(classifyError(notFound).code).toBe("TOOL_FAILED");
  });

  it("a 503 found in the text carries the Retry-After of its headers", () => {
    const error = Object.assign(new Error("HTTP 503"), { headers: { "retry-after": "4" } });
    expect(classifyError(error).retryAfterMs).toBe(4_000);
  });

  it("reads only the start of a huge message", () => {
    const huge = new Error(`${"x".repeat(1_000_000)} HTTP 503`);
    expect(classifyError(huge).code).toBe("TOOL_FAILED");
  });
});

describe("Retry-After on the error in the other common places", () => {
  it("error.response.headers as a Headers instance", () => {
    const error = Object.assign(new Error("rate limited"), { response: { status: 429, headers: new Headers({ "Retry-After": "6" }) } });
    const classified = classifyError(error);
    expect(classified.code).toBe("RATE_LIMITED");
    expect(classified.retryAfterMs).toBe(6_000);
  });

  it("error.cause.response.headers (a wrapped client error)", () => {
    const cause = Object.assign(new Error("Request failed with status code 429"), {
      response: { status: 429, headers: { "retry-after": "8" } },
    });
    const wrapper = Object.assign(new Error("weather lookup failed", { cause }), { status: 429 });
    expect(classifyError(wrapper).retryAfterMs).toBe(8_000);
    expect(retryAfterMsOf(new Error("wrapped", { cause }))).toBe(8_000);
  });

  it("error.cause.headers", () => {
    const cause = Object.assign(new Error("HTTP 429"), { headers: new Headers({ "retry-after": "2" }) });
    expect(retryAfterMsOf(new Error("wrapped", { cause }))).toBe(2_000);
  });

  it("error.responseHeaders (as Vercel AI SDK's APICallError has them)", () => {
    const error = Object.assign(new Error("Too many requests"), { statusCode: 429, responseHeaders: { "retry-after": "3" } });
    const classified = classifyError(error);
    expect(classified.code).toBe("RATE_LIMITED");
    expect(classified.retryAfterMs).toBe(3_000);
  });

  it("the error's own headers win over its cause's", () => {
    const cause = Object.assign(new Error("inner"), { response: { headers: { "retry-after": "30" } } });
    expect(retryAfterMsOf(Object.assign(new Error("outer", { cause }), { headers: { "retry-after": "1" } }))).toBe(1_000);
  });

  it("never throws, whatever the headers are", () => {
    // An async header API: get() answers a promise (rejected here; handled, so that it is not an unhandled rejection).
    const rejected = Promise.reject(new Error("no"));
    rejected.catch(() => {});
    const throwingGet = { get: () => rejected };
    const hostile = new Proxy(
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
    const getterThrows = Object.defineProperty({}, "retry-after", {
      enumerable: true,
      get() {
        throw new Error("no");
      },
    });
    for (const headers of [throwingGet, hostile, getterThrows, 42, "retry-after: 5", null]) {
      const error = Object.assign(new Error("HTTP 429"), { headers, response: { headers }, responseHeaders: headers });
      expect(() => classifyError(error)).not.toThrow();
      expect(classifyError(error).retryAfterMs).toBeUndefined();
    }
    expect(() => retryAfterMsOf({ cause: hostile })).not.toThrow();
  });

  it("is bounded: a huge header record or value gives up instead of working through it", () => {
    const many: Record<string, string> = {};
    for (let index = 0; index < 10_000; index++) many[`x-header-${index}`] = "v";
    // Found at once in lower case or as sent; any other case only among the first keys.
    expect(retryAfterMsOf({ headers: { ...many, "retry-after": "5" } })).toBe(5_000);
    expect(retryAfterMsOf({ headers: { ...many, "Retry-After": "5" } })).toBe(5_000);
    expect(retryAfterMsOf({ headers: { "RETRY-AFTER": "5", ...many } })).toBe(5_000);
    expect(retryAfterMsOf({ headers: { ...many, "RETRY-AFTER": "5" } })).toBeUndefined();
    expect(retryAfterMsOf({ headers: { "retry-after": "9".repeat(400) } })).toBeUndefined();
    expect(retryAfterMsOf({ headers: { "retry-after": ` ${"1".repeat(10)} ` } })).toBe(1_111_111_111_000);
  });
});

describe("credential errors are UNAUTHORIZED: not recoverable by the model", () => {
  it("HTTP 401 as a field or in the text, and a 403 that names credentials", () => {
    for (const error of [
      Object.assign(new Error("Request failed"), { status: 401 }),
      Object.assign(new Error("Request failed"), { response: { status: 401 } }),
      new Error("Request failed with status code 401"),
      new Error("401 Unauthorized"),
      Object.assign(new Error("Invalid API key"), { statusCode: 403 }),
      new Error("HTTP 403: token expired"),
    ]) {
      const classified = classifyError(error);
      expect(classified.code, error.message).toBe(ErrorCodes.UNAUTHORIZED);
      expect(classified.recoverable, error.message).toBe(false);
      expect(classified.kind, error.message).toBe("other");
      expect(classified.suggestedAction, error.message).toBe(DEFAULT_SUGGESTED_ACTIONS.UNAUTHORIZED);
      expect(classified.cause, error.message).toBe(error);
    }
  });

  it("credential messages, whatever their case", () => {
    for (const message of [
      "Invalid API key",
      "Incorrect API key provided: sk-****",
      "API key not valid. Please pass a valid API key.",
      "Unauthorized",
      "Unauthenticated",
      "Forbidden: invalid token",
      "Access denied: invalid API key",
      "Missing credentials",
      "Authentication failed for user bot",
      "invalid token",
      "Token expired",
      "The access token expired",
      "invalid_api_key",
      "Invalid credentials",
    ]) {
      const classified = classifyError(new Error(message));
      expect(classified.code, message).toBe("UNAUTHORIZED");
      expect(classified.recoverable, message).toBe(false);
    }
  });

  it("a credential message wins over a 400 status (Google's 'API key not valid' is a 400)", () => {
    const error = Object.assign(new Error("API key not valid. Please pass a valid API key."), { status: 400 });
    expect(classifyError(error).code).toBe("UNAUTHORIZED");
  });

  it("tells the model to stop and tell the user the tool is not authorised", () => {
    expect(DEFAULT_SUGGESTED_ACTIONS.UNAUTHORIZED).toMatch(/not authori[sz]ed/i);
    expect(DEFAULT_SUGGESTED_ACTIONS.UNAUTHORIZED).toMatch(/do not call/i);
    expect(DEFAULT_SUGGESTED_ACTIONS.UNAUTHORIZED).toMatch(/tell the user/i);
  });

  it("argument errors stay INVALID_ARGUMENTS", () => {
    for (const message of [
      "Invalid units. Supported: celsius, fahrenheit",
      "Invalid date: 2024-13-01",
      "token_limit must be a positive integer",
      "the key 'colour' is not supported",
    ]) {
      expect(classifyError(new Error(message)).code, message).toBe("INVALID_ARGUMENTS");
    }
  });

  it("a validation error stays INVALID_ARGUMENTS even when it names a token field", () => {
    const zod = Object.assign(new Error('[{"path":["token"],"message":"Invalid token"}]'), { name: "ZodError" });
    expect(classifyError(zod).code).toBe("INVALID_ARGUMENTS");
  });

  it("a network failure stays transient even when it mentions a token", () => {
    expect(classifyError(Object.assign(new Error("read ECONNRESET while refreshing token"), { code: "ECONNRESET" })).code).toBe(
      "TRANSIENT",
    );
  });
});

describe("a fault in the tool's own code is not presented as an argument problem", () => {
  function expectFault(error: unknown, label: string): void {
    const classified = classifyError(error);
    expect(classified.code, label).toBe("TOOL_FAILED");
    expect(classified.recoverable, label).toBe(false);
    expect(classified.kind, label).toBe("other");
    expect(classified.details, label).toEqual({ fault: "tool_code" });
    expect(classified.suggestedAction, label).toMatch(/bug/i);
    expect(classified.suggestedAction, label).toMatch(/do not call/i);
    expect(classified.suggestedAction, label).toMatch(/tell the user/i);
    expect(classified.cause, label).toBe(error);
  }

  it("a ReferenceError, an EvalError and a stack overflow", () => {
    expectFault(new ReferenceError("weatherApi is not defined"), "ReferenceError");
    expectFault(new ReferenceError("Cannot access 'client' before initialization"), "TDZ");
    expectFault(new EvalError("eval failed"), "EvalError");
    const overflow = (() => {
      const recurse = (depth: number): number => recurse(depth + 1) + 1;
      try {
        recurse(0);
      } catch (error) {
        return error;
      }
      return undefined;
    })();
    expect(overflow).toBeInstanceOf(RangeError);
    expectFault(overflow, "stack overflow");
  });

  it("a ReferenceError whose text happens to look like bad input is still a fault", () => {
    expectFault(new ReferenceError("invalidUnits is not defined"), "ReferenceError with 'invalid'");
  });

  it("TypeErrors of programming mistakes, as V8 words them", () => {
    const undefinedValue = undefined as unknown as { x: number; invalid: number };
    const thrown: unknown[] = [];
    const capture = (run: () => unknown) => {
      try {
        run();
      } catch (error) {
        thrown.push(error);
      }
    };
    capture(() => undefinedValue.x);
    capture(() => undefinedValue.invalid);
    capture(() => (undefinedValue as unknown as () => void)());
    capture(() => {
      const { city } = undefinedValue as unknown as { city: string };
      return city;
    });
    capture(() => {
      const notIterable = 5 as unknown as number[];
      return [...notIterable];
    });
    capture(() => Object.keys(null as unknown as object));
    capture(() => {
      const loop: Record<string, unknown> = {};
      loop.self = loop;
      return JSON.stringify(loop);
    });
    expect(thrown).toHaveLength(7);
    for (const error of thrown) {
      expect(error).toBeInstanceOf(TypeError);
      expectFault(error, (error as Error).message);
    }
  });

  it("a SyntaxError of code that does not parse", () => {
    let thrown: unknown;
    try {
      new Function("return {");
    } catch (error) {
      thrown = error;
    }
    expectFault(thrown, "new Function");
  });

  it("the engine stops: failed, not_recoverable, TOOL_FAILED, counted by the breaker", async () => {
    const plugin = RetryReflectPlugin.create({ clock: createFakeClock(), circuitBreakerThreshold: 2 });
    let calls = 0;
    const tool = () => {
      calls++;
      const client = undefined as unknown as { get(): string };
      return client.get();
    };
    const first = await plugin.execute({ toolName: "weather", args: {}, scope: "a" }, tool);
    expect(calls).toBe(1);
    expect(first.status).toBe("failed");
    if (first.status !== "failed") return;
    expect(first.reason).toBe("not_recoverable");
    expect(first.error.code).toBe("TOOL_FAILED");
    expect(first.error.toJSON().details).toEqual({ fault: "tool_code" });
    await plugin.execute({ toolName: "weather", args: {}, scope: "b" }, tool);
    expect(plugin.circuits.state("weather")).toBe("open");
  });

  it("network TypeErrors stay transient, a permanent fetch failure stays recoverable", () => {
    expect(classifyError(new TypeError("fetch failed")).code).toBe("TRANSIENT");
    expect(classifyError(new TypeError("Failed to fetch")).code).toBe("TRANSIENT");
    const notFound = new TypeError("fetch failed", {
      cause: Object.assign(new Error("getaddrinfo ENOTFOUND api.test"), { code: "ENOTFOUND" }),
    });
    const classified = classifyError(notFound);
    expect(classified.code).toBe("TOOL_FAILED");
    expect(classified.recoverable).toBe(true);
    expect(classified.details).toBeUndefined();
  });

  it("a TypeError in the tool's own words is not taken for a bug: it is reflected, as before", () => {
    const classified = classifyError(new TypeError("units should be celsius or fahrenheit"));
    expect(classified.code).toBe("TOOL_FAILED");
    expect(classified.recoverable).toBe(true);
    expect(classified.details).toBeUndefined();
  });

  it("a TypeError or RangeError that names bad input stays INVALID_ARGUMENTS", () => {
    for (const error of [
      new TypeError("units must be a string"),
      new TypeError("expected a number for 'days'"),
      new TypeError("Invalid URL"),
      Object.assign(new TypeError('The "path" argument must be of type string. Received undefined'), { code: "ERR_INVALID_ARG_TYPE" }),
      new RangeError("days out of range"),
      new RangeError("Invalid time value"),
      new SyntaxError("Invalid regular expression: /(/: Unterminated group"),
      new URIError("URI malformed"),
    ]) {
      expect(classifyError(error).code, error.message).toBe("INVALID_ARGUMENTS");
    }
  });

  it("malformed JSON is bad data, not a fault in the code: recoverable TOOL_FAILED", () => {
    let thrown: unknown;
    try {
      JSON.parse("<html>502</html>");
    } catch (error) {
      thrown = error;
    }
    const classified = classifyError(thrown);
    expect(classified.code).toBe("TOOL_FAILED");
    expect(classified.recoverable).toBe(true);
    expect(classified.details).toBeUndefined();
  });

  it("a ToolError the tool threw keeps its own fields, whatever its cause", () => {
    const declared = new ToolError({ code: "BROKEN", message: "x", recoverable: true, cause: new ReferenceError("y is not defined") });
    expect(classifyError(declared)).toBe(declared);
  });
});

describe("the new codes", () => {
  it("UNAUTHORIZED, OVERLOADED and REPEATED_CALL are standard codes; STORE_UNAVAILABLE still is", () => {
    expect(ErrorCodes.UNAUTHORIZED).toBe("UNAUTHORIZED");
    expect(ErrorCodes.OVERLOADED).toBe("OVERLOADED");
    expect(ErrorCodes.REPEATED_CALL).toBe("REPEATED_CALL");
    expect(ErrorCodes.STORE_UNAVAILABLE).toBe("STORE_UNAVAILABLE");
  });

  it("their kind is 'other'", () => {
    for (const code of ["UNAUTHORIZED", "OVERLOADED", "REPEATED_CALL"]) {
      expect(new ToolError({ code, message: "m", recoverable: true }).kind, code).toBe("other");
    }
  });
});

describe("permission refusals about an argument are PERMISSION_DENIED: reflected, another argument may be allowed", () => {
  it("HTTP 403, permission and access-denied wording, EACCES/EPERM", () => {
    for (const error of [
      Object.assign(new Error("nope"), { statusCode: 403 }),
      new Error("HTTP 403"),
      new Error("403 Forbidden"),
      new Error("Forbidden"),
      new Error("Access denied - path outside allowed directories: /etc/passwd not in /tmp/work"),
      new Error("Permission denied: /root/secrets.txt"),
      new Error("Access denied to bucket reports"),
      new Error("Insufficient permissions for repository acme/private"),
      Object.assign(new Error("EACCES: permission denied, open '/root/x'"), { code: "EACCES", path: "/root/x" }),
      Object.assign(new Error("EPERM: operation not permitted, unlink '/sys/x'"), { code: "EPERM" }),
    ]) {
      const classified = classifyError(error);
      expect(classified.code, error.message).toBe(ErrorCodes.PERMISSION_DENIED);
      expect(classified.recoverable, error.message).toBe(true);
      expect(classified.kind, error.message).toBe("other");
      expect(classified.suggestedAction, error.message).toBe(DEFAULT_SUGGESTED_ACTIONS.PERMISSION_DENIED);
      expect(classified.cause, error.message).toBe(error);
    }
  });

  it("a credential message wins over a permission word; a 5xx or 429 stays transient", () => {
    expect(classifyError(new Error("Access denied: API key expired")).code).toBe("UNAUTHORIZED");
    expect(classifyError(Object.assign(new Error("forbidden"), { status: 503 })).code).toBe("TRANSIENT");
    expect(classifyError(new Error("429 Too Many Requests: access denied for now")).code).toBe("RATE_LIMITED");
  });
});
