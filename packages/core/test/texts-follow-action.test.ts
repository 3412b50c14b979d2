import { describe, expect, it } from "vitest";
import {
  DEFAULT_RETRY_LATER_PROMPT,
  type ExecuteOutcome,
  InMemoryIdempotencyStore,
  InvalidOptionError,
  RetryReflectPlugin,
} from "../src/index.js";
import type { IdempotencyStore } from "../src/stores.js";
import { createFakeClock } from "../src/testing.js";

// Each reflected failure gets the text of its action: "provide corrected arguments" only where the
// model's arguments can fix it; a call that did not run or is still running is asked for again
// with the same arguments (a write whose key the model "corrects" could run twice); a write without
// a key that failed transiently may have run, so the model is told to check first.

const CORRECT = "provide corrected arguments";

function reflected(outcome: ExecuteOutcome<unknown>): { prompt: string; action: string; code: string; message: string } {
  if (outcome.status !== "reflect") throw new Error(`expected reflect, got ${outcome.status}`);
  return { prompt: outcome.prompt, action: outcome.error.suggestedAction, code: outcome.error.code, message: outcome.message };
}

const neverEnds = () => new Promise<never>(() => {});

describe("texts follow the action", () => {
  it("IN_PROGRESS (another process holds the key): the same call again, with the same key, after the wait", async () => {
    const clock = createFakeClock();
    const store = new InMemoryIdempotencyStore({ clock });
    const options = { clock, toolEffects: { pay: "write" as const }, idempotency: { store, leaseMs: 10_000 } };
    const processA = RetryReflectPlugin.create(options);
    const processB = RetryReflectPlugin.create(options);
    const args = { amount: 5, idempotency_key: "pay-1" };
    void processA.execute({ toolName: "pay", args, namespace: "n" }, neverEnds);
    await clock.advance(0);
    const busy = reflected(await processB.execute({ toolName: "pay", args, scope: "b", namespace: "n" }, () => "paid twice"));
    expect(busy.code).toBe("IN_PROGRESS");
    expect(busy.prompt).not.toContain(CORRECT);
    expect(busy.prompt).toBe(
      `The tool 'pay' is temporarily unavailable: "The same 'pay' operation is already running elsewhere.". It may work again in about 1 s: call it again then with the same arguments (the same idempotency key, if it has one), or tell the user.`,
    );
    expect(busy.action).toContain("same arguments and key");
  });

  it("STORE_UNAVAILABLE: the write was not performed; the same call later", async () => {
    const store: IdempotencyStore = {
      begin: async () => {
        throw new Error("ECONNREFUSED");
      },
      complete: async () => true,
      release: async () => true,
    };
    const plugin = RetryReflectPlugin.create({ toolEffects: { pay: "write" }, idempotency: { store } });
    const outcome = reflected(await plugin.execute({ toolName: "pay", args: { amount: 5, idempotency_key: "k" } }, () => "paid"));
    expect(outcome.code).toBe("STORE_UNAVAILABLE");
    expect(outcome.prompt).not.toContain(CORRECT);
    expect(outcome.prompt).toContain("was not performed");
    expect(outcome.prompt).toContain("call it again then with the same arguments (the same idempotency key");
  });

  it("OVERLOADED: the same call after the refusal's wait", async () => {
    const clock = createFakeClock();
    const plugin = RetryReflectPlugin.create({ clock, maxConcurrent: 1, initialBackoffMs: 2_500, maxBackoffMs: 10_000 });
    void plugin.execute({ toolName: "search", args: { q: "a" } }, neverEnds);
    await clock.advance(0);
    const outcome = reflected(await plugin.execute({ toolName: "search", args: { q: "b" } }, () => "hits"));
    expect(outcome.code).toBe("OVERLOADED");
    expect(outcome.prompt).not.toContain(CORRECT);
    expect(outcome.prompt).toContain("in about 3 s");
  });

  it("a keyed write cut off at its time limit (it may still complete): the same call, not corrected arguments", async () => {
    const clock = createFakeClock();
    const plugin = RetryReflectPlugin.create({ clock, attemptTimeoutMs: 1_000, toolEffects: { pay: "write" } });
    const first = plugin.execute({ toolName: "pay", args: { amount: 5, idempotency_key: "k1" } }, neverEnds);
    await clock.advance(1_000);
    const outcome = reflected(await first);
    expect(outcome.code).toBe("TIMEOUT");
    expect(outcome.prompt).not.toContain(CORRECT);
    expect(outcome.prompt).toContain("call it again then with the same arguments (the same idempotency key");
  });

  it("a write without a key that failed transiently: check whether it took effect, never 'corrected arguments'", async () => {
    const clock = createFakeClock();
    const plugin = RetryReflectPlugin.create({ clock, toolEffects: { pay: "write" }, idempotency: { requireKey: false } });
    const outcome = reflected(
      await plugin.execute({ toolName: "pay", args: { amount: 5 } }, () => {
        throw Object.assign(new Error("socket hang up"), { code: "ECONNRESET" });
      }),
    );
    expect(outcome.code).toBe("TRANSIENT");
    expect(outcome.prompt).not.toContain(CORRECT);
    expect(outcome.prompt).toBe(
      `The tool 'pay' failed with: "socket hang up". The outcome is unknown: the action may or may not have taken effect. Check whether it did before calling again, and pass an idempotency key so that a retry cannot run it twice.`,
    );
    expect(outcome.action).toBe(outcome.prompt.slice(outcome.prompt.indexOf("The outcome is unknown")));
  });

  it("failures the arguments can fix keep the reflection prompt: a missing key, bad arguments", async () => {
    const plugin = RetryReflectPlugin.create({ toolEffects: { pay: "write" } });
    const missingKey = reflected(await plugin.execute({ toolName: "pay", args: { amount: 5 } }, () => "paid"));
    expect(missingKey.code).toBe("IDEMPOTENCY_KEY_REQUIRED");
    expect(missingKey.prompt).toContain(CORRECT);
    const invalid = reflected(
      await plugin.execute({ toolName: "lookup", args: { id: "x" } }, () => {
        throw Object.assign(new Error("id must be a number"), { status: 400 });
      }),
    );
    expect(invalid.code).toBe("INVALID_ARGUMENTS");
    expect(invalid.prompt).toContain(CORRECT);
  });

  it("retryLaterPrompt replaces the text, per plugin and per tool, with {retry_after_s}", async () => {
    const clock = createFakeClock();
    const plugin = RetryReflectPlugin.builder()
      .clock(clock)
      .maxConcurrent(1)
      .initialBackoffMs(1_000)
      .retryLaterPrompt("busy: {tool_name} again in {retry_after_s}s ({error_code})")
      .tool("slow", { retryLaterPrompt: "slow is busy: {error}" })
      .build();
    void plugin.execute({ toolName: "search", args: {} }, neverEnds);
    void plugin.execute({ toolName: "slow", args: {} }, neverEnds);
    await clock.advance(0);
    expect(reflected(await plugin.execute({ toolName: "search", args: {} }, () => 1)).prompt).toBe("busy: search again in 1s (OVERLOADED)");
    expect(reflected(await plugin.execute({ toolName: "slow", args: {} }, () => 1)).prompt).toBe(
      `slow is busy: "Too many calls of 'slow' are running at once (at most 1); this one was not run."`,
    );
  });

  it("an invalid retryLaterPrompt fails at build, naming the option and the placeholder", () => {
    expect(() => RetryReflectPlugin.create({ retryLaterPrompt: "again {when}" })).toThrow(InvalidOptionError);
    expect(() => RetryReflectPlugin.create({ retryLaterPrompt: "again {when}" })).toThrow(/retryLaterPrompt.*\{when\}/);
    expect(() => RetryReflectPlugin.create({ tools: { pay: { retryLaterPrompt: "" } } })).toThrow(/tools\.pay\.retryLaterPrompt/);
    expect(DEFAULT_RETRY_LATER_PROMPT).toContain("{retry_after_s}");
  });
});
