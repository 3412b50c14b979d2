import { describe, expect, it } from "vitest";
import { RetryReflectToolError } from "../src/adapter.js";
import { ReturnedFailureError, structuredErrorOf } from "../src/adapter-failures.js";
import { RetryReflectPlugin, ToolError } from "../src/index.js";

// Errors that stand for a result a tool returned are data, not places in code: they are made
// without a V8 stack capture (microseconds each; 45 % of an MCP call that fails once and is retried
// in place), and V8's stack capture is left exactly as it was for every other error.

const V8Error = Error as ErrorConstructor & { stackTraceLimit: number };

describe("errors made from returned results", () => {
  it("a ReturnedFailureError's stack is its first line only, and errors made after it keep theirs", () => {
    const before = V8Error.stackTraceLimit;
    const error = new ReturnedFailureError("ToolResultError", { isError: true }, "HTTP 503 Service Unavailable");
    expect(error.stack).toBe("ToolResultError: HTTP 503 Service Unavailable");
    expect(String(error)).toBe("ToolResultError: HTTP 503 Service Unavailable");
    expect(error).toBeInstanceOf(Error);
    expect(error.result).toEqual({ isError: true });
    expect(V8Error.stackTraceLimit).toBe(before);
    expect(new Error("after").stack).toContain("\n    at ");
  });

  it("a subclass (an adapter's name for it) keeps its own name and members", () => {
    class ToolMessageError extends ReturnedFailureError<{ content: string }> {
      constructor(message: { content: string }) {
        super("ToolMessageError", message, message.content);
      }
    }
    const error = new ToolMessageError({ content: "Invalid city" });
    expect(error.stack).toBe("ToolMessageError: Invalid city");
    expect(error.result.content).toBe("Invalid city");
  });

  it("keeps the usual stack where the limit cannot be set (a frozen Error), read (a throwing accessor) or is not a number", () => {
    const descriptor = Object.getOwnPropertyDescriptor(Error, "stackTraceLimit");
    try {
      Object.defineProperty(Error, "stackTraceLimit", { value: 10, writable: false, configurable: true });
      const frozen = new ReturnedFailureError("ToolResultError", undefined, "down");
      expect(frozen.stack).toContain("\n    at ");
      expect(V8Error.stackTraceLimit).toBe(10);
      Object.defineProperty(Error, "stackTraceLimit", {
        get() {
          throw new Error("hostile");
        },
        configurable: true,
      });
      expect(new ReturnedFailureError("ToolResultError", undefined, "down").message).toBe("down");
      Object.defineProperty(Error, "stackTraceLimit", { value: undefined, writable: true, configurable: true });
      const unset = new ReturnedFailureError("ToolResultError", undefined, "down");
      expect(unset.message).toBe("down");
      expect(V8Error.stackTraceLimit).toBeUndefined();
    } finally {
      if (descriptor !== undefined) Object.defineProperty(Error, "stackTraceLimit", descriptor);
    }
    expect(new Error("after").stack).toContain("\n    at ");
  });

  it("a structured error read from a result is a ToolError without a stack, the result its cause", () => {
    const result = { isError: true };
    const error = structuredErrorOf(
      { error_code: "RATE_LIMITED", message: "slow down", recoverable: true, suggested_action: "wait", retry_after_ms: 1500 },
      undefined,
      result,
    );
    expect(ToolError.isInstance(error)).toBe(true);
    expect(error).toBeInstanceOf(ToolError);
    expect(error?.stack).toBeUndefined();
    expect(error?.cause).toBe(result);
    expect(error?.toJSON()).toEqual({
      error_code: "RATE_LIMITED",
      message: "slow down",
      recoverable: true,
      suggested_action: "wait",
      retry_after_ms: 1500,
    });
    expect(structuredErrorOf(undefined, { error_code: "NOT_FOUND", message: "no such city", recoverable: false }, result)?.code).toBe(
      "NOT_FOUND",
    );
  });

  it("a RetryReflectToolError (an outcome's text, thrown to the AI SDK) has its first line as its stack; where it failed is in its cause", async () => {
    const plugin = RetryReflectPlugin.create();
    const thrown = new Error("Invalid city: Atlantis is not a known city");
    const outcome = await plugin.execute({ toolName: "get_weather", args: { city: "Atlantis" } }, () => {
      throw thrown;
    });
    if (outcome.status !== "reflect") throw new Error(`expected a reflection, got ${outcome.status}`);
    const error = new RetryReflectToolError(outcome, "get_weather", "call_1");
    expect(error.stack).toBe(`RetryReflectToolError: ${outcome.message}`);
    expect(error.cause).toBe(outcome.error);
    expect(outcome.error.cause).toBe(thrown);
    expect(thrown.stack).toContain("\n    at ");
    expect(new Error("after").stack).toContain("\n    at ");
  });
});
