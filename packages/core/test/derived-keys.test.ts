import { describe, expect, it } from "vitest";
import type { IdempotencyDerive } from "../src/config/options.js";
import type { RetryReflectEvent } from "../src/events.js";
import { type ExecuteOutcome, type RetryReflectOptions, RetryReflectPlugin, type ToolContext } from "../src/index.js";
import { createFakeClock } from "../src/testing.js";

// `idempotency.derive` for `write` tools: "never" (the key argument, or `key(call)`),
// "when-missing" (a keyless write gets a key from scope, tool and canonical arguments), "always"
// (the key is always derived, so that a write re-issued with a new key is still deduplicated).

/** A promise and the function that resolves it: lets a test hold tools in flight. */
function gate(): { promise: Promise<void>; open: () => void } {
  let open!: () => void;
  const promise = new Promise<void>((resolve) => (open = resolve));
  return { promise, open };
}

interface Payment {
  readonly account: string;
  readonly amount: number;
  readonly idempotency_key?: string;
}

function setup(options: RetryReflectOptions = {}) {
  const clock = createFakeClock();
  const events: RetryReflectEvent[] = [];
  const plugin = RetryReflectPlugin.create({
    clock,
    toolEffects: { pay: "write" },
    observers: [{ onEvent: (event) => events.push(event) }],
    ...options,
  });
  const runs: Array<{ args: Payment; key: string | undefined }> = [];
  const pay = (args: Payment, context: ToolContext) => {
    runs.push({ args, key: context.idempotencyKey });
    return { receipt: `r-${runs.length}` };
  };
  const replays = () => events.filter((event) => event.type === "idempotent_replay").length;
  return { clock, plugin, events, runs, pay, replays };
}

const success = (outcome: ExecuteOutcome<unknown>) =>
  outcome.status === "success" ? { value: outcome.value, replayed: outcome.replayed } : outcome.error.code;

describe('derive: "never" (the default) keeps the key argument', () => {
  it("uses the key argument; a keyless write is refused with IDEMPOTENCY_KEY_REQUIRED; a new key runs again", async () => {
    const { plugin, runs, pay, events } = setup();
    expect(plugin.options.idempotency.derive).toBe("never");
    const keyless = await plugin.execute({ toolName: "pay", args: { account: "a", amount: 5 }, scope: "s" }, pay);
    expect(keyless.status === "reflect" && keyless.error.code).toBe("IDEMPOTENCY_KEY_REQUIRED");
    expect(events.some((event) => event.type === "idempotency_conflict" && event.fields.reason === "key_required")).toBe(true);
    expect(runs).toHaveLength(0);
    const first = await plugin.execute({ toolName: "pay", args: { account: "a", amount: 5, idempotency_key: "k-1" }, scope: "s" }, pay);
    const second = await plugin.execute({ toolName: "pay", args: { account: "a", amount: 5, idempotency_key: "k-2" }, scope: "s" }, pay);
    expect([success(first), success(second)]).toEqual([
      { value: { receipt: "r-1" }, replayed: false },
      { value: { receipt: "r-2" }, replayed: false },
    ]);
    expect(runs.map((run) => run.key)).toEqual(["k-1", "k-2"]);
  });

  it("uses key(call) when given, and without requireKey runs a keyless write unguarded (every time)", async () => {
    const { plugin, runs, pay } = setup({ idempotency: { key: (call) => (call.args as { ref?: string }).ref, requireKey: false } });
    const keyed = { account: "a", amount: 5, ref: "ref-1" };
    await plugin.execute({ toolName: "pay", args: keyed, scope: "s" }, pay);
    const replayed = await plugin.execute({ toolName: "pay", args: { ...keyed }, scope: "s" }, pay);
    expect(success(replayed)).toEqual({ value: { receipt: "r-1" }, replayed: true });
    await plugin.execute({ toolName: "pay", args: { account: "a", amount: 5 }, scope: "s" }, pay);
    await plugin.execute({ toolName: "pay", args: { account: "a", amount: 5 }, scope: "s" }, pay);
    expect(runs.map((run) => run.key)).toEqual(["ref-1", undefined, undefined]);
  });
});

describe('derive: "when-missing"', () => {
  it("gives a keyless write a derived key that reaches the tool; the same keyless write is replayed, not run twice", async () => {
    const { plugin, runs, pay, replays } = setup({ idempotency: { derive: "when-missing" } });
    const first = await plugin.execute({ toolName: "pay", args: { account: "a", amount: 5 }, scope: "s" }, pay);
    expect(success(first)).toEqual({ value: { receipt: "r-1" }, replayed: false });
    expect(runs).toHaveLength(1);
    const derived = runs[0]?.key;
    expect(typeof derived).toBe("string");
    expect(derived?.length).toBeGreaterThan(0);
    // The same write again, its keys in another order: the stored result, the tool not run.
    const again = await plugin.execute({ toolName: "pay", args: { amount: 5, account: "a" }, scope: "s" }, pay);
    expect(success(again)).toEqual({ value: { receipt: "r-1" }, replayed: true });
    expect(runs).toHaveLength(1);
    expect(replays()).toBe(1);
    // Other arguments: another key, another run.
    await plugin.execute({ toolName: "pay", args: { account: "a", amount: 6 }, scope: "s" }, pay);
    expect(runs).toHaveLength(2);
    expect(runs[1]?.key).not.toBe(derived);
  });

  it("keeps a key the model gave (a new key runs again), and derives the same key each time otherwise", async () => {
    const { plugin, runs, pay } = setup({ idempotency: { derive: "when-missing" } });
    const args = { account: "a", amount: 5 };
    await plugin.execute({ toolName: "pay", args: { ...args, idempotency_key: "k-1" }, scope: "s" }, pay);
    await plugin.execute({ toolName: "pay", args: { ...args, idempotency_key: "k-2" }, scope: "s" }, pay);
    await plugin.execute({ toolName: "pay", args, scope: "s" }, pay);
    await plugin.execute({ toolName: "pay", args, scope: "s" }, pay);
    expect(runs.map((run) => (run.key?.startsWith("k-") ? run.key : "derived"))).toEqual(["k-1", "k-2", "derived"]);
  });

  it("derives different keys for different scopes (each agent run's write is its own)", async () => {
    const { plugin, runs, pay } = setup({ idempotency: { derive: "when-missing" } });
    const args = { account: "a", amount: 5 };
    await plugin.execute({ toolName: "pay", args, scope: "run-1" }, pay);
    await plugin.execute({ toolName: "pay", args, scope: "run-2" }, pay);
    const replayed = await plugin.execute({ toolName: "pay", args, scope: "run-1" }, pay);
    expect(runs).toHaveLength(2);
    expect(runs[0]?.key).not.toBe(runs[1]?.key);
    expect(success(replayed)).toEqual({ value: { receipt: "r-1" }, replayed: true });
  });

  it("runs concurrent identical keyless writes once: the others join it or replay its result", async () => {
    const { clock, plugin, runs } = setup({ idempotency: { derive: "when-missing" } });
    const held = gate();
    const calls = Array.from({ length: 50 }, () =>
      plugin.execute({ toolName: "pay", args: { account: "a", amount: 5 }, scope: "s" }, async (args: Payment, context) => {
        runs.push({ args, key: context.idempotencyKey });
        await held.promise;
        return { receipt: "r-1" };
      }),
    );
    await clock.advance(0);
    expect(runs).toHaveLength(1);
    held.open();
    const outcomes = await Promise.all(calls);
    expect(runs).toHaveLength(1);
    expect(outcomes.every((outcome) => outcome.status === "success" && (outcome.value as { receipt: string }).receipt === "r-1")).toBe(
      true,
    );
    expect(outcomes.filter((outcome) => outcome.status === "success" && outcome.replayed)).toHaveLength(49);
  });

  it("retries a keyless write in place after a transient failure (it is guarded now), under the same derived key", async () => {
    const { clock, plugin, runs } = setup({ idempotency: { derive: "when-missing" } });
    let attempts = 0;
    const outcome = plugin.execute({ toolName: "pay", args: { account: "a", amount: 5 }, scope: "s" }, (args: Payment, context) => {
      attempts++;
      runs.push({ args, key: context.idempotencyKey });
      if (attempts === 1) throw Object.assign(new Error("socket hang up"), { code: "ECONNRESET" });
      return { receipt: "r-1" };
    });
    await clock.runAll();
    expect(await outcome).toEqual({ status: "success", value: { receipt: "r-1" }, attempt: 2, replayed: false });
    expect(runs).toHaveLength(2);
    expect(runs[0]?.key).toBe(runs[1]?.key);
  });

  it("a failed keyless write is not stored: the model may call it again and it runs", async () => {
    const { clock, plugin } = setup({ idempotency: { derive: "when-missing" } });
    let runs = 0;
    const failing = await plugin.execute({ toolName: "pay", args: { account: "a", amount: 5 }, scope: "s" }, () => {
      runs++;
      throw new Error("card declined");
    });
    expect(failing.status).toBe("reflect");
    const retried = plugin.execute({ toolName: "pay", args: { account: "a", amount: 5 }, scope: "s" }, () => {
      runs++;
      return { receipt: "r-2" };
    });
    await clock.runAll();
    expect(success(await retried)).toEqual({ value: { receipt: "r-2" }, replayed: false });
    expect(runs).toBe(2);
  });
});

describe('derive: "always"', () => {
  it("deduplicates a write the model re-issued with a new key: the tool runs once, the second is replayed", async () => {
    const { plugin, runs, pay, replays } = setup({ idempotency: { derive: "always" } });
    const first = await plugin.execute({ toolName: "pay", args: { account: "a", amount: 5, idempotency_key: "k-1" }, scope: "s" }, pay);
    const second = await plugin.execute({ toolName: "pay", args: { account: "a", amount: 5, idempotency_key: "k-2" }, scope: "s" }, pay);
    const keyless = await plugin.execute({ toolName: "pay", args: { amount: 5, account: "a" }, scope: "s" }, pay);
    expect(success(first)).toEqual({ value: { receipt: "r-1" }, replayed: false });
    expect(success(second)).toEqual({ value: { receipt: "r-1" }, replayed: true });
    expect(success(keyless)).toEqual({ value: { receipt: "r-1" }, replayed: true });
    expect(runs).toHaveLength(1);
    expect(replays()).toBe(2);
    // The tool got the derived key, not the model's.
    expect(runs[0]?.key).not.toBe("k-1");
    expect(runs[0]?.key?.length).toBeGreaterThan(0);
  });

  it("different arguments → different keys; different scopes → different keys; different tools → different keys", async () => {
    const { plugin, runs, pay } = setup({ idempotency: { derive: "always" }, toolEffects: { pay: "write", refund: "write" } });
    await plugin.execute({ toolName: "pay", args: { account: "a", amount: 5, idempotency_key: "k" }, scope: "s" }, pay);
    await plugin.execute({ toolName: "pay", args: { account: "a", amount: 6, idempotency_key: "k" }, scope: "s" }, pay);
    await plugin.execute({ toolName: "pay", args: { account: "a", amount: 5, idempotency_key: "k" }, scope: "t" }, pay);
    await plugin.execute({ toolName: "refund", args: { account: "a", amount: 5, idempotency_key: "k" }, scope: "s" }, pay);
    expect(runs).toHaveLength(4);
    expect(new Set(runs.map((run) => run.key)).size).toBe(4);
    // The same key with other arguments is no conflict: the key is not the model's any more.
    const outcomes = await Promise.all([
      plugin.execute({ toolName: "pay", args: { account: "a", amount: 6, idempotency_key: "other" }, scope: "s" }, pay),
      plugin.execute({ toolName: "pay", args: { account: "a", amount: 5, idempotency_key: "other" }, scope: "t" }, pay),
    ]);
    expect(outcomes.map(success)).toEqual([
      { value: { receipt: "r-2" }, replayed: true },
      { value: { receipt: "r-3" }, replayed: true },
    ]);
    expect(runs).toHaveLength(4);
  });

  it("runs concurrent identical writes, each with its own fresh key, exactly once", async () => {
    const { clock, plugin, runs } = setup({ idempotency: { derive: "always" } });
    const held = gate();
    const calls = Array.from({ length: 100 }, (_, index) =>
      plugin.execute(
        { toolName: "pay", args: { account: "a", amount: 5, idempotency_key: `fresh-${index}` }, scope: "s" },
        async (args: Payment, context) => {
          runs.push({ args, key: context.idempotencyKey });
          await held.promise;
          return { receipt: "r-1" };
        },
      ),
    );
    await clock.advance(0);
    held.open();
    const outcomes = await Promise.all(calls);
    expect(runs).toHaveLength(1);
    expect(outcomes.filter((outcome) => outcome.status === "success" && !outcome.replayed)).toHaveLength(1);
    expect(outcomes.filter((outcome) => outcome.status === "success" && outcome.replayed)).toHaveLength(99);
  });

  it("concurrent identical writes with a fault while they run: one run, the rest get its outcome, a retry runs once more", async () => {
    const { clock, plugin } = setup({ idempotency: { derive: "always" } });
    const held = gate();
    let runs = 0;
    const calls = Array.from({ length: 20 }, (_, index) =>
      plugin.execute({ toolName: "pay", args: { account: "a", amount: 5, idempotency_key: `k-${index}` }, scope: "s" }, async () => {
        runs++;
        await held.promise;
        throw new Error("card declined");
      }),
    );
    await clock.advance(0);
    held.open();
    const outcomes = await Promise.all(calls);
    expect(runs).toBe(1);
    expect(outcomes.every((outcome) => outcome.status === "reflect" && outcome.error.code === "TOOL_FAILED")).toBe(true);
    // The failure released the key: the model's next call runs (once), and is then replayed.
    const retried = plugin.execute({ toolName: "pay", args: { account: "a", amount: 5, idempotency_key: "k-new" }, scope: "s" }, () => {
      runs++;
      return { receipt: "r-ok" };
    });
    await clock.runAll();
    expect(success(await retried)).toEqual({ value: { receipt: "r-ok" }, replayed: false });
    const replayed = await plugin.execute({ toolName: "pay", args: { account: "a", amount: 5 }, scope: "s" }, () => {
      runs++;
      return { receipt: "never" };
    });
    expect(success(replayed)).toEqual({ value: { receipt: "r-ok" }, replayed: true });
    expect(runs).toBe(2);
  });

  it("derives even when key(call) is given: a new key from key(call) is still the same write", async () => {
    const { plugin, runs, pay } = setup({
      idempotency: { derive: "always", key: (call) => (call.args as { idempotency_key?: string }).idempotency_key },
    });
    await plugin.execute({ toolName: "pay", args: { account: "a", amount: 5, idempotency_key: "k-1" }, scope: "s" }, pay);
    const second = await plugin.execute({ toolName: "pay", args: { account: "a", amount: 5, idempotency_key: "k-2" }, scope: "s" }, pay);
    expect(success(second)).toEqual({ value: { receipt: "r-1" }, replayed: true });
    expect(runs).toHaveLength(1);
  });

  it("works without observers too (the synchronous replay path)", async () => {
    const clock = createFakeClock();
    const plugin = RetryReflectPlugin.create({ clock, toolEffects: { pay: "write" }, idempotency: { derive: "always" } });
    let runs = 0;
    const pay = () => {
      runs++;
      return { receipt: `r-${runs}` };
    };
    await plugin.execute({ toolName: "pay", args: { account: "a", amount: 5, idempotency_key: "k-1" } }, pay);
    const second = await plugin.execute({ toolName: "pay", args: { account: "a", amount: 5, idempotency_key: "k-2" } }, pay);
    expect(success(second)).toEqual({ value: { receipt: "r-1" }, replayed: true });
    expect(runs).toBe(1);
  });
});

describe("derive per tool", () => {
  it("`tools[name].idempotency.derive` applies to that tool only (its effect set there or in toolEffects)", async () => {
    const clock = createFakeClock();
    const plugin = RetryReflectPlugin.create({
      clock,
      toolEffects: { send_email: "write" },
      tools: {
        pay: { effect: "write", idempotency: { derive: "always" } },
        book: { effect: "write", idempotency: { derive: "when-missing" } },
        send_email: { maxRetries: 1 },
      },
    });
    const runs: Record<string, Array<string | undefined>> = { pay: [], book: [], send_email: [] };
    const tool = (name: string) => (_args: unknown, context: ToolContext) => {
      runs[name]?.push(context.idempotencyKey);
      return `${name}-${runs[name]?.length}`;
    };
    const call = (toolName: string, args: Record<string, unknown>) => plugin.execute({ toolName, args, scope: "s" }, tool(toolName));

    // pay ("always"): a new key is the same write.
    await call("pay", { amount: 1, idempotency_key: "a" });
    expect(success(await call("pay", { amount: 1, idempotency_key: "b" }))).toEqual({ value: "pay-1", replayed: true });
    // book ("when-missing"): a keyless write runs once, a new key runs again.
    await call("book", { room: 1 });
    expect(success(await call("book", { room: 1 }))).toEqual({ value: "book-1", replayed: true });
    expect(success(await call("book", { room: 1, idempotency_key: "x" }))).toEqual({ value: "book-2", replayed: false });
    // send_email (the plugin's "never"): keyless is refused, each key runs.
    expect(success(await call("send_email", { to: "a" }))).toBe("IDEMPOTENCY_KEY_REQUIRED");
    await call("send_email", { to: "a", idempotency_key: "e-1" });
    expect(success(await call("send_email", { to: "a", idempotency_key: "e-2" }))).toEqual({ value: "send_email-2", replayed: false });

    expect(runs.pay).toHaveLength(1);
    expect(runs.book).toHaveLength(2);
    expect(runs.book?.[1]).toBe("x");
    expect(runs.send_email).toEqual(["e-1", "e-2"]);

    // A tool's "never" overrides the plugin's "always".
    const overridden = RetryReflectPlugin.create({
      clock,
      toolEffects: { pay: "write", refund: "write" },
      idempotency: { derive: "always" },
      tools: { refund: { idempotency: { derive: "never" } } },
    });
    let refunds = 0;
    let pays = 0;
    for (const key of ["k-1", "k-2"]) {
      await overridden.execute({ toolName: "refund", args: { amount: 1, idempotency_key: key } }, () => ++refunds);
      await overridden.execute({ toolName: "pay", args: { amount: 1, idempotency_key: key } }, () => ++pays);
    }
    expect([refunds, pays]).toEqual([2, 1]);
    const keyless = await overridden.execute({ toolName: "refund", args: { amount: 1 } }, () => ++refunds);
    expect(success(keyless)).toBe("IDEMPOTENCY_KEY_REQUIRED");
  });

  it("rejects an unknown derive value, naming the option", () => {
    expect(() => RetryReflectPlugin.create({ idempotency: { derive: "sometimes" as IdempotencyDerive } })).toThrow(/idempotency\.derive/);
    expect(() => RetryReflectPlugin.create({ tools: { pay: { idempotency: { derive: "x" as IdempotencyDerive } } } })).toThrow(
      /tools\.pay\.idempotency\.derive/,
    );
  });
});
