import { describe, expect, it } from "vitest";
import { RetryReflectPlugin } from "../src/index.js";
import type { IdempotencyStore } from "../src/stores.js";

describe("STORE_UNAVAILABLE keeps the store's error", () => {
  it("as the outcome error's cause, never in the model's text", async () => {
    const storeError = new Error("ECONNREFUSED 10.0.0.7:6379 (password=hunter2x)");
    // `begin` throws synchronously (not a rejection): the guard reads it as one that rejects.
    const store: IdempotencyStore = {
      begin: () => {
        throw storeError;
      },
      complete: async () => true,
      release: async () => true,
    };
    let runs = 0;
    const plugin = RetryReflectPlugin.create({ toolEffects: { pay: "write" }, idempotency: { store } });
    const outcome = await plugin.execute({ toolName: "pay", args: { amount: 5, idempotency_key: "k" } }, () => runs++);
    expect(runs).toBe(0);
    expect(outcome.status === "reflect" && outcome.error.code).toBe("STORE_UNAVAILABLE");
    const error = outcome.status === "reflect" ? outcome.error : undefined;
    // The outcome's error may be a cleaned copy whose cause is the refusal: the store's error is on the chain.
    const chain: unknown[] = [];
    for (let cause: unknown = error?.cause; cause !== undefined && chain.length < 5; cause = (cause as { cause?: unknown }).cause)
      chain.push(cause);
    expect(chain).toContain(storeError);
    expect(outcome.status === "reflect" && outcome.message).not.toContain("ECONNREFUSED");
  });
});
