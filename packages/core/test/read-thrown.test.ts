import { describe, expect, it } from "vitest";
import { type HostToolCall, runToolCall, type ThrownReading } from "../src/adapter.js";
import type { CallEnd } from "../src/events.js";
import { RetryReflectPlugin, ToolError } from "../src/index.js";
import { createFakeClock } from "../src/testing.js";

// A host adapter reads what its tool threw once per failed attempt, as one value (`readThrown`):
// the failure to classify, whether it is the host's control flow, and the host's retry mark.

class Interrupt extends Error {}

function setup(options: Parameters<typeof RetryReflectPlugin.create>[0] = {}) {
  const clock = createFakeClock();
  const ends: CallEnd["status"][] = [];
  const plugin = RetryReflectPlugin.create({
    clock,
    observers: [{ onCallEnd: (_call, end) => void ends.push(end.status) }],
    ...options,
  });
  return { plugin, clock, ends };
}

function hostCall(
  thrown: () => unknown,
  readThrown: HostToolCall<string>["readThrown"],
  overrides: Partial<HostToolCall<string>> = {},
): HostToolCall<string> & { readings: unknown[] } {
  const readings: unknown[] = [];
  return {
    toolName: "search",
    args: { query: "x" },
    scope: "run-1",
    readings,
    run: () => {
      throw thrown();
    },
    readThrown:
      readThrown === undefined
        ? undefined
        : (error, args) => {
            readings.push(error);
            return readThrown(error, args);
          },
    ...overrides,
  };
}

describe("HostToolCall.readThrown", () => {
  it("passThrough: the host's error is rethrown as thrown, not counted, the breaker untouched, the call 'interrupted'", async () => {
    const interrupt = new Interrupt("waiting for a human");
    // A healthy tool, and one with a concurrency slot to take.
    for (const options of [{}, { maxConcurrent: 4 }]) {
      const { plugin, ends } = setup({ circuitBreakerThreshold: 1, ...options });
      const call = hostCall(
        () => interrupt,
        async (error) => ({ failure: error, passThrough: error instanceof Interrupt }),
      );
      await expect(runToolCall(plugin, call)).rejects.toBe(interrupt);
      expect(call.readings).toEqual([interrupt]);
      expect(plugin.circuitState("search")).toBe("closed"); // threshold 1: one counted failure would open it
      expect(ends).toEqual(["interrupted"]);
      // Not counted: the next call is attempt 1 of its scope.
      const next = await runToolCall(plugin, { toolName: "search", args: {}, scope: "run-1", run: () => "ok" });
      expect(next).toMatchObject({ status: "success", attempt: 1 });
    }
  });

  it("the failure it names is what gets classified; the reading may be a promise", async () => {
    const { plugin } = setup();
    const reading = async (error: unknown): Promise<ThrownReading> => ({
      failure: new ToolError({
        code: "INVALID_ARGUMENTS",
        message: `query: expected a city (${String((error as Error).message)})`,
        recoverable: true,
        suggestedAction: "fix it",
      }),
    });
    const outcome = await runToolCall(
      plugin,
      hostCall(() => new Error("bad input"), reading),
    );
    expect(outcome).toMatchObject({ status: "reflect", error: { code: "INVALID_ARGUMENTS" } });
    expect(outcome.status === "reflect" && outcome.error.message).toContain("query: expected a city (bad input)");
  });

  it("retryable: false stops the call; true makes a failure recoverable; the policy's shouldRetry wins", async () => {
    const upstream = () => Object.assign(new Error("upstream said no"), { status: 400 });
    const stop = await runToolCall(
      setup().plugin,
      hostCall(upstream, async (error) => ({ failure: error, retryable: false })),
    );
    expect(stop).toMatchObject({ status: "failed", reason: "not_recoverable" });

    const unauthorized = () => Object.assign(new Error("401 Unauthorized"), { status: 401 });
    const plain = await runToolCall(
      setup().plugin,
      hostCall(unauthorized, async (error) => ({ failure: error })),
    );
    expect(plain).toMatchObject({ status: "failed", reason: "not_recoverable" });
    const marked = await runToolCall(
      setup().plugin,
      hostCall(unauthorized, async (error) => ({ failure: error, retryable: true })),
    );
    expect(marked.status).toBe("reflect");

    const { plugin } = setup({ shouldRetry: () => true });
    const overruled = await runToolCall(
      plugin,
      hostCall(upstream, async (error) => ({ failure: error, retryable: false })),
    );
    expect(overruled.status).toBe("reflect");
  });

  it("is asked once per failed attempt (in-place retries too), never for a returned failure", async () => {
    // No patience: the call makes its maxRetries in-place retries, then tells the failure as temporary.
    const { plugin, clock } = setup({ maxRetries: 2, patienceMs: 0, circuitBreakerThreshold: 10 });
    const reset = () => Object.assign(new Error("socket hang up"), { code: "ECONNRESET" });
    const call = hostCall(reset, async (error) => ({ failure: error }));
    const pending = runToolCall(plugin, call);
    await clock.runAll();
    expect(await pending).toMatchObject({ status: "reflect", error: { recoverable: true } });
    expect(call.readings).toHaveLength(3);

    const returned = hostCall(reset, async (error) => ({ failure: error }), {
      toolName: "other",
      run: () => "error: not found",
      failureOfResult: (result) => new Error(String(result)),
    });
    expect((await runToolCall(plugin, returned)).status).toBe("reflect");
    expect(returned.readings).toEqual([]);
  });

  it("a reader that throws, or answers with no reading, leaves the error as thrown", async () => {
    const invalid = () => new Error("Invalid units. Supported: celsius, fahrenheit");
    const readers: Array<HostToolCall<string>["readThrown"]> = [
      () => {
        throw new Error("reader broke");
      },
      () => Promise.reject(new Error("reader broke")),
      () => null as never,
      () => 42 as never,
      () => ({ failure: "x", passThrough: "yes", retryable: "no" }) as never, // not booleans: no control flow, no mark
    ];
    for (const reader of readers) {
      const outcome = await runToolCall(setup().plugin, hostCall(invalid, reader));
      expect(outcome.status).toBe("reflect");
    }
    const outcome = await runToolCall(setup().plugin, hostCall(invalid, readers[0]));
    expect(outcome.status === "reflect" && outcome.error.message).toBe("Invalid units. Supported: celsius, fahrenheit");
  });
});
