import { describe, expect, it } from "vitest";
import type { RetryReflectEvent } from "../src/events.js";
import { InMemoryIdempotencyStore, InvalidOptionError, RetryReflectPlugin, type ToolContext } from "../src/index.js";
import type { IdempotencyStore } from "../src/stores.js";
import { createFakeClock } from "../src/testing.js";

interface Transfer {
  readonly to: string;
  readonly amount: number;
  readonly idempotency_key?: string;
}

/** One plugin per tenant, the store shared (as two tenants of one agent server share Redis). */
function tenants(options: { derive?: "never" | "when-missing" | "always" } = {}) {
  const clock = createFakeClock();
  const store = new InMemoryIdempotencyStore({ clock });
  const make = () =>
    RetryReflectPlugin.create({ clock, toolEffects: { transfer: "write" }, idempotency: { store, derive: options.derive ?? "never" } });
  const ran: string[] = [];
  const transfer = (who: string) => (args: Transfer, context: ToolContext) => {
    ran.push(`${who}:${args.to}:${args.amount}:${context.idempotencyKey === undefined ? "no-key" : "key"}`);
    return `receipt of ${who}: ${args.amount} to ${args.to}`;
  };
  return { clock, store, alice: make(), carol: make(), ran, transfer };
}

describe("tenants never share a write", () => {
  it("a key another tenant used is a fresh key: Carol's transfer runs and she gets her own receipt", async () => {
    const { alice, carol, ran, transfer } = tenants();
    const args = { to: "IBAN-ALICE-FRIEND", amount: 100, idempotency_key: "transfer-1" };
    const first = await alice.execute({ toolName: "transfer", args, scope: "tenant-alice" }, transfer("alice"));
    const second = await carol.execute({ toolName: "transfer", args: { ...args }, scope: "tenant-carol" }, transfer("carol"));
    expect(first).toMatchObject({ status: "success", replayed: false });
    expect(second).toEqual({
      status: "success",
      value: "receipt of carol: 100 to IBAN-ALICE-FRIEND",
      attempt: 1,
      replayed: false,
    });
    expect(ran).toEqual(["alice:IBAN-ALICE-FRIEND:100:key", "carol:IBAN-ALICE-FRIEND:100:key"]);
  });

  it("the same key with other arguments in another namespace runs too: no IDEMPOTENCY_KEY_REUSED tells Carol the key exists", async () => {
    const { alice, carol, ran, transfer } = tenants();
    await alice.execute(
      { toolName: "transfer", args: { to: "A", amount: 1, idempotency_key: "transfer-1" }, namespace: "alice" },
      transfer("alice"),
    );
    const outcome = await carol.execute(
      { toolName: "transfer", args: { to: "C", amount: 2, idempotency_key: "transfer-1" }, namespace: "carol" },
      transfer("carol"),
    );
    expect(outcome).toMatchObject({ status: "success", value: "receipt of carol: 2 to C", replayed: false });
    expect(ran).toHaveLength(2);
  });

  it("within one namespace a key still replays across runs, plugins and scopes (a queue redelivering a request)", async () => {
    const { alice, carol, ran, transfer } = tenants();
    const args = { to: "A", amount: 1, idempotency_key: "order-7" };
    await alice.execute({ toolName: "transfer", args, scope: "run-1", namespace: "tenant-42" }, transfer("replica-a"));
    const again = await carol.execute({ toolName: "transfer", args, scope: "run-2", namespace: "tenant-42" }, transfer("replica-b"));
    expect(again).toMatchObject({ status: "success", value: "receipt of replica-a: 1 to A", replayed: true });
    const reused = await carol.execute(
      { toolName: "transfer", args: { ...args, amount: 2 }, scope: "run-3", namespace: "tenant-42" },
      transfer("replica-b"),
    );
    expect(reused.status === "reflect" && reused.error.code).toBe("IDEMPOTENCY_KEY_REUSED");
    expect(ran).toEqual(["replica-a:A:1:key"]);
  });

  it("derived keys merge identical keyless writes within one run, never across runs or namespaces", async () => {
    const { alice, carol, ran, transfer } = tenants({ derive: "always" });
    const args = { to: "A", amount: 1 };
    const run1 = await alice.execute({ toolName: "transfer", args, scope: "run-1", namespace: "n" }, transfer("a"));
    const sameRun = await alice.execute({ toolName: "transfer", args: { ...args }, scope: "run-1", namespace: "n" }, transfer("a"));
    const otherRun = await alice.execute({ toolName: "transfer", args, scope: "run-2", namespace: "n" }, transfer("a"));
    const otherNamespace = await carol.execute({ toolName: "transfer", args, scope: "run-1", namespace: "m" }, transfer("c"));
    expect([run1, sameRun, otherRun, otherNamespace].map((outcome) => outcome.status === "success" && outcome.replayed)).toEqual([
      false,
      true,
      false,
      false,
    ]);
    expect(ran).toEqual(["a:A:1:key", "a:A:1:key", "c:A:1:key"]);
  });

  it("with trackingScope global, results are still kept apart by the call's own scope", async () => {
    const clock = createFakeClock();
    const plugin = RetryReflectPlugin.create({ clock, trackingScope: "global", toolEffects: { transfer: "write" } });
    const args = { to: "A", amount: 1, idempotency_key: "k" };
    await plugin.execute({ toolName: "transfer", args, scope: "tenant-alice" }, () => "alice");
    const carol = await plugin.execute({ toolName: "transfer", args, scope: "tenant-carol" }, () => "carol");
    expect(carol).toMatchObject({ status: "success", value: "carol", replayed: false });
  });

  it("no store ever sees a namespace, a tool name or a key as it is: one hashed key per (namespace, tool, key)", async () => {
    const seen: string[] = [];
    const inner = new InMemoryIdempotencyStore();
    const store: IdempotencyStore = {
      begin: (key, fingerprint, leaseMs) => {
        seen.push(key);
        return inner.begin(key, fingerprint, leaseMs);
      },
      complete: (key, token, value, ttlMs) => inner.complete(key, token, value, ttlMs),
      release: (key, token) => inner.release(key, token),
    };
    const plugin = RetryReflectPlugin.create({ toolEffects: { transfer: "write", refund: "write" }, idempotency: { store } });
    const call = (toolName: string, namespace: string, key: string) =>
      plugin.execute({ toolName, args: { to: "A", amount: 1, idempotency_key: key }, namespace }, () => "ok");
    await call("transfer", "tenant-secret-name", "key-secret-1");
    await call("transfer", "tenant-secret-name", "key-secret-1");
    await call("transfer", "other", "key-secret-1");
    await call("refund", "tenant-secret-name", "key-secret-1");
    // A namespace ending where a tool name begins is not another namespace's key.
    await call("transfer", "tenant-secret-name\u0000", "key-secret-1");
    expect(seen).toHaveLength(5);
    for (const key of seen) {
      expect(key).toMatch(/^[0-9a-f]{32}$/);
      expect(key).not.toContain("secret");
    }
    expect(seen[0]).toBe(seen[1]);
    expect(new Set(seen).size).toBe(4);
  });

  it("rejects a namespace that is not a non-empty string, naming it", async () => {
    const plugin = RetryReflectPlugin.create();
    await expect(plugin.execute({ toolName: "t", args: {}, namespace: "" }, () => 1)).rejects.toThrow(/`namespace`.*non-empty string/);
    await expect(plugin.execute({ toolName: "t", args: {}, namespace: 42 as unknown as string }, () => 1)).rejects.toThrow(
      /`namespace`.*received 42/,
    );
  });
});

describe("stored results are bounded (idempotency.maxResultBytes)", () => {
  it("returns a result over the limit to the caller, stores nothing, says so, and frees the key so a retry runs", async () => {
    const clock = createFakeClock();
    const store = new InMemoryIdempotencyStore({ clock });
    const events: RetryReflectEvent[] = [];
    const plugin = RetryReflectPlugin.create({
      clock,
      toolEffects: { report: "write" },
      idempotency: { store, maxResultBytes: 1000 },
      observers: [{ onEvent: (event) => events.push(event) }],
    });
    const big = "é".repeat(600); // 600 characters, 1,200 bytes of UTF-8 (+ 2 quotes)
    let runs = 0;
    const args = { name: "q3", idempotency_key: "r-1" };
    const first = await plugin.execute({ toolName: "report", args }, () => {
      runs++;
      return big;
    });
    expect(first).toMatchObject({ status: "success", value: big, replayed: false });
    expect(events.filter((event) => event.type === "store_error").map((event) => event.fields)).toEqual([
      {
        tool_name: "report",
        operation: "complete",
        reason: "too_large",
        error: "the result is larger than idempotency.maxResultBytes (1000 bytes): not stored for replay",
      },
    ]);
    const again = await plugin.execute({ toolName: "report", args }, () => {
      runs++;
      return big;
    });
    expect(again).toMatchObject({ status: "success", replayed: false });
    expect(runs).toBe(2);
  });

  it("stores a result at the limit, and counts UTF-8 bytes, not characters", async () => {
    const plugin = RetryReflectPlugin.create({ toolEffects: { report: "write" }, idempotency: { maxResultBytes: 1202 } });
    const exact = "é".repeat(600); // JSON text: 1,202 bytes
    let runs = 0;
    const args = { idempotency_key: "r-1" };
    const report = () => {
      runs++;
      return exact;
    };
    await plugin.execute({ toolName: "report", args }, report);
    const again = await plugin.execute({ toolName: "report", args }, report);
    expect(again).toMatchObject({ status: "success", replayed: true });
    expect(runs).toBe(1);
  });

  it("keeps 200 results of 5 MB out of the in-memory store", async () => {
    const store = new InMemoryIdempotencyStore();
    const plugin = RetryReflectPlugin.create({ toolEffects: { export: "write" }, idempotency: { store } });
    const blob = "x".repeat(5 * 1024 * 1024);
    let stored = 0;
    const complete = store.complete.bind(store);
    store.complete = (key, token, value, ttlMs) => {
      stored++;
      return complete(key, token, value, ttlMs);
    };
    for (let index = 0; index < 200; index++) {
      const outcome = await plugin.execute({ toolName: "export", args: { idempotency_key: `e-${index}` } }, () => blob);
      expect(outcome.status).toBe("success");
    }
    expect(stored).toBe(0);
  });

  it("is validated at create, for the plugin and per tool", () => {
    expect(() => RetryReflectPlugin.create({ idempotency: { maxResultBytes: -1 } })).toThrow(InvalidOptionError);
    expect(() => RetryReflectPlugin.create({ idempotency: { maxResultBytes: 1.5 } })).toThrow(/idempotency\.maxResultBytes/);
    expect(() => RetryReflectPlugin.create({ tools: { pay: { idempotency: { maxResultBytes: "big" as unknown as number } } } })).toThrow(
      /tools\.pay\.idempotency\.maxResultBytes/,
    );
    expect(RetryReflectPlugin.create().options.idempotency.maxResultBytes).toBe(1_048_576);
  });
});

describe("hostile arguments never make execute reject", () => {
  const plugin = () => RetryReflectPlugin.create({ toolEffects: { pay: "write" } });

  it("a getter that throws, in a write's arguments: INVALID_ARGUMENTS, the tool never runs", async () => {
    let runs = 0;
    const args = { amount: 1, idempotency_key: "k" };
    Object.defineProperty(args, "to", {
      enumerable: true,
      get() {
        throw new Error("boom");
      },
    });
    const outcome = await plugin().execute({ toolName: "pay", args }, () => runs++);
    expect(outcome.status === "reflect" && outcome.error.code).toBe("INVALID_ARGUMENTS");
    expect(runs).toBe(0);
  });

  it("a key argument whose getter throws, and a Proxy whose traps throw", async () => {
    const keyGetter = {};
    Object.defineProperty(keyGetter, "idempotency_key", {
      enumerable: true,
      get() {
        throw new Error("no key for you");
      },
    });
    const proxy = new Proxy(
      { idempotency_key: "k" },
      {
        ownKeys() {
          throw new Error("trap");
        },
      },
    );
    for (const args of [keyGetter, proxy]) {
      const outcome = await plugin().execute({ toolName: "pay", args }, () => "ran");
      expect(outcome.status === "reflect" && outcome.error.code).toBe("INVALID_ARGUMENTS");
      expect(outcome.status === "reflect" && outcome.message).not.toContain("trap");
    }
  });
});

describe("a hostile value thrown by a write tool", () => {
  it("a Proxy whose traps throw, thrown by a keyed write: the call ends failed, execute never rejects", async () => {
    const plugin = RetryReflectPlugin.create({ toolEffects: { pay: "write" }, maxRetries: 0 });
    const hostile = new Proxy(
      {},
      {
        get() {
          throw new Error("trap: get");
        },
        getPrototypeOf() {
          throw new Error("trap: getPrototypeOf");
        },
        has() {
          throw new Error("trap: has");
        },
      },
    );
    const outcome = await plugin.execute({ toolName: "pay", args: { amount: 1, idempotency_key: "k" } }, () => {
      throw hostile;
    });
    expect(outcome.status).toBe("failed");
    expect(outcome.status === "failed" && outcome.error.code).toBe("TOOL_FAILED");
  });
});

describe("one plugin, one key in many namespaces and tools", () => {
  it("each namespace and tool replays only its own result, in any order, also after more keys than the plugin remembers", async () => {
    const plugin = RetryReflectPlugin.create({ toolEffects: { transfer: "write", refund: "write" } });
    const runs: string[] = [];
    const tool = (label: string) => (args: Transfer) => {
      runs.push(`${label}:${args.amount}`);
      return `${label} ${args.amount}`;
    };
    const call = (toolName: string, namespace: string, amount: number, key = "k-1") =>
      plugin.execute(
        { toolName, args: { to: "X", amount, idempotency_key: key }, namespace, scope: namespace },
        tool(`${toolName}@${namespace}`),
      );
    const first = [
      await call("transfer", "a", 1),
      await call("transfer", "b", 2),
      await call("refund", "a", 3),
      await call("refund", "b", 4),
    ];
    expect(first.map((outcome) => outcome.status === "success" && outcome.replayed)).toEqual([false, false, false, false]);
    // Interleaved again, in another order: each replays its own receipt.
    for (let round = 0; round < 2; round++) {
      expect(await call("refund", "b", 4)).toMatchObject({ status: "success", value: "refund@b 4", replayed: true });
      expect(await call("transfer", "a", 1)).toMatchObject({ status: "success", value: "transfer@a 1", replayed: true });
      expect(await call("refund", "a", 3)).toMatchObject({ status: "success", value: "refund@a 3", replayed: true });
      expect(await call("transfer", "b", 2)).toMatchObject({ status: "success", value: "transfer@b 2", replayed: true });
      // More distinct keys than the plugin keeps hashed (1,024) between the rounds.
      for (let index = 0; index < 1100; index++) await call("transfer", "c", index, `other-${round}-${index}`);
    }
    expect(runs.filter((run) => !run.startsWith("transfer@c"))).toEqual(["transfer@a:1", "transfer@b:2", "refund@a:3", "refund@b:4"]);
    expect(runs.filter((run) => run.startsWith("transfer@c"))).toHaveLength(2200);
  });
});
