import { afterEach, describe, expect, it, vi } from "vitest";
import { isReturnedFailure } from "../src/classify/classify-error.js";
import { ToolError } from "../src/index.js";
import { classifyError, DEFAULT_SUGGESTED_ACTIONS, retryAfterMsOf } from "../src/primitives.js";

const BRAND = Symbol.for("retry-reflect.ToolError");

/** An error like Node's fetch (undici) throws when the connection is reset. */
function fetchFailed(code: string): TypeError {
  const cause = Object.assign(new Error(`read ${code}`), { code, errno: -104, syscall: "read" });
  return new TypeError("fetch failed", { cause });
}

function httpError(status: number, headers?: unknown, message = `HTTP ${status}`): Error {
  return Object.assign(new Error(message), { status, headers });
}

afterEach(() => {
  vi.useRealTimers();
});

describe("classifyError: declared errors keep their own fields", () => {
  it("returns a ToolError as it is", () => {
    const declared = new ToolError({
      code: "RECORD_NOT_FOUND",
      message: "No customer with id 42",
      recoverable: false,
      suggestedAction: "Ask the user for the customer's email instead.",
    });
    const classified = classifyError(declared);
    expect(classified).toBe(declared);
    expect(classified.code).toBe("RECORD_NOT_FOUND");
    expect(classified.recoverable).toBe(false);
    expect(classified.suggestedAction).toBe("Ask the user for the customer's email instead.");
  });

  it("keeps a ToolError even when it also looks like an HTTP 503", () => {
    const declared = Object.assign(new ToolError({ code: "QUOTA_EXCEEDED", message: "monthly quota used", recoverable: false }), {
      status: 503,
    });
    expect(classifyError(declared).code).toBe("QUOTA_EXCEEDED");
  });

  it("turns the seed's plain shape into a ToolError with the same fields", () => {
    const shape = {
      error_code: "RECORD_NOT_FOUND",
      message: "No order 1234",
      recoverable: true,
      suggested_action: "Search orders by customer email, then retry with the right id.",
      retry_after_ms: 1500,
    };
    const classified = classifyError(shape);
    expect(ToolError.isInstance(classified)).toBe(true);
    expect(classified.toJSON()).toEqual(shape);
    expect(classified.cause).toBe(shape);
  });

  it("recognises a ToolError from another copy of the package by its Symbol.for brand", () => {
    class ForeignToolError extends Error {
      readonly code = "QUOTA_EXCEEDED";
      readonly recoverable = false;
      readonly suggestedAction = "Tell the user the quota is used up.";
      readonly [BRAND] = true;
    }
    const foreign = new ForeignToolError("monthly quota used");
    expect(foreign instanceof ToolError).toBe(false);
    expect(ToolError.isInstance(foreign)).toBe(true);
    const classified = classifyError(foreign);
    expect(classified).toBe(foreign);
    expect(classified.code).toBe("QUOTA_EXCEEDED");
  });

  it("does not take an unbranded error or a truthy-but-not-true brand for a ToolError", () => {
    expect(ToolError.isInstance(new Error("x"))).toBe(false);
    expect(ToolError.isInstance({ [BRAND]: "yes" })).toBe(false);
    expect(ToolError.isInstance(null)).toBe(false);
    expect(ToolError.isInstance("ToolError")).toBe(false);
  });
});

describe("classifyError: transient failures", () => {
  it("ECONNRESET on the error itself is TRANSIENT and recoverable", () => {
    const error = Object.assign(new Error("socket hang up"), { code: "ECONNRESET" });
    const classified = classifyError(error);
    expect(classified.code).toBe("TRANSIENT");
    expect(classified.kind).toBe("transient");
    expect(classified.recoverable).toBe(true);
    expect(classified.suggestedAction).toBe(DEFAULT_SUGGESTED_ACTIONS.TRANSIENT);
    expect(classified.message).toBe("socket hang up");
    expect(classified.cause).toBe(error);
  });

  it("ECONNRESET on error.cause, as undici's 'fetch failed', is TRANSIENT", () => {
    const classified = classifyError(fetchFailed("ECONNRESET"));
    expect(classified.code).toBe("TRANSIENT");
    expect(classified.kind).toBe("transient");
  });

  it("a network code on the cause of any wrapper error is TRANSIENT", () => {
    const wrapped = new Error("weather service request did not complete", {
      cause: Object.assign(new Error("read ECONNRESET"), { code: "ECONNRESET" }),
    });
    expect(classifyError(wrapped).code).toBe("TRANSIENT");
  });

  it("'fetch failed' caused by a permanent error (unknown host, bad certificate) is not transient", () => {
    // Retrying the same call in place cannot fix these; the model may need to change the URL.
    expect(classifyError(fetchFailed("ENOTFOUND")).kind).not.toBe("transient");
    expect(classifyError(fetchFailed("CERT_HAS_EXPIRED")).kind).not.toBe("transient");
    expect(classifyError(fetchFailed("ERR_INVALID_URL")).kind).not.toBe("transient");
    // ... while one without a cause (a browser's opaque network error) still is.
    expect(classifyError(new TypeError("fetch failed")).code).toBe("TRANSIENT");
  });

  it("browsers' fetch network failures are TRANSIENT", () => {
    for (const message of ["Failed to fetch", "NetworkError when attempting to fetch resource.", "Load failed"]) {
      expect(classifyError(new TypeError(message)).code, message).toBe("TRANSIENT");
    }
  });

  it("ECONNREFUSED and DNS EAI_AGAIN are TRANSIENT", () => {
    expect(classifyError(fetchFailed("ECONNREFUSED")).code).toBe("TRANSIENT");
    expect(classifyError(Object.assign(new Error("getaddrinfo EAI_AGAIN api.test"), { code: "EAI_AGAIN" })).code).toBe("TRANSIENT");
  });

  it("HTTP 503, 502 and 500 are TRANSIENT, on the error or on error.response", () => {
    expect(classifyError(httpError(503)).code).toBe("TRANSIENT");
    expect(classifyError(httpError(502)).code).toBe("TRANSIENT");
    expect(classifyError(Object.assign(new Error("Internal"), { statusCode: 500 })).code).toBe("TRANSIENT");
    expect(classifyError(Object.assign(new Error("Request failed"), { response: { status: 503 } })).code).toBe("TRANSIENT");
  });

  it("HTTP 501 Not Implemented is not transient: retrying it cannot help", () => {
    expect(classifyError(httpError(501, undefined, "Not Implemented")).kind).not.toBe("transient");
  });

  it("HTTP 408 and a TimeoutError are TIMEOUT", () => {
    expect(classifyError(httpError(408)).code).toBe("TIMEOUT");
    const timeout = new DOMException("The operation was aborted due to timeout", "TimeoutError");
    const classified = classifyError(timeout);
    expect(classified.code).toBe("TIMEOUT");
    expect(classified.kind).toBe("transient");
    expect(classified.suggestedAction).toBe(DEFAULT_SUGGESTED_ACTIONS.TIMEOUT);
    expect(classifyError(Object.assign(new Error("connect ETIMEDOUT"), { code: "ETIMEDOUT" })).code).toBe("TIMEOUT");
  });
});

describe("classifyError: rate limits and Retry-After", () => {
  it("429 with Retry-After in seconds (a Headers object) is RATE_LIMITED with retryAfterMs", () => {
    const classified = classifyError(httpError(429, new Headers({ "Retry-After": "7" })));
    expect(classified.code).toBe("RATE_LIMITED");
    expect(classified.kind).toBe("transient");
    expect(classified.recoverable).toBe(true);
    expect(classified.retryAfterMs).toBe(7_000);
    expect(classified.toJSON().retry_after_ms).toBe(7_000);
  });

  it("429 with Retry-After in a plain header record, any case", () => {
    expect(classifyError(httpError(429, { "retry-after": "2" })).retryAfterMs).toBe(2_000);
    expect(classifyError(httpError(429, { "Retry-After": "1.5" })).retryAfterMs).toBe(1_500);
    // Node's IncomingHttpHeaders may hold arrays.
    expect(classifyError(httpError(429, { "retry-after": ["3"] })).retryAfterMs).toBe(3_000);
  });

  it("429 with Retry-After as a number in a plain record", () => {
    expect(classifyError(httpError(429, { "retry-after": 4 })).retryAfterMs).toBe(4_000);
  });

  it("429 with Retry-After as an HTTP date counts from now", () => {
    vi.useFakeTimers();
    vi.setSystemTime(new Date("2026-01-01T12:00:00Z"));
    const classified = classifyError(httpError(429, new Headers({ "Retry-After": "Thu, 01 Jan 2026 12:00:30 GMT" })));
    expect(classified.code).toBe("RATE_LIMITED");
    expect(classified.retryAfterMs).toBe(30_000);
  });

  it("an HTTP date in the past means retry now (0), never a negative wait", () => {
    expect(
      retryAfterMsOf(httpError(429, { "retry-after": "Thu, 01 Jan 2026 12:00:00 GMT" }), () => Date.parse("2026-01-01T13:00:00Z")),
    ).toBe(0);
  });

  it("the Retry-After header on error.response.headers counts too (axios-style)", () => {
    const error = Object.assign(new Error("Request failed with status code 429"), {
      response: { status: 429, headers: { "retry-after": "10" } },
    });
    const classified = classifyError(error);
    expect(classified.code).toBe("RATE_LIMITED");
    expect(classified.retryAfterMs).toBe(10_000);
  });

  it("429 without a Retry-After has no retryAfterMs; a garbage header is ignored", () => {
    expect(classifyError(httpError(429)).retryAfterMs).toBeUndefined();
    expect(classifyError(httpError(429, { "retry-after": "soon" })).retryAfterMs).toBeUndefined();
    expect(classifyError(httpError(429, { "retry-after": "-5" })).retryAfterMs).toBeUndefined();
  });

  it("an explicit retryAfterMs / retry_after_ms on the error wins over headers", () => {
    expect(retryAfterMsOf({ retryAfterMs: 250, headers: { "retry-after": "9" } })).toBe(250);
    expect(retryAfterMsOf({ retry_after_ms: 900 })).toBe(900);
  });

  it("a 503 with Retry-After carries the hint too", () => {
    const classified = classifyError(httpError(503, new Headers({ "retry-after": "5" })));
    expect(classified.code).toBe("TRANSIENT");
    expect(classified.retryAfterMs).toBe(5_000);
  });
});

describe("classifyError: invalid arguments", () => {
  it("HTTP 400 and 422 are INVALID_ARGUMENTS", () => {
    for (const status of [400, 422]) {
      const classified = classifyError(httpError(status, undefined, "Unprocessable"));
      expect(classified.code).toBe("INVALID_ARGUMENTS");
      expect(classified.kind).toBe("invalid_arguments");
      expect(classified.recoverable).toBe(true);
      expect(classified.suggestedAction).toBe(DEFAULT_SUGGESTED_ACTIONS.INVALID_ARGUMENTS);
    }
  });

  it("a ZodError (by name) is INVALID_ARGUMENTS and keeps its message", () => {
    const zod = Object.assign(new Error('[{"path":["units"],"message":"Invalid enum value"}]'), { name: "ZodError" });
    const classified = classifyError(zod);
    expect(classified.code).toBe("INVALID_ARGUMENTS");
    expect(classified.message).toBe('[{"path":["units"],"message":"Invalid enum value"}]');
  });

  it("the seed's 'Invalid units. Supported: ...' is INVALID_ARGUMENTS", () => {
    const classified = classifyError(new Error("Invalid units. Supported: celsius, fahrenheit"));
    expect(classified.code).toBe("INVALID_ARGUMENTS");
    expect(classified.message).toBe("Invalid units. Supported: celsius, fahrenheit");
  });

  it("other messages that name bad input are INVALID_ARGUMENTS", () => {
    for (const message of [
      "city is required",
      "date must be in the future",
      "Missing required parameter: city",
      "units 'kelvin' not supported",
    ]) {
      expect(classifyError(new Error(message)).code, message).toBe("INVALID_ARGUMENTS");
    }
  });

  it("'Unexpected token' is not mistaken for 'expected'", () => {
    expect(classifyError(new SyntaxError("Unexpected token < in JSON at position 0")).code).toBe("TOOL_FAILED");
  });
});

describe("classifyError: anything else", () => {
  it("is TOOL_FAILED, recoverable, with the message and the original as cause", () => {
    const error = new Error("disk quota reached on /var/data");
    const classified = classifyError(error);
    expect(classified.code).toBe("TOOL_FAILED");
    expect(classified.recoverable).toBe(true);
    expect(classified.kind).toBe("other");
    expect(classified.suggestedAction).toBe(DEFAULT_SUGGESTED_ACTIONS.TOOL_FAILED);
    expect(classified.message).toBe("disk quota reached on /var/data");
    expect(classified.cause).toBe(error);
  });

  it("handles thrown strings, undefined and odd objects", () => {
    expect(classifyError("boom").message).toBe("boom");
    expect(classifyError("boom").code).toBe("TOOL_FAILED");
    expect(classifyError(undefined).code).toBe("TOOL_FAILED");
    expect(classifyError({ weird: true }).message).toBe('{"weird":true}');
  });

  it("never throws on a hostile value", () => {
    const hostile = new Proxy(
      {},
      {
        get() {
          throw new Error("no");
        },
      },
    );
    expect(() => classifyError(hostile)).not.toThrow();
    expect(classifyError(hostile).code).toBe("TOOL_FAILED");
  });
});

describe("isReturnedFailure", () => {
  it("is true for a returned ToolError", () => {
    expect(isReturnedFailure(new ToolError({ code: "RECORD_NOT_FOUND", message: "none", recoverable: false }))).toBe(true);
  });

  it("is true for the seed's plain error shape", () => {
    expect(
      isReturnedFailure({
        error_code: "RECORD_NOT_FOUND",
        message: "No order 1234",
        recoverable: true,
        suggested_action: "Search by email.",
      }),
    ).toBe(true);
  });

  it("is true for an MCP result with isError: true", () => {
    expect(isReturnedFailure({ isError: true, content: [{ type: "text", text: "Invalid units" }] })).toBe(true);
  });

  it("is false for ordinary results", () => {
    expect(isReturnedFailure({ temperature: 22, condition: "sunny" })).toBe(false);
    expect(isReturnedFailure({ isError: false, content: [{ type: "text", text: "ok" }] })).toBe(false);
    expect(isReturnedFailure({ isError: "true" })).toBe(false);
    expect(isReturnedFailure({ message: "Email sent", status: "ok" })).toBe(false);
    expect(isReturnedFailure({ error_code: "X", message: "m" })).toBe(false);
    expect(isReturnedFailure("error")).toBe(false);
    expect(isReturnedFailure(null)).toBe(false);
    expect(isReturnedFailure(undefined)).toBe(false);
    expect(isReturnedFailure([])).toBe(false);
    // A plain Error returned as a value is data, not a failure signal.
    expect(isReturnedFailure(new Error("returned, not thrown"))).toBe(false);
  });
});
