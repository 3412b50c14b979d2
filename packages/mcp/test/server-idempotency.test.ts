import { type ChildProcess, execFile, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { InMemoryIdempotencyStore } from "@retry-reflect/core";
import { createFakeClock } from "@retry-reflect/core/testing";
import { afterEach, describe, expect, it } from "vitest";
import { IDEMPOTENCY_META_KEY, REPLAYED_META_KEY, withIdempotency } from "../src/index.js";
import { firstText, text } from "./helpers.js";

const extra = (key?: unknown) => ({
  _meta: key === undefined ? {} : { [IDEMPOTENCY_META_KEY]: key },
  signal: new AbortController().signal,
});
const codeOf = (result: { content: Array<{ type: string; text?: string }> }) => JSON.parse(firstText(result)).error_code as string;
type Handler = (args: object, request: ReturnType<typeof extra>) => Promise<{ content: Array<{ type: string; text?: string }> }>;

describe("withIdempotency: an McpServer tool handler run once per idempotency key", () => {
  it("runs the handler once per key and replays its result (marked) for the same key and arguments", async () => {
    let runs = 0;
    const handler = withIdempotency(
      async ({ to }: { to: string }) => {
        runs++;
        return text(`sent to ${to} (#${runs})`);
      },
      { store: new InMemoryIdempotencyStore() },
    );
    const first = await handler({ to: "ana" }, extra("mail-1"));
    const again = await handler({ to: "ana" }, extra("mail-1"));
    expect(runs).toBe(1);
    expect(first).toEqual(text("sent to ana (#1)"));
    expect(again).toEqual({ ...text("sent to ana (#1)"), _meta: { [REPLAYED_META_KEY]: true } });
    // Another key, or no key, runs.
    await handler({ to: "ana" }, extra("mail-2"));
    await handler({ to: "ana" }, extra());
    expect(runs).toBe(3);
  });

  it("refuses the same key with other arguments, and a key that is not a short string, without running", async () => {
    let runs = 0;
    const handler = withIdempotency(
      async ({ to }: { to: string }) => {
        runs++;
        return text(`sent to ${to}`);
      },
      { store: new InMemoryIdempotencyStore() },
    );
    await handler({ to: "ana" }, extra("mail-1"));
    const reused = await handler({ to: "bob" }, extra("mail-1"));
    expect(reused.isError).toBe(true);
    expect(codeOf(reused)).toBe("IDEMPOTENCY_KEY_REUSED");
    for (const key of ["", 42, "k".repeat(257)])
      expect(codeOf(await handler({ to: "ana" }, extra(key))), String(key)).toBe("INVALID_ARGUMENTS");
    expect(runs).toBe(1);
  });

  it("keeps nothing for a failure: an isError result or a throw frees the key, so that a retry runs", async () => {
    let runs = 0;
    const handler = withIdempotency(
      async () => {
        runs++;
        if (runs === 1) return { content: [{ type: "text" as const, text: "HTTP 503" }], isError: true };
        if (runs === 2) throw new Error("socket hang up");
        return text("sent");
      },
      { store: new InMemoryIdempotencyStore() },
    );
    expect((await handler({}, extra("k"))).isError).toBe(true);
    await expect(handler({}, extra("k"))).rejects.toThrow("socket hang up");
    expect(await handler({}, extra("k"))).toEqual(text("sent"));
    expect(await handler({}, extra("k"))).toEqual({ ...text("sent"), _meta: { [REPLAYED_META_KEY]: true } });
    expect(runs).toBe(3);
  });

  it("20 requests with one key at once run the handler once; the others wait for its result", async () => {
    let runs = 0;
    let release: () => void = () => {};
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const clock = createFakeClock();
    const handler = withIdempotency(
      async () => {
        runs++;
        await gate;
        return text("sent");
      },
      { store: new InMemoryIdempotencyStore({ clock }), clock },
    );
    const all = Array.from({ length: 20 }, () => handler({ to: "ana" }, extra("mail-1")));
    await clock.advance(50); // the waiters re-read the store; the first still runs
    expect(runs).toBe(1);
    release();
    await clock.runAll();
    const results = await Promise.all(all);
    expect(runs).toBe(1);
    expect(results.filter((result) => result._meta?.[REPLAYED_META_KEY] === true)).toHaveLength(19);
    expect(results.every((result) => firstText(result) === "sent")).toBe(true);
  });

  it("answers IN_PROGRESS (recoverable) when the key stays held elsewhere past waitMs, and STORE_UNAVAILABLE when the store fails: neither runs", async () => {
    const clock = createFakeClock();
    let runs = 0;
    const never = new Promise<never>(() => {});
    const store = new InMemoryIdempotencyStore({ clock });
    // Two servers (two processes) over one store: the second finds the key held by the first.
    const [first, second] = [1, 2].map(() =>
      withIdempotency(
        async () => {
          runs++;
          return never;
        },
        { store, clock, waitMs: 5_000, namespace: "tenant" },
      ),
    ) as [Handler, Handler];
    void first({}, extra("k"));
    const waiting = second({}, extra("k"));
    await clock.advance(6_000);
    const answer = await waiting;
    expect(codeOf(answer)).toBe("IN_PROGRESS");
    expect(JSON.parse(firstText(answer)).recoverable).toBe(true);

    const broken = withIdempotency(
      async () => {
        runs++;
        return text("sent");
      },
      {
        store: {
          // Thrown synchronously, not a rejection: read the same way.
          begin: () => {
            throw new Error("ECONNREFUSED");
          },
          complete: async () => true,
          release: async () => true,
        },
      },
    );
    expect(codeOf(await broken({}, extra("k")))).toBe("STORE_UNAVAILABLE");
    expect(runs).toBe(1);
  });

  it("keeps namespaces apart (a function of the request's extra: one tenant per auth)", async () => {
    let runs = 0;
    const handler = withIdempotency(
      async (_args: object, request: { authInfo?: { clientId: string } }) => {
        runs++;
        return text(`for ${request.authInfo?.clientId}`);
      },
      { store: new InMemoryIdempotencyStore(), namespace: (request) => request.authInfo?.clientId ?? "" },
    );
    const alice = await handler({}, { ...extra("k"), authInfo: { clientId: "alice" } });
    const bob = await handler({}, { ...extra("k"), authInfo: { clientId: "bob" } });
    expect([firstText(alice), firstText(bob), runs]).toEqual(["for alice", "for bob", 2]);
  });

  it("fails early on a bad option, naming the option and the value", () => {
    const store = new InMemoryIdempotencyStore();
    const handler = async () => text("");
    expect(() => withIdempotency(handler, {} as never)).toThrow("Invalid option `store`: expected an IdempotencyStore");
    expect(() => withIdempotency(handler, { store, ttlMs: 0 })).toThrow("Invalid option `ttlMs`: expected a finite number > 0, received 0");
    expect(() => withIdempotency(handler, { store, leaseMs: Number.NaN })).toThrow("Invalid option `leaseMs`");
    expect(() => withIdempotency(handler, { store, waitMs: -1 })).toThrow(
      "Invalid option `waitMs`: expected a finite number > 0, received -1",
    );
    expect(() => withIdempotency(handler, { store, maxResultBytes: 1.5 })).toThrow(
      "Invalid option `maxResultBytes`: expected an integer >= 0, received 1.5",
    );
    expect(() => withIdempotency(handler, { store, namespace: 3 as never })).toThrow(
      "Invalid option `namespace`: expected a non-empty string or a function of the request's extra, received 3",
    );
    expect(() => withIdempotency(handler, { store, namespace: "" })).toThrow("Invalid option `namespace`");
    expect(() => withIdempotency(handler, { store, toolName: "" })).toThrow(
      'Invalid option `toolName`: expected a non-empty string, received ""',
    );
    expect(() => withIdempotency(handler, { store, maxKeyLength: 0 })).toThrow(
      "Invalid option `maxKeyLength`: expected an integer >= 1, received 0",
    );
    expect(() => withIdempotency(handler, { store, observers: {} as never })).toThrow("Invalid option `observers`");
    // The plugin's own observer check: a hook that is not a function is refused here, not when an event comes.
    expect(() => withIdempotency(handler, { store, observers: [{ onEvent: "log" }] as never })).toThrow(
      "Invalid option `observers`: expected an array of observer objects whose hooks",
    );
    expect(() => withIdempotency(handler, { store, clock: {} as never })).toThrow("Invalid option `clock`");
    // A clock without `timer` (the lease renewals of a running write run on it) is refused at once, not at the first write.
    const withoutTimer = { now: () => 0, sleep: async () => {} };
    expect(() => withIdempotency(handler, { store, clock: withoutTimer as never })).toThrow(
      "Invalid option `clock`: expected an object with now(), sleep(ms, signal) and timer(ms, fire, watchdog)",
    );
    expect(() => withIdempotency("send" as never, { store })).toThrow(
      'Invalid option `handler`: expected a tool handler function, received "send"',
    );
  });
});

const run = promisify(execFile);
const SERVER = fileURLToPath(new URL("./helpers/mail-server-process.ts", import.meta.url));
const CLIENT = fileURLToPath(new URL("./helpers/mail-client-process.ts", import.meta.url));
let serverProcess: ChildProcess | undefined;
afterEach(() => {
  serverProcess?.kill();
  serverProcess = undefined;
});

async function startServer(mode: "guarded" | "unguarded"): Promise<string> {
  const child = spawn(process.execPath, ["--import", "tsx", "--no-warnings", SERVER, mode], { stdio: ["ignore", "pipe", "inherit"] });
  serverProcess = child;
  const line = await new Promise<string>((resolve, reject) => {
    child.stdout?.once("data", (chunk: Buffer) => resolve(chunk.toString("utf8")));
    child.once("exit", (code) => reject(new Error(`the mail server exited with ${code}`)));
  });
  return `http://127.0.0.1:${JSON.parse(line).port}`;
}

async function sendFrom(url: string, key: string): Promise<{ text: string; replayed: boolean }> {
  const { stdout } = await run(process.execPath, ["--import", "tsx", "--no-warnings", CLIENT, `${url}/mcp`, key], { timeout: 60_000 });
  return JSON.parse(stdout.trim().split("\n").at(-1) ?? "{}");
}

const sentBy = async (url: string) => ((await (await fetch(`${url}/sent`)).json()) as { sent: number }).sent;

describe("MCP end to end: a write done once across the protocol boundary", () => {
  it("a client re-issuing a tools/call whose response was lost, then a second client process with the same key: the server sends once", async () => {
    const url = await startServer("guarded");
    // Process 1: the first response is lost (the connection drops after the email went out); the
    // adapter retries in place with the same key in _meta, and the server answers from its store.
    expect(await sendFrom(url, "mail-1")).toEqual({ text: "sent to ana@example.com (#1)", replayed: true });
    // Process 2 shares nothing with process 1 but the server: the same key is replayed too.
    expect(await sendFrom(url, "mail-1")).toEqual({ text: "sent to ana@example.com (#1)", replayed: true });
    expect(await sentBy(url)).toBe(1);
  }, 120_000);

  it("without withIdempotency on the server, the same re-issue sends the email twice (what the helper prevents)", async () => {
    const url = await startServer("unguarded");
    expect(await sendFrom(url, "mail-1")).toEqual({ text: "sent to ana@example.com (#2)", replayed: false });
    expect(await sentBy(url)).toBe(2);
  }, 120_000);
});
