// The hand-written references of the failure-path and hook tables (src/contract-floor.ts) do the
// work their notes say they do: a reference that skipped a step would read cheaper than the contract.

import { classifyError } from "@retry-reflect/core/primitives";
import { describe, expect, it } from "vitest";
import { leastFailurePath, leastHook } from "../src/contract-floor.js";

/** A tool that throws each error of `errors` in turn, then returns `value` for good. */
function toolFailing(errors: readonly Error[], value = 1): { readonly tool: () => Promise<number>; readonly calls: () => number } {
  let calls = 0;
  return {
    tool: async () => {
      const error = errors[calls++];
      if (error !== undefined) throw error;
      return value;
    },
    calls: () => calls,
  };
}

function networkError(): Error {
  return Object.assign(new Error("connect ECONNRESET 127.0.0.1:443\u0007"), { code: "ECONNRESET" });
}

describe("leastFailurePath", () => {
  it("retries a transient failure in place and ends with the tool's value", async () => {
    const { tool, calls } = toolFailing([networkError()]);
    const outcome = await leastFailurePath(classifyError, tool)();
    expect(outcome).toEqual({ status: "success", attempt: 2, value: 1 });
    expect(calls()).toBe(2);
  });

  it("stops on a failure that is not transient, with the classified error, its text cleaned", async () => {
    const { tool, calls } = toolFailing([new Error("Invalid input: city is required\u0000")]);
    const outcome = await leastFailurePath(classifyError, tool)();
    expect(outcome.status).toBe("failed");
    expect(outcome.error).toMatchObject({ code: "INVALID_ARGUMENTS", message: "Invalid input: city is required", recoverable: true });
    expect(calls()).toBe(1);
  });

  it("stops once the budget is spent", async () => {
    const { tool, calls } = toolFailing([networkError(), networkError(), networkError()]);
    const outcome = await leastFailurePath(classifyError, tool, 2)();
    expect(outcome).toMatchObject({ status: "failed", attempt: 3, error: { code: "TRANSIENT" } });
    expect(calls()).toBe(3);
  });
});

describe("leastHook", () => {
  const request = { toolCall: { name: "noop" }, tool: { metadata: {} }, runtime: { signal: undefined } };

  it("hands the handler's result back", async () => {
    const result = { status: "success", content: "ok" };
    await expect(leastHook()(request, async () => result)).resolves.toBe(result);
  });

  it("treats an error ToolMessage as a failure, and a thrown error as one", async () => {
    const hook = leastHook();
    await expect(hook(request, async () => ({ status: "error", content: "boom" }))).rejects.toThrow(/only the healthy path/);
    await expect(hook(request, async () => ({ status: "success", content: ' {"error_code":"TRANSIENT"}' }))).rejects.toThrow(
      /only the healthy path/,
    );
    await expect(
      hook(request, async () => {
        throw new Error("boom");
      }),
    ).rejects.toThrow("boom");
  });

  it("has no path for a write, nor for a call already aborted", () => {
    const hook = leastHook();
    expect(() => hook({ ...request, tool: { metadata: { effect: "write" } } }, async () => "ok")).toThrow(/only the healthy path/);
    expect(() => hook({ ...request, runtime: { signal: AbortSignal.abort() } }, async () => "ok")).toThrow(/only the healthy path/);
  });
});
