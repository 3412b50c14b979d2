import { describe, expect, it } from "vitest";
import type { RetryReflectEvent } from "../src/events.js";
import { consoleLogger, RetryReflectPlugin, ToolError } from "../src/index.js";
import { createFakeClock } from "../src/testing.js";

function setup(options: Parameters<typeof RetryReflectPlugin.create>[0] = {}) {
  const events: RetryReflectEvent[] = [];
  const lines: string[] = [];
  const plugin = RetryReflectPlugin.create({
    clock: createFakeClock(),
    toolEffects: { pay: "write" },
    observers: [{ onEvent: (event) => events.push(event) }, consoleLogger({ write: (line) => lines.push(line) })],
    ...options,
  });
  return { plugin, events, lines };
}

/** Everything a call's failure wrote where a person or a model reads it. */
function sinks(outcome: unknown, events: readonly RetryReflectEvent[], lines: readonly string[]): string {
  return JSON.stringify({ outcome, events: events.map((event) => event.fields), lines });
}

describe("untrusted text is cleaned in every sink", () => {
  it("masks the call's idempotency key echoed in the tool's error text: outcome, events, console log", async () => {
    const { plugin, events, lines } = setup({ maxRetries: 0 });
    const key = "idem-7f3c9a21-5b2e";
    const outcome = await plugin.execute({ toolName: "pay", args: { amount: 5, idempotency_key: key }, scope: "run" }, () => {
      throw new ToolError({
        code: "PAYMENT_DECLINED",
        message: `Payment ${key} declined by the bank`,
        recoverable: true,
        suggestedAction: `Do not reuse ${key}`,
        details: { request: key },
      });
    });
    expect(outcome.status).toBe("failed");
    const written = sinks(
      { message: outcome.status === "failed" ? outcome.message : "", error: outcome.status === "failed" ? outcome.error.toJSON() : {} },
      events,
      lines,
    );
    expect(written).not.toContain(key);
    expect(written).toContain("[REDACTED]");
    expect(lines.some((line) => line.includes("retries exhausted"))).toBe(true);
  });

  it("masks a short key only where it stands alone", async () => {
    const { plugin } = setup();
    const outcome = await plugin.execute({ toolName: "pay", args: { amount: 5, idempotency_key: "42" }, scope: "run" }, () => {
      throw new Error("Invalid amount for request 42 (code 420)");
    });
    expect(outcome.status === "reflect" && outcome.error.message).toBe("Invalid amount for request [REDACTED] (code 420)");
  });

  it("replaces an error_code that is not an UPPER_SNAKE identifier by TOOL_FAILED, and caps a huge one", async () => {
    const { plugin, events } = setup({ circuitBreakerThreshold: 100 });
    for (const code of ["x".repeat(10_000_000), "not a code", "lower_case", "A".repeat(65), "DROP TABLE;"]) {
      const outcome = await plugin.execute({ toolName: "search", args: {}, scope: code.slice(0, 20) }, () => ({
        error_code: code,
        message: "nope",
        recoverable: true,
      }));
      expect(outcome.status === "reflect" && outcome.error.code).toBe("TOOL_FAILED");
      expect(outcome.status === "reflect" && outcome.message.length).toBeLessThan(5000);
    }
    expect(
      events
        .filter((event) => event.type === "retry")
        .every((event) => event.type === "retry" && event.fields.error_code === "TOOL_FAILED"),
    ).toBe(true);
    const kept = await plugin.execute({ toolName: "search", args: {}, scope: "ok" }, () => ({
      error_code: "RECORD_NOT_FOUND",
      message: "no such id",
      recoverable: true,
    }));
    expect(kept.status === "reflect" && kept.error.code).toBe("RECORD_NOT_FOUND");
  });

  it("caps and redacts a returned error's details", async () => {
    const { plugin } = setup();
    const huge = await plugin.execute({ toolName: "search", args: {}, scope: "a" }, () => ({
      error_code: "UPSTREAM_ERROR",
      message: "upstream failed",
      recoverable: true,
      details: { body: "y".repeat(10_000_000) },
    }));
    expect(huge.status).toBe("reflect");
    if (huge.status !== "reflect") return;
    expect(huge.message.length).toBeLessThan(10_000);
    expect(JSON.stringify(huge.error.details).length).toBeLessThan(5000);
    // A long string is cut where it stands: the structure is kept.
    expect(huge.error.details).toEqual({ body: expect.stringMatching(/^y+… \[truncated\]$/) });

    const secret = await plugin.execute({ toolName: "search", args: {}, scope: "b" }, () => ({
      error_code: "UPSTREAM_ERROR",
      message: "upstream failed",
      recoverable: true,
      details: { status: 401, password: "hunter2", url: "https://admin:s3cret@db.internal/x" },
    }));
    expect(secret.status === "reflect" && JSON.stringify(secret.error.details)).not.toMatch(/hunter2|s3cret/);
    expect(secret.status === "reflect" && secret.error.details).toMatchObject({ status: 401 });
  });

  it("caps a returned error's suggested action and message", async () => {
    const { plugin } = setup();
    const outcome = await plugin.execute({ toolName: "search", args: {}, scope: "a" }, () => ({
      error_code: "UPSTREAM_ERROR",
      message: "m".repeat(100_000),
      recoverable: true,
      suggested_action: "s".repeat(100_000),
    }));
    expect(outcome.status === "reflect" && outcome.message.length).toBeLessThan(5000);
  });
});

describe("fingerprints and deep arguments", () => {
  function nested(depth: number): unknown {
    let value: unknown = { leaf: true };
    for (let level = 0; level < depth; level++) value = { next: value };
    return value;
  }

  it("write arguments nested 20,000 levels deep: a clear INVALID_ARGUMENTS, the tool does not run", async () => {
    const { plugin } = setup();
    let runs = 0;
    const outcome = await plugin.execute(
      { toolName: "pay", args: { idempotency_key: "k-deep", payload: nested(20_000) }, scope: "run" },
      () => {
        runs++;
        return "paid";
      },
    );
    expect(outcome.status).toBe("reflect");
    if (outcome.status !== "reflect") return;
    expect(outcome.error.code).toBe("INVALID_ARGUMENTS");
    expect(outcome.error.message).toBe("The arguments are nested deeper than 1000 levels.");
    expect(runs).toBe(0);
    expect(plugin.circuitState("pay")).toBe("closed");
  });

  it("a reflection whose template shows {args} survives arguments nested 20,000 levels deep", async () => {
    const { plugin } = setup({ reflectionPrompt: "{tool_name} failed: {error}. Arguments: {args}" });
    const outcome = await plugin.execute({ toolName: "search", args: { query: nested(20_000) }, scope: "run" }, () => {
      throw new Error("Invalid query");
    });
    expect(outcome.status === "reflect" && outcome.prompt).toContain("search failed");
  });

  it("two Maps with different contents are different writes, not a replay", async () => {
    const { plugin } = setup();
    const runs: unknown[] = [];
    const pay = (args: unknown) => {
      runs.push(args);
      return "ok";
    };
    const first = await plugin.execute({ toolName: "pay", args: { idempotency_key: "k-map", items: new Map([["a", 1]]) } }, pay);
    const second = await plugin.execute({ toolName: "pay", args: { idempotency_key: "k-map", items: new Map([["b", 2]]) } }, pay);
    expect(first.status).toBe("success");
    expect(second.status === "reflect" && second.error.code).toBe("IDEMPOTENCY_KEY_REUSED");
    const bigint = await plugin.execute({ toolName: "pay", args: { idempotency_key: "k-big", amount: 1n } }, pay);
    const text = await plugin.execute({ toolName: "pay", args: { idempotency_key: "k-big", amount: "1" } }, pay);
    expect(bigint.status).toBe("success");
    expect(text.status === "reflect" && text.error.code).toBe("IDEMPOTENCY_KEY_REUSED");
    expect(runs).toHaveLength(2);
  });
});
