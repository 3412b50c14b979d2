import { describe, expect, it } from "vitest";
import type { RetryReflectEvent } from "../src/events.js";
import { InMemoryIdempotencyStore, RetryReflectPlugin } from "../src/index.js";
import { argumentsFingerprint } from "../src/primitives.js";
import type { IdempotencyStore } from "../src/stores.js";

// A store that keeps a lock whose lease ended with no result (the Redis store with `replicas`)
// answers `in_doubt`: the write may have taken effect, so it must not run again under its key.

/** The in-memory store, except that one key is in doubt (its fingerprint that of `doubtful`'s arguments). */
function storeWithDoubt(doubtfulArgs: object): IdempotencyStore & { begins: number } {
  const inner = new InMemoryIdempotencyStore();
  const fingerprint = argumentsFingerprint(doubtfulArgs, "idempotency_key");
  const store = {
    begins: 0,
    async begin(key: string, fp: string, leaseMs: number) {
      store.begins++;
      if (fp === fingerprint || doubtfulKeys.has(key)) {
        doubtfulKeys.add(key);
        return { status: "in_doubt" as const, fingerprint };
      }
      return inner.begin(key, fp, leaseMs);
    },
    complete: inner.complete.bind(inner),
    release: inner.release.bind(inner),
  };
  const doubtfulKeys = new Set<string>();
  return store;
}

describe("a write in doubt", () => {
  const payment = { to: "IBAN-1", amount: 100, idempotency_key: "pay-1" };

  it("does not run: a stop (not recoverable) that says the outcome is unknown and must be checked, with its event", async () => {
    const events: RetryReflectEvent[] = [];
    const store = storeWithDoubt(payment);
    const plugin = RetryReflectPlugin.create({
      toolEffects: { pay: "write" },
      idempotency: { store },
      observers: [{ onEvent: (event) => events.push(event) }],
    });
    let runs = 0;
    const outcome = await plugin.execute({ toolName: "pay", args: payment, scope: "run-1" }, () => {
      runs++;
      return "paid";
    });
    expect(runs).toBe(0);
    expect(outcome).toMatchObject({
      status: "failed",
      reason: "not_recoverable",
      error: { code: "WRITE_IN_DOUBT", recoverable: false },
    });
    if (outcome.status !== "failed") throw new Error("unreachable");
    expect(outcome.message).toContain("may or may not have taken effect");
    expect(outcome.message).toContain("Do not call the tool again with this key");
    expect(outcome.message).not.toMatch(/corrected arguments|same arguments/);
    expect(events.find((event) => event.type === "idempotency_conflict")?.fields).toMatchObject({ tool_name: "pay", reason: "in_doubt" });
    // Not a failure of the tool: the circuit stays closed.
    expect(plugin.circuitState("pay")).toBe("closed");
  });

  it("called again, it still does not run; the same key with other arguments is a reused key", async () => {
    const store = storeWithDoubt(payment);
    const plugin = RetryReflectPlugin.create({ toolEffects: { pay: "write" }, idempotency: { store } });
    let runs = 0;
    const pay = (args: object) =>
      plugin.execute({ toolName: "pay", args, scope: "run-1" }, () => {
        runs++;
        return "paid";
      });
    expect(await pay(payment)).toMatchObject({ status: "failed", error: { code: "WRITE_IN_DOUBT" } });
    expect(await pay({ ...payment })).toMatchObject({ status: "failed", error: { code: "WRITE_IN_DOUBT" } });
    expect(await pay({ ...payment, amount: 200 })).toMatchObject({ status: "reflect", error: { code: "IDEMPOTENCY_KEY_REUSED" } });
    // Another key runs as usual.
    expect(await pay({ ...payment, idempotency_key: "pay-2", amount: 300 })).toMatchObject({ status: "success", value: "paid" });
    expect(runs).toBe(1);
  });

  it("a store's in_doubt without a fingerprint is a malformed answer: STORE_UNAVAILABLE, the write does not run", async () => {
    const store: IdempotencyStore = {
      begin: async () => ({ status: "in_doubt" }) as never,
      complete: async () => true,
      release: async () => true,
    };
    const plugin = RetryReflectPlugin.create({ toolEffects: { pay: "write" }, idempotency: { store } });
    let runs = 0;
    const outcome = await plugin.execute({ toolName: "pay", args: payment, scope: "run-1" }, () => {
      runs++;
      return "paid";
    });
    expect(outcome).toMatchObject({ status: "reflect", error: { code: "STORE_UNAVAILABLE" } });
    expect(runs).toBe(0);
  });
});
