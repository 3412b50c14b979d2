import { describe, expect, it } from "vitest";
import { RetryReflectPlugin, ToolError } from "../src/index.js";
import { createFakeClock } from "../src/testing.js";

describe("attempt numbers start at 1 on every path", () => {
  it("classifyError sees 1, 2, 3 for three failing attempts of a tool that was healthy", async () => {
    const clock = createFakeClock();
    const seen: number[] = [];
    const plugin = RetryReflectPlugin.create({
      clock,
      maxRetries: 2,
      // No patience: the call makes exactly its maxRetries in-place retries (the floor), then hands over.
      patienceMs: 0,
      classifyError: (_error, context) => {
        seen.push(context.attempt);
        return new ToolError({ code: "UPSTREAM", message: "upstream failed", recoverable: true, kind: "transient" });
      },
    });
    const outcome = plugin.execute({ toolName: "search", args: {}, scope: "run" }, () => {
      throw new Error("boom");
    });
    await clock.runAll();
    // Transient, past the patience: told as temporary (no longer a stop).
    expect((await outcome).status).toBe("reflect");
    expect(seen).toEqual([1, 2, 3]);
  });

  it("so do classifyError and isFailure with an observer (the observed path)", async () => {
    const seen: number[] = [];
    const plugin = RetryReflectPlugin.create({
      maxRetries: 0,
      observers: [{ onCallStart: () => {} }],
      classifyError: (_error, context) => {
        seen.push(context.attempt);
        return undefined;
      },
    });
    await plugin.execute({ toolName: "search", args: {}, scope: "run" }, () => {
      throw new Error("boom");
    });
    expect(seen).toEqual([1]);
  });
});
