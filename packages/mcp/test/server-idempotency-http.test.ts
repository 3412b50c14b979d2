import { type ChildProcess, execFile, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterEach, describe, expect, it } from "vitest";
import { IDEMPOTENCY_META_KEY, REPLAYED_META_KEY } from "../src/index.js";
import { firstText } from "./helpers.js";

// withIdempotency end to end: a real Streamable HTTP McpServer in its own process (its handlers
// wrapped once at start-up, with the defaults), whose HTTP server sets `req.auth` from each
// request's bearer token, and clients in other processes. Time in the server is a fake clock that
// the test advances (`POST /advance`), never waited for.

const execute = promisify(execFile);
const SERVER = fileURLToPath(new URL("./helpers/guarded-http-server-process.ts", import.meta.url));
const CLIENT = fileURLToPath(new URL("./helpers/bank-client-process.ts", import.meta.url));
const MiB = 1024 * 1024;

let server: ChildProcess | undefined;
const clients: Client[] = [];
afterEach(async () => {
  await Promise.all(clients.splice(0).map((client) => client.close()));
  server?.kill();
  server = undefined;
});

async function startServer(): Promise<string> {
  const child = spawn(process.execPath, ["--expose-gc", "--import", "tsx", "--no-warnings", SERVER], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  server = child;
  const line = await new Promise<string>((resolve, reject) => {
    child.stdout?.once("data", (chunk: Buffer) => resolve(chunk.toString("utf8")));
    child.once("exit", (code) => reject(new Error(`the server exited with ${code}`)));
  });
  return `http://127.0.0.1:${JSON.parse(line).port}`;
}

interface Stats {
  ran: Record<string, number>;
  called: Record<string, number>;
  storeBytes: number;
}
const stats = async (url: string): Promise<Stats> => (await fetch(`${url}/stats`)).json() as Promise<Stats>;
const advance = async (url: string, ms: number) => void (await fetch(`${url}/advance?ms=${ms}`, { method: "POST" })).text();
const rssAfterGc = async (url: string) => ((await (await fetch(`${url}/gc`, { method: "POST" })).json()) as { rss: number }).rss;

/** Polls the server (a few real milliseconds at a time) until `ready` holds of its stats. */
async function until(url: string, ready: (stats: Stats) => boolean): Promise<void> {
  for (let round = 0; round < 500; round++) {
    if (ready(await stats(url))) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error(`the server never got there: ${JSON.stringify(await stats(url))}`);
}

/** A client in this process, as `token`'s caller. */
async function clientOf(url: string, token: string): Promise<Client> {
  const client = new Client({ name: "test", version: "1.0.0" });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${url}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${token}` } } }),
  );
  clients.push(client);
  return client;
}

const call = (client: Client, name: string, args: Record<string, unknown>, key: string) =>
  client.callTool({ name, arguments: args, _meta: { [IDEMPOTENCY_META_KEY]: key } }, undefined, { timeout: 120_000 });

/** One agent process (its own MCP client, the adapter's defaults) making one transfer as `token`'s caller. */
async function transferFrom(url: string, token: string, key: string): Promise<{ text: string; replayed: boolean }> {
  const { stdout } = await execute(process.execPath, ["--import", "tsx", "--no-warnings", CLIENT, `${url}/mcp`, token, key, "IBAN-SHOP"], {
    timeout: 60_000,
  });
  return JSON.parse(stdout.trim().split("\n").at(-1) ?? "{}");
}

describe("withIdempotency over Streamable HTTP, callers told apart by their authInfo", () => {
  it("two client processes with the same key and arguments: the handler runs once per caller, and neither sees the other's result", async () => {
    const url = await startServer();
    const [alice, bob] = await Promise.all([transferFrom(url, "token-alice", "transfer-1"), transferFrom(url, "token-bob", "transfer-1")]);
    expect(alice.text).toMatch(/^receipt of alice: 100 to IBAN-SHOP \(#[12]\)$/);
    // Before: one of them was handed the other's receipt, and the handler did not run for them.
    expect(bob.text).toMatch(/^receipt of bob: 100 to IBAN-SHOP \(#[12]\)$/);
    expect([alice.replayed, bob.replayed]).toEqual([false, false]);
    // Alice's agent re-issuing the request (a new process, the same token) gets her own receipt back.
    expect(await transferFrom(url, "token-alice", "transfer-1")).toEqual({ text: alice.text, replayed: true });
    expect((await stats(url)).ran.transfer).toBe(2);
  }, 120_000);

  it("a 60 s handler whose request is re-issued at 35 s runs once; both requests get its result", async () => {
    const url = await startServer();
    const client = await clientOf(url, "token-alice");
    const args = { to: "IBAN-SHOP", amount: 100, idempotency_key: "pay-1" };
    const original = call(client, "slow_transfer", args, "pay-1");
    await until(url, (now) => now.ran.slow_transfer === 1);
    await advance(url, 35_000); // past the 30 s lease (leaseMs' default)
    const reissued = call(client, "slow_transfer", args, "pay-1");
    await until(url, (now) => now.called.slow_transfer === 2);
    await advance(url, 30_000);
    const first = await original;
    // Before: the lease was not renewed, so the re-issued request took the key at 35 s and paid again.
    expect((await stats(url)).ran.slow_transfer).toBe(1);
    const second = await reissued;
    expect(firstText(first)).toBe("receipt of alice: 100 to IBAN-SHOP");
    expect(firstText(second)).toBe("receipt of alice: 100 to IBAN-SHOP");
    expect([first._meta?.[REPLAYED_META_KEY], second._meta?.[REPLAYED_META_KEY]]).toEqual([undefined, true]);
  }, 60_000);

  it("25 results of 8 MiB leave the server's RSS within 50 MiB of where it started (with the defaults)", async () => {
    const url = await startServer();
    const client = await clientOf(url, "token-alice");
    await call(client, "export_report", { month: "warm-up" }, "warm-up"); // the first call loads what every call uses
    const before = await rssAfterGc(url);
    // 25 results (200 MiB), not 100 (four times as long): a result kept whole per call (8 MiB) passes
    // 50 MiB by the 7th, a quarter of each by the 25th; the store keeping any shows in its bytes.
    for (let index = 0; index < 25; index++) {
      const result = await call(client, "export_report", { month: `m${index}` }, `report-${index}`);
      expect(firstText(result).length).toBe(`m${index}:`.length + 8 * MiB);
    }
    const after = await rssAfterGc(url);
    const grown = (after - before) / MiB;
    console.info(
      `server RSS: ${(before / MiB).toFixed(1)} MiB before, ${(after / MiB).toFixed(1)} MiB after 25 results of 8 MiB (+${grown.toFixed(1)} MiB)`,
    );
    // Before: each result was kept whole for 24 h (the store's own byte cap, 32 MiB, the only bound).
    expect((await stats(url)).storeBytes).toBe(0);
    expect(grown).toBeLessThan(50);
  }, 120_000);
});
