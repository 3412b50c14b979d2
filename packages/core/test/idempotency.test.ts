import { describe, expect, it } from "vitest";
import type { RetryReflectEvent } from "../src/events.js";
import { InMemoryIdempotencyStore, RetryReflectPlugin, type ToolContext } from "../src/index.js";
import type { IdempotencyStore } from "../src/stores.js";
import { createFakeClock } from "../src/testing.js";
import { withoutExtend } from "./helpers/stores.js";

interface Email {
  to: string;
  subject: string;
  idempotency_key?: string;
}

function emailSetup(options: Parameters<typeof RetryReflectPlugin.create>[0] = {}) {
  const clock = createFakeClock();
  const events: RetryReflectEvent[] = [];
  const plugin = RetryReflectPlugin.create({
    clock,
    toolEffects: { send_email: "write" },
    observers: [{ onEvent: (event) => events.push(event) }],
    ...options,
  });
  const sent: Array<{ to: string; key: string | undefined }> = [];
  const send = (args: Email, context: ToolContext) => {
    sent.push({ to: args.to, key: context.idempotencyKey });
    return { id: `msg-${sent.length}` };
  };
  return { clock, plugin, sent, send, events };
}

describe("idempotency guard for write tools", () => {
  it("runs 100 concurrent calls with one key once, and all get its result (one namespace, many runs)", async () => {
    const { plugin, sent, events } = emailSetup();
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const calls = Array.from({ length: 100 }, (_, index) =>
      plugin.execute(
        {
          toolName: "send_email",
          args: { to: "a@example.com", subject: "hi", idempotency_key: "k-1" },
          scope: `run-${index}`,
          namespace: "conversation-1",
        },
        async (args, context) => {
          await gate;
          sent.push({ to: args.to, key: context.idempotencyKey });
          return { id: "msg-1" };
        },
      ),
    );
    release();
    const outcomes = await Promise.all(calls);
    expect(sent).toEqual([{ to: "a@example.com", key: "k-1" }]);
    expect(outcomes.every((outcome) => outcome.status === "success" && (outcome.value as { id: string }).id === "msg-1")).toBe(true);
    expect(outcomes.filter((outcome) => outcome.status === "success" && outcome.replayed)).toHaveLength(99);
    expect(events.filter((event) => event.type === "idempotent_replay")).toHaveLength(99);
  });

  it("replays a completed key later, in another run of the same namespace, without running the tool", async () => {
    const { plugin, sent, send } = emailSetup();
    const args = { to: "a@example.com", subject: "hi", idempotency_key: "k-1" };
    const first = await plugin.execute({ toolName: "send_email", args, scope: "run-1", namespace: "conversation-1" }, send);
    const second = await plugin.execute({ toolName: "send_email", args: { ...args }, scope: "run-2", namespace: "conversation-1" }, send);
    expect(first).toEqual({ status: "success", value: { id: "msg-1" }, attempt: 1, replayed: false });
    expect(second).toEqual({ status: "success", value: { id: "msg-1" }, attempt: 1, replayed: true });
    expect(sent).toHaveLength(1);
  });

  it("rejects the same key with other arguments", async () => {
    const { plugin, sent, send, events } = emailSetup();
    await plugin.execute({ toolName: "send_email", args: { to: "a@example.com", subject: "hi", idempotency_key: "k-1" } }, send);
    const reused = await plugin.execute(
      { toolName: "send_email", args: { to: "b@example.com", subject: "hi", idempotency_key: "k-1" } },
      send,
    );
    expect(reused.status).toBe("reflect");
    if (reused.status !== "reflect") return;
    expect(reused.error.code).toBe("IDEMPOTENCY_KEY_REUSED");
    expect(sent).toHaveLength(1);
    expect(events.at(-1)?.fields).toEqual({ tool_name: "send_email", reason: "key_reused" });
  });

  it("asks for a key when a write call has none", async () => {
    const { plugin, sent, send } = emailSetup();
    const outcome = await plugin.execute({ toolName: "send_email", args: { to: "a@example.com", subject: "hi" } }, send);
    expect(outcome.status === "reflect" && outcome.error.code).toBe("IDEMPOTENCY_KEY_REQUIRED");
    expect(outcome.status === "reflect" && outcome.error.suggestedAction).toContain("`idempotency_key`");
    expect(sent).toHaveLength(0);
  });

  it("releases the key when the call fails, so that a retry under the same key runs", async () => {
    const { plugin, clock, sent } = emailSetup();
    const args = { to: "a@example.com", subject: "hi", idempotency_key: "k-1" };
    let attempts = 0;
    const outcome = plugin.execute({ toolName: "send_email", args }, (input, context) => {
      attempts++;
      if (attempts === 1) throw Object.assign(new Error("socket hang up"), { code: "ECONNRESET" });
      sent.push({ to: input.to, key: context.idempotencyKey });
      return { id: "msg-1" };
    });
    await clock.runAll();
    expect(await outcome).toEqual({ status: "success", value: { id: "msg-1" }, attempt: 2, replayed: false });
    expect(sent).toEqual([{ to: "a@example.com", key: "k-1" }]);
    // A later non-transient failure also releases the key: the model may call again with the same key.
    const other = { ...args, idempotency_key: "k-2" };
    const failed = await plugin.execute({ toolName: "send_email", args: other, scope: "x" }, () => {
      throw new Error("mailbox full");
    });
    expect(failed.status).toBe("reflect");
    const retried = plugin.execute({ toolName: "send_email", args: other, scope: "x" }, () => ({ id: "msg-2" }));
    await clock.runAll();
    expect(await retried).toMatchObject({ status: "success", replayed: false });
  });

  it("answers IN_PROGRESS while another process holds the key, and takes over once a crashed holder's lease ran out", async () => {
    const clock = createFakeClock();
    const store = new InMemoryIdempotencyStore({ clock });
    const options = { clock, toolEffects: { send_email: "write" as const }, idempotency: { store, leaseMs: 10_000 } };
    const processB = RetryReflectPlugin.create(options);
    const args = { to: "a@example.com", subject: "hi", idempotency_key: "k-1" };
    // Process A took the key, then crashed: nobody renews its lease.
    const crashed = RetryReflectPlugin.create({ ...options, idempotency: { store: withoutExtend(store), leaseMs: 10_000 } });
    void crashed.execute({ toolName: "send_email", args }, () => new Promise(() => {}));
    await clock.advance(0);
    const busy = await processB.execute({ toolName: "send_email", args, scope: "b", namespace: "default" }, () => ({ id: "never" }));
    // Ask again soon (at most 1 s), not after the whole lease: the holder usually ends well before it.
    expect(busy.status === "reflect" && busy.error.toJSON()).toMatchObject({ error_code: "IN_PROGRESS", retry_after_ms: 1000 });
    await clock.advance(10_000);
    const takeover = await processB.execute({ toolName: "send_email", args, scope: "c", namespace: "default" }, () => ({
      id: "msg-b",
    }));
    expect(takeover).toMatchObject({ status: "success", value: { id: "msg-b" }, replayed: false });
  });

  it("a live holder in another process renews its lease with the default store: a write slower than leaseMs is not run twice", async () => {
    const clock = createFakeClock();
    const store = new InMemoryIdempotencyStore({ clock });
    // A limit above the write's 45 s: the holder is live (not cut off) while it runs.
    const options = {
      clock,
      attemptTimeoutMs: 60_000,
      toolEffects: { send_email: "write" as const },
      idempotency: { store, leaseMs: 10_000 },
    };
    const processA = RetryReflectPlugin.create(options);
    const processB = RetryReflectPlugin.create(options);
    const args = { to: "a@example.com", subject: "hi", idempotency_key: "k-1" };
    let sent = 0;
    const slow = processA.execute({ toolName: "send_email", args, scope: "a", namespace: "n" }, async () => {
      sent++;
      await clock.sleep(45_000);
      return { id: "msg-a" };
    });
    await clock.advance(35_000); // past three leases
    const meanwhile = await processB.execute({ toolName: "send_email", args, scope: "b", namespace: "n" }, () => {
      sent++;
      return { id: "msg-b" };
    });
    expect(meanwhile.status === "reflect" && meanwhile.error.code).toBe("IN_PROGRESS");
    await clock.advance(10_000);
    expect(await slow).toMatchObject({ status: "success", value: { id: "msg-a" } });
    const after = await processB.execute({ toolName: "send_email", args, scope: "c", namespace: "n" }, () => {
      sent++;
      return { id: "msg-b" };
    });
    expect(after).toMatchObject({ status: "success", value: { id: "msg-a" }, replayed: true });
    expect(sent).toBe(1);
  });

  it("IN_PROGRESS refusals spend no attempt of the scope: writes held by another process, asked again as told, never exhaust the tool", async () => {
    const clock = createFakeClock();
    const store = new InMemoryIdempotencyStore({ clock });
    const options = { clock, maxRetries: 1, toolEffects: { send_email: "write" as const }, idempotency: { store, leaseMs: 10_000 } };
    const processA = RetryReflectPlugin.create(options);
    const processB = RetryReflectPlugin.create(options);
    const finish: Array<() => void> = [];
    const holding = [1, 2, 3, 4].map((n) =>
      processA.execute(
        { toolName: "send_email", args: { to: "a@example.com", subject: `s${n}`, idempotency_key: `k-${n}` } },
        () => new Promise<{ id: string }>((resolve) => finish.push(() => resolve({ id: `msg-${n}` }))),
      ),
    );
    await clock.advance(0);
    // One conversation on process B asks for the four writes, each twice (as its text tells it): red before, the third refusal ended exhausted.
    for (let round = 0; round < 2; round++) {
      for (const n of [1, 2, 3, 4]) {
        const busy = await processB.execute(
          {
            toolName: "send_email",
            args: { to: "a@example.com", subject: `s${n}`, idempotency_key: `k-${n}` },
            scope: "b",
            namespace: "default",
          },
          () => ({ id: "never" }),
        );
        expect(busy).toMatchObject({ status: "reflect", error: { code: "IN_PROGRESS" } });
      }
    }
    for (const done of finish) done();
    await Promise.all(holding);
    const replayed = await processB.execute(
      { toolName: "send_email", args: { to: "a@example.com", subject: "s1", idempotency_key: "k-1" }, scope: "b", namespace: "default" },
      () => ({ id: "never" }),
    );
    expect(replayed).toMatchObject({ status: "success", value: { id: "msg-1" }, replayed: true });
    const fresh = await processB.execute(
      { toolName: "send_email", args: { to: "a@example.com", subject: "s5", idempotency_key: "k-5" }, scope: "b", namespace: "default" },
      () => ({ id: "msg-5" }),
    );
    expect(fresh).toMatchObject({ status: "success", value: { id: "msg-5" }, replayed: false, attempt: 1 });
  });

  it("runs an unkeyed write once and says the outcome is unknown when requireKey is false", async () => {
    const { plugin, clock } = emailSetup({ idempotency: { requireKey: false } });
    let calls = 0;
    const outcome = plugin.execute({ toolName: "send_email", args: { to: "a@example.com", subject: "hi" } }, () => {
      calls++;
      throw Object.assign(new Error("timeout"), { name: "TimeoutError" });
    });
    await clock.runAll();
    const result = await outcome;
    expect(calls).toBe(1);
    expect(result.status).toBe("reflect");
    if (result.status !== "reflect") return;
    expect(result.error.suggestedAction).toMatch(/outcome is unknown/);
  });

  it("never puts the key in an event", async () => {
    const { plugin, send, events } = emailSetup();
    const args = { to: "a@example.com", subject: "hi", idempotency_key: "secret-key-123" };
    await plugin.execute({ toolName: "send_email", args }, send);
    await plugin.execute({ toolName: "send_email", args }, send);
    await plugin.execute({ toolName: "send_email", args: { ...args, to: "b@example.com" } }, send);
    expect(events.length).toBeGreaterThan(0);
    expect(JSON.stringify(events.map((event) => ({ ...event, call: undefined })))).not.toContain("secret-key-123");
  });

  it("gives the store the same keys as the previous release (processes of two builds share one store in a rolling deploy)", async () => {
    const keys: string[] = [];
    const store: IdempotencyStore = {
      begin: async (key) => {
        keys.push(key);
        return { status: "acquired", token: "1" };
      },
      complete: async () => true,
      release: async () => true,
    };
    const call = { toolName: "send_email", args: { to: "a@example.com", idempotency_key: "k-1" }, scope: "run-1" };
    const given: Array<string | undefined> = [];
    const send = (_args: unknown, context: ToolContext) => given.push(context.idempotencyKey);
    await RetryReflectPlugin.create({ toolEffects: { send_email: "write" }, idempotency: { store } }).execute(call, send);
    await RetryReflectPlugin.create({ toolEffects: { send_email: "write" }, idempotency: { store, derive: "always" } }).execute(call, send);
    // Values computed by the previous release's code.
    expect(keys).toEqual(["cefedd167681da525fb7554e97c8efc3", "fd6638677570234fb6458d13da29797d"]);
    expect(given).toEqual(["k-1", "derived-fbab58901a87ecba656f66ac4af86ef4"]);
  });
});

describe("InMemoryIdempotencyStore", () => {
  it("expires completed results after their TTL and stays bounded", async () => {
    const clock = createFakeClock();
    const store = new InMemoryIdempotencyStore({ clock, maxEntries: 3 });
    const begun = await store.begin("k", "fp", 1000);
    if (begun.status !== "acquired") throw new Error("expected to acquire");
    await store.complete("k", begun.token, "value", 5000);
    expect(await store.begin("k", "fp", 1000)).toEqual({ status: "completed", fingerprint: "fp", value: "value" });
    await clock.advance(5000);
    expect((await store.begin("k", "fp", 1000)).status).toBe("acquired");
    for (let index = 0; index < 10; index++) await store.begin(`other-${index}`, "fp", 1000);
    expect(store.size).toBe(3);
  });

  it("ignores complete and release from a holder whose lease was taken over", async () => {
    const clock = createFakeClock();
    const store = new InMemoryIdempotencyStore({ clock });
    const first = await store.begin("k", "fp", 1000);
    await clock.advance(1000);
    const second = await store.begin("k", "fp", 1000);
    if (first.status !== "acquired" || second.status !== "acquired") throw new Error("expected to acquire");
    await store.complete("k", first.token, "stale", 1000);
    await store.release("k", first.token);
    expect((await store.begin("k", "fp", 1000)).status).toBe("in_progress");
    await store.complete("k", second.token, "fresh", 1000);
    expect(await store.begin("k", "fp", 1000)).toEqual({ status: "completed", fingerprint: "fp", value: "fresh" });
  });
});

describe("InMemoryIdempotencyStore: lease renewal and its byte cap", () => {
  it("extend renews a live lock's lease, so that another begin finds it in progress past the first lease", async () => {
    const clock = createFakeClock();
    const store = new InMemoryIdempotencyStore({ clock });
    const begun = await store.begin("k", "fp", 1000);
    if (begun.status !== "acquired") throw new Error("expected to acquire");
    await clock.advance(900);
    expect(await store.extend("k", begun.token, 1000)).toBe(true);
    await clock.advance(900);
    expect(await store.begin("k", "fp", 1000)).toMatchObject({ status: "in_progress", retryAfterMs: 100 });
    expect(await store.extend("k", "not-the-token", 1000)).toBe(false);
    await clock.advance(100);
    expect(await store.extend("k", begun.token, 1000)).toBe(false); // its lease ran out: lost
  });

  it("keeps at most maxBytes of results, dropping the least recently used first", async () => {
    const store = new InMemoryIdempotencyStore({ maxBytes: 10_000 });
    const value = "x".repeat(1000); // 1002 bytes of JSON + 256 per record
    for (let index = 0; index < 20; index++) {
      const begun = await store.begin(`k-${index}`, "fp", 1000);
      if (begun.status !== "acquired") throw new Error("expected to acquire");
      await store.complete(`k-${index}`, begun.token, value, 60_000);
      if (index === 18) expect((await store.begin("k-12", "fp", 1000)).status).toBe("completed"); // a use: the oldest kept longer
    }
    expect(store.bytes).toBeLessThanOrEqual(10_000);
    expect(store.size).toBe(7);
    expect((await store.begin("k-19", "fp", 1000)).status).toBe("completed");
    expect((await store.begin("k-12", "fp", 1000)).status).toBe("completed");
    expect((await store.begin("k-13", "fp", 1000)).status).toBe("acquired"); // the least recently used went
    expect((await store.begin("k-0", "fp", 1000)).status).toBe("acquired");
  });

  it("counts a result with characters outside Latin-1 at two bytes a character, as memory holds it", async () => {
    const store = new InMemoryIdempotencyStore({ maxBytes: 10_000 });
    const begun = await store.begin("cjk", "fp", 1000);
    if (begun.status !== "acquired") throw new Error("expected to acquire");
    await store.complete("cjk", begun.token, "漢".repeat(1000), 60_000); // 1002 characters of JSON
    expect(store.bytes).toBe(256 + 2 * 1002);
  });

  it("does not keep a single result larger than maxBytes, and says the key is completed for the holder", async () => {
    const store = new InMemoryIdempotencyStore({ maxBytes: 1000 });
    const begun = await store.begin("big", "fp", 1000);
    if (begun.status !== "acquired") throw new Error("expected to acquire");
    expect(await store.complete("big", begun.token, "y".repeat(2000), 60_000)).toBe(true);
    expect(store.bytes).toBe(0);
    expect((await store.begin("big", "fp", 1000)).status).toBe("acquired");
  });

  it("refuses a maxBytes that is not an integer of at least 256, naming it", () => {
    expect(() => new InMemoryIdempotencyStore({ maxBytes: 10 })).toThrow(/maxBytes/);
    expect(() => new InMemoryIdempotencyStore({ maxBytes: Number.NaN })).toThrow(/maxBytes/);
  });
});

describe("what observers see of a write", () => {
  it("gets the arguments without the key field", async () => {
    const seen: unknown[] = [];
    const plugin = RetryReflectPlugin.create({
      clock: createFakeClock(),
      toolEffects: { send_email: "write" },
      observers: [{ onCallStart: (call) => seen.push(call.args) }],
    });
    await plugin.execute({ toolName: "send_email", args: { to: "a@example.com", idempotency_key: "k-secret" } }, (args) => {
      expect(args.idempotency_key).toBe("k-secret");
      return "sent";
    });
    expect(seen).toEqual([{ to: "a@example.com" }]);
  });
});

describe("joining a call in flight", () => {
  it("with the default lease, two parallel same-key writes whose tool takes 45 s run once (longer than the 30 s lease)", async () => {
    const clock = createFakeClock();
    // A limit above the write's 45 s (the default first limit, 30 s, would cut it off: see below).
    const plugin = RetryReflectPlugin.create({ clock, attemptTimeoutMs: 60_000, toolEffects: { send_email: "write" } });
    const args = { to: "a@example.com", subject: "hi", idempotency_key: "k-1" };
    let runs = 0;
    const slowSend = async () => {
      runs++;
      await clock.sleep(45_000);
      return { id: `msg-${runs}` };
    };
    const first = plugin.execute({ toolName: "send_email", args, scope: "run-1", namespace: "n" }, slowSend);
    await clock.advance(31_000);
    const second = plugin.execute({ toolName: "send_email", args, scope: "run-2", namespace: "n" }, slowSend);
    await clock.advance(14_000);
    expect(await first).toMatchObject({ status: "success", value: { id: "msg-1" }, replayed: false });
    expect(await second).toMatchObject({ status: "success", value: { id: "msg-1" }, replayed: true });
    expect(runs).toBe(1);
  });

  // BUG(51): with the defaults (a first attempt's limit of 30 s, a lease of 30 s), a keyed write
  // whose tool takes 45 s is cut off at 30 s ("the operation may still complete"); its lease is no
  // longer renewed once the attempt is cut off (the attempt loop stops the renewal when the attempt
  // ends, although its tool still runs), so the lease, last renewed at 15 s, lapses at 45 s: the
  // late result's `complete` fails ("the lease on the idempotency key was lost", a store_error)
  // and the model's call as told ("call it again with the same arguments and key: if the
  // operation completed, its result is returned; it never runs twice") runs the write a second
  // time. Before #51 the default limit (60 s) never cut such a write off. Left failing for the lead.
  it("with the defaults, a same-key write whose tool takes 45 s (cut off at 30 s) runs once: the calls meanwhile are refused, the calls after it replay its result", async () => {
    const clock = createFakeClock();
    const plugin = RetryReflectPlugin.create({ clock, toolEffects: { send_email: "write" } });
    const args = { to: "a@example.com", subject: "hi", idempotency_key: "k-1" };
    let runs = 0;
    const slowSend = async () => {
      runs++;
      await clock.sleep(45_000);
      return { id: `msg-${runs}` };
    };
    const first = plugin.execute({ toolName: "send_email", args, scope: "run-1", namespace: "n" }, slowSend);
    await clock.advance(30_000);
    expect(await first).toMatchObject({ status: "reflect", error: { code: "TIMEOUT", recoverable: true } });
    const meanwhile = plugin.execute({ toolName: "send_email", args, scope: "run-2", namespace: "n" }, slowSend);
    await clock.advance(1_000);
    expect(await meanwhile).toMatchObject({ status: "reflect", error: { code: "IN_PROGRESS" } });
    await clock.advance(16_000); // the write ended at 45 s
    const again = plugin.execute({ toolName: "send_email", args, scope: "run-1", namespace: "n" }, slowSend);
    await clock.advance(60_000);
    expect(await again).toMatchObject({ status: "success", value: { id: "msg-1" }, replayed: true });
    expect(runs).toBe(1);
  });

  it("a joiner waits for a hung leader for as long as it runs (never runs beside it), and its abort ends its wait at once", async () => {
    const clock = createFakeClock();
    const plugin = RetryReflectPlugin.create({
      clock,
      toolEffects: { send_email: "write" },
      idempotency: { leaseMs: 10_000 },
      attemptTimeoutMs: 0,
    });
    const args = { to: "a@example.com", subject: "hi", idempotency_key: "k-1" };
    let runs = 0;
    let finishLeader!: (value: unknown) => void;
    const leader = plugin.execute({ toolName: "send_email", args, scope: "leader", namespace: "n" }, () => {
      runs++;
      return new Promise((resolve) => (finishLeader = resolve));
    });
    await clock.advance(0);

    const controller = new AbortController();
    const aborted = plugin.execute(
      { toolName: "send_email", args, scope: "impatient", namespace: "n", signal: controller.signal },
      () => "never",
    );
    await clock.advance(1000);
    controller.abort(new Error("user left"));
    await expect(aborted).rejects.toThrow("user left");

    const joiner = plugin.execute({ toolName: "send_email", args, scope: "joiner", namespace: "n" }, () => {
      runs++;
      return { id: "msg-beside-the-leader" };
    });
    await clock.advance(120_000); // twelve leases
    expect(runs).toBe(1);
    finishLeader({ id: "msg-1" });
    expect(await leader).toMatchObject({ status: "success", value: { id: "msg-1" } });
    expect(await joiner).toMatchObject({ status: "success", value: { id: "msg-1" }, replayed: true });
    expect(runs).toBe(1);
  });
});
