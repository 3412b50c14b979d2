import { consoleLogger, InMemoryIdempotencyStore } from "@retry-reflect/core";
import { argumentsFingerprint } from "@retry-reflect/core/primitives";
import type { IdempotencyStore } from "@retry-reflect/core/stores";
import { createFakeClock, recordEvents } from "@retry-reflect/core/testing";
import { describe, expect, it } from "vitest";
import { IDEMPOTENCY_META_KEY, REPLAYED_META_KEY, withIdempotency } from "../src/index.js";
import { firstText, text } from "./helpers.js";

// What `withIdempotency` promises, each finding of issue 50 on the server path: the lease renewed
// while a slow handler runs, results kept per caller by default, results over `maxResultBytes` not
// stored, what is stored is what the client received, and a record that is not a valid result
// never replayed. In process, on a fake clock (the end-to-end runs are in server-idempotency-http).

interface Request {
  _meta: Record<string, unknown>;
  signal: AbortSignal;
  authInfo?: { clientId: string; token: string; scopes: string[] };
  sessionId?: string;
}
type Result = { content: Array<{ type: "text"; text: string }>; _meta?: Record<string, unknown>; isError?: boolean };
type Handler = (args: object, request: Request) => Promise<Result>;

const request = (key: string, caller: { clientId?: string; sessionId?: string; signal?: AbortSignal } = {}): Request => ({
  _meta: { [IDEMPOTENCY_META_KEY]: key },
  signal: caller.signal ?? new AbortController().signal,
  ...(caller.clientId === undefined ? {} : { authInfo: { clientId: caller.clientId, token: `token-of-${caller.clientId}`, scopes: [] } }),
  ...(caller.sessionId === undefined ? {} : { sessionId: caller.sessionId }),
});
const codeOf = (result: Result) => JSON.parse(firstText(result)).error_code as string;
const replayedOf = (result: Result) => result._meta?.[REPLAYED_META_KEY] === true;

describe("withIdempotency renews the lease of a running handler", () => {
  it("a 60 s handler whose request is re-issued at 35 s on another server over the same store runs once", async () => {
    const clock = createFakeClock();
    const store = new InMemoryIdempotencyStore({ clock });
    let runs = 0;
    // Two server processes sharing one store (a fleet): no single flight between them, only the store's lock.
    const [first, second] = [1, 2].map(() =>
      withIdempotency(
        async ({ amount }: { amount: number }) => {
          const run = ++runs;
          await clock.sleep(60_000);
          return text(`paid ${amount} (#${run})`);
        },
        { store, clock, toolName: "pay" },
      ),
    ) as [Handler, Handler];
    const original = first({ amount: 100 }, request("pay-1", { clientId: "alice" }));
    await clock.advance(35_000); // past the 30 s lease: renewed at 15 s and 30 s
    const reissued = second({ amount: 100 }, request("pay-1", { clientId: "alice" }));
    await clock.advance(30_000);
    expect(await original).toEqual(text("paid 100 (#1)"));
    // Before: the lease ran out at 30 s, the re-issued request took the key and paid again.
    expect(await reissued).toEqual({ ...text("paid 100 (#1)"), _meta: { [REPLAYED_META_KEY]: true } });
    expect(runs).toBe(1);
  });

  it("in one server, the re-issued request waits for the running one however long it runs, and a cancelled wait ends at once", async () => {
    const clock = createFakeClock();
    let runs = 0;
    const handler = withIdempotency(
      async () => {
        runs++;
        await clock.sleep(60_000);
        return text("sent");
      },
      { store: new InMemoryIdempotencyStore({ clock }), clock },
    ) as Handler;
    const original = handler({}, request("mail-1", { clientId: "alice" }));
    await clock.advance(35_000);
    const reissued = handler({}, request("mail-1", { clientId: "alice" }));
    const cancel = new AbortController();
    const cancelled = handler({}, request("mail-1", { clientId: "alice", signal: cancel.signal }));
    cancel.abort(new Error("request cancelled"));
    await expect(cancelled).rejects.toThrow("request cancelled");
    await clock.advance(30_000);
    expect([await original, replayedOf(await reissued), runs]).toEqual([text("sent"), true, 1]);
  });

  it("a wait for a key held on another server ends with the request's abort, its reason as the rejection", async () => {
    const clock = createFakeClock();
    const store = new InMemoryIdempotencyStore({ clock });
    const hang = new Promise<never>(() => {});
    const [first, second] = [1, 2].map(() => withIdempotency(async () => hang, { store, clock, namespace: "tenant" })) as [
      Handler,
      Handler,
    ];
    void first({}, request("k"));
    const cancel = new AbortController();
    const waiting = second({}, request("k", { signal: cancel.signal }));
    await clock.advance(2_000);
    cancel.abort(new Error("request cancelled"));
    await expect(waiting).rejects.toThrow("request cancelled");
  });
});

describe("withIdempotency keeps each caller's results apart by default", () => {
  it("two clients (authInfo) with the same key and arguments each run the handler and get their own result", async () => {
    let runs = 0;
    const handler = withIdempotency(
      async ({ amount }: { amount: number }, extra: Request) => {
        runs++;
        return text(`receipt of ${extra.authInfo?.clientId}: ${amount}`);
      },
      { store: new InMemoryIdempotencyStore(), toolName: "transfer" },
    ) as Handler;
    const alice = await handler({ amount: 100 }, request("transfer-1", { clientId: "alice" }));
    // Before: Bob got Alice's receipt, and the handler did not run for him.
    const bob = await handler({ amount: 100 }, request("transfer-1", { clientId: "bob" }));
    expect([firstText(alice), firstText(bob), runs]).toEqual(["receipt of alice: 100", "receipt of bob: 100", 2]);
    // Alice's client reconnecting (a new session) still gets her stored result.
    const again = await handler({ amount: 100 }, request("transfer-1", { clientId: "alice", sessionId: "s-2" }));
    expect([firstText(again), replayedOf(again), runs]).toEqual(["receipt of alice: 100", true, 2]);
  });

  it("a key another caller used first is a fresh key for this one: no IDEMPOTENCY_KEY_REUSED, nothing said of the other", async () => {
    let runs = 0;
    const handler = withIdempotency(
      async ({ to }: { to: string }) => {
        runs++;
        return text(`sent to ${to}`);
      },
      { store: new InMemoryIdempotencyStore() },
    ) as Handler;
    await handler({ to: "mallory" }, request("transfer-7", { clientId: "mallory" }));
    // Before: Alice's own future key was taken: refused IDEMPOTENCY_KEY_REUSED.
    const alice = await handler({ to: "shop" }, request("transfer-7", { clientId: "alice" }));
    expect([firstText(alice), runs]).toEqual(["sent to shop", 2]);
  });

  it("without authInfo, each transport session is a caller; without either, each wrapper (one per process) is", async () => {
    const store = new InMemoryIdempotencyStore();
    let runs = 0;
    const make = () =>
      withIdempotency(
        async () => {
          runs++;
          return text(`run #${runs}`);
        },
        { store },
      ) as Handler;
    const handler = make();
    await handler({}, request("k", { sessionId: "s-1" }));
    expect(replayedOf(await handler({}, request("k", { sessionId: "s-1" })))).toBe(true);
    expect(firstText(await handler({}, request("k", { sessionId: "s-2" })))).toBe("run #2");
    // Two processes over one shared store, stdio-style (no auth, no session): each its own namespace.
    await handler({}, request("k"));
    expect(firstText(await make()({}, request("k")))).toBe("run #4");
    expect(runs).toBe(4);
  });

  it("a namespace function that answers no namespace fails the request, never shares one", async () => {
    let runs = 0;
    const handler = withIdempotency(
      async () => {
        runs++;
        return text("sent");
      },
      { store: new InMemoryIdempotencyStore(), namespace: () => "" },
    ) as Handler;
    await expect(handler({}, request("k"))).rejects.toThrow(
      'Invalid option `namespace`: expected a non-empty string from the namespace function, received ""',
    );
    expect(runs).toBe(0);
  });
});

describe("withIdempotency stores at most maxResultBytes, and what the client received", () => {
  it("a 2 MiB result is returned but not stored (store_error too_large), and the key is freed so a retry runs", async () => {
    const store = new InMemoryIdempotencyStore();
    const events = recordEvents();
    const report = "x".repeat(2 * 1024 * 1024);
    let runs = 0;
    const handler = withIdempotency(
      async () => {
        runs++;
        return text(report);
      },
      { store, toolName: "export_report", observers: [events] },
    ) as Handler;
    expect(firstText(await handler({}, request("r-1"))).length).toBe(report.length);
    // Before: kept whole (for 24 h), and the retry was answered from it.
    expect(store.bytes).toBe(0);
    expect(events.events.find((event) => event.type === "store_error")?.fields).toMatchObject({
      tool_name: "export_report",
      operation: "complete",
      reason: "too_large",
    });
    await handler({}, request("r-1"));
    expect(runs).toBe(2);
  });

  it("maxResultBytes sets the limit, counted on the result's JSON text", async () => {
    let runs = 0;
    const handler = withIdempotency(
      async ({ size }: { size: number }) => {
        runs++;
        return text("y".repeat(size));
      },
      { store: new InMemoryIdempotencyStore(), maxResultBytes: 200 },
    ) as Handler;
    await handler({ size: 100 }, request("small"));
    expect(replayedOf(await handler({ size: 100 }, request("small")))).toBe(true);
    await handler({ size: 300 }, request("large"));
    expect(replayedOf(await handler({ size: 300 }, request("large")))).toBe(false);
    expect(runs).toBe(3);
  });

  it("a replay is the result as the client received it (its JSON), not the handler's object changed afterwards", async () => {
    const shared = { content: [{ type: "text" as const, text: "balance: 100" }] };
    const handler = withIdempotency(async () => shared, { store: new InMemoryIdempotencyStore() }) as Handler;
    const first = await handler({}, request("k"));
    expect(firstText(first)).toBe("balance: 100");
    shared.content[0] = { type: "text", text: "balance: 0" }; // the handler's cache moves on
    const replay = await handler({}, request("k"));
    // Before: the store kept the object itself, so the replay said "balance: 0".
    expect(replay).toEqual({ content: [{ type: "text", text: "balance: 100" }], _meta: { [REPLAYED_META_KEY]: true } });
  });
});

describe("withIdempotency never replays a record that is not a valid result", () => {
  /** A store whose completed record of every key is `value` (as a tampered shared store would answer). */
  const tampered = (value: unknown, args: object): IdempotencyStore => ({
    begin: async () => ({ status: "completed", fingerprint: argumentsFingerprint(args), value }),
    complete: async () => true,
    release: async () => true,
  });

  it.each([
    ["a string", "string"],
    ["no content array", { content: "paid" }],
    ["an unknown content block", { content: [{ type: "script", text: "x" }] }],
    ["a text block without text", { content: [{ type: "text" }] }],
    ["a stored failure", { content: [{ type: "text", text: "paid" }], isError: true }],
    ["structuredContent that is not an object", { content: [], structuredContent: [1, 2] }],
  ])("%s: WRITE_IN_DOUBT and a store_error (invalid_record); the handler does not run", async (_name, value) => {
    const events = recordEvents();
    let runs = 0;
    const args = { to: "shop", amount: 100 };
    const handler = withIdempotency(
      async () => {
        runs++;
        return text("paid");
      },
      { store: tampered(value, args), toolName: "transfer", observers: [events] },
    ) as Handler;
    const answer = await handler(args, request("transfer-1", { clientId: "alice" }));
    // Before: replayed as a success (a result the client could not parse).
    expect(answer.isError).toBe(true);
    expect(codeOf(answer)).toBe("WRITE_IN_DOUBT");
    expect(JSON.parse(firstText(answer)).recoverable).toBe(false);
    expect(events.types()).toEqual(["store_error", "idempotency_conflict"]);
    expect(events.events[0]?.fields).toMatchObject({ tool_name: "transfer", operation: "begin", reason: "invalid_record" });
    expect(runs).toBe(0);
  });

  it("a record the store reports it could not read (in_doubt with invalidRecord) is WRITE_IN_DOUBT, not STORE_UNAVAILABLE", async () => {
    const lines: string[] = [];
    let runs = 0;
    const handler = withIdempotency(
      async () => {
        runs++;
        return text("paid");
      },
      {
        store: {
          begin: async () => ({ status: "in_doubt", fingerprint: "other", invalidRecord: "its stored result does not parse as JSON" }),
          complete: async () => true,
          release: async () => true,
        },
        toolName: "transfer",
        observers: [consoleLogger({ write: (line) => lines.push(line) })],
      },
    ) as Handler;
    expect(codeOf(await handler({ amount: 1 }, request("transfer-1")))).toBe("WRITE_IN_DOUBT");
    expect(runs).toBe(0);
    expect(lines[0]).toMatch(
      /^WARN retry_reflect: store error tool_name=transfer operation=begin error=".*does not parse as JSON.*" reason=invalid_record$/,
    );
    expect(lines[1]).toBe("WARN retry_reflect: idempotency conflict tool_name=transfer reason=in_doubt");
  });

  it("a valid stored result is replayed, with every content block kind", async () => {
    const value = {
      content: [
        { type: "text", text: "paid" },
        { type: "image", data: "aGk=", mimeType: "image/png" },
        { type: "audio", data: "aGk=", mimeType: "audio/wav" },
        { type: "resource_link", uri: "file:///r.txt", name: "r" },
        { type: "resource", resource: { uri: "file:///r.txt", text: "r" } },
      ],
      structuredContent: { paid: true },
    };
    const args = { amount: 1 };
    const handler = withIdempotency(async () => text("never"), { store: tampered(value, args) }) as Handler;
    expect(await handler(args, request("k"))).toEqual({ ...value, _meta: { [REPLAYED_META_KEY]: true } });
  });
});
