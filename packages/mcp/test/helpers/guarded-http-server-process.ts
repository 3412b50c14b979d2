// The MCP server of test/server-idempotency-http.test.ts, run as its own process with `--import tsx`
// (and `--expose-gc`): a stateless Streamable HTTP `McpServer` on a loopback `node:http` server that
// sets `req.auth` from the request's bearer token (`Bearer token-<client>` → `clientId: <client>`),
// so each handler's `extra.authInfo` is its caller's. Its three write tools are wrapped once, at
// start-up, with `withIdempotency` and the defaults (one in-memory store, no namespace), all on one
// fake clock that the test moves:
//   transfer       a receipt naming the caller;
//   slow_transfer  the same after 60 s of the fake clock;
//   export_report  an 8 MiB text.
// Control endpoints: `POST /advance?ms=N` advances the fake clock; `GET /stats` answers how often
// each handler ran and was called; `POST /gc` collects garbage and answers `process.memoryUsage()`.
// Prints its port as one JSON line.
import { createServer, type IncomingMessage } from "node:http";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { InMemoryIdempotencyStore } from "@retry-reflect/core";
import { createFakeClock } from "@retry-reflect/core/testing";
import { z } from "zod";
import { withIdempotency } from "../../src/index.js";

const clock = createFakeClock();
const store = new InMemoryIdempotencyStore({ clock });
const ran = { transfer: 0, slow_transfer: 0, export_report: 0 };
const called: Record<string, number> = { transfer: 0, slow_transfer: 0, export_report: 0 };
const REPORT_BYTES = 8 * 1024 * 1024;

type Extra = { authInfo?: { clientId: string } };

const transfer = withIdempotency(
  async ({ to, amount }: { to: string; amount: number }, extra: Extra) => {
    const run = ++ran.transfer;
    return { content: [{ type: "text" as const, text: `receipt of ${extra.authInfo?.clientId}: ${amount} to ${to} (#${run})` }] };
  },
  { store, clock, toolName: "transfer" },
);
const slowTransfer = withIdempotency(
  async (args: { to: string; amount: number }, extra: Extra) => {
    ran.slow_transfer++;
    await clock.sleep(60_000);
    return { content: [{ type: "text" as const, text: `receipt of ${extra.authInfo?.clientId}: ${args.amount} to ${args.to}` }] };
  },
  { store, clock, toolName: "slow_transfer" },
);
const exportReport = withIdempotency(
  async ({ month }: { month: string }) => {
    ran.export_report++;
    return { content: [{ type: "text" as const, text: `${month}:${"x".repeat(REPORT_BYTES)}` }] };
  },
  { store, clock, toolName: "export_report" },
);

function register(server: McpServer): void {
  const money = { to: z.string(), amount: z.number(), idempotency_key: z.string() };
  const write = { destructiveHint: true };
  const counted =
    <A, E>(name: string, handler: (args: A, extra: E) => unknown) =>
    (args: A, extra: E) => {
      called[name] = (called[name] ?? 0) + 1;
      return handler(args, extra) as never;
    };
  server.registerTool("transfer", { inputSchema: money, annotations: write }, counted("transfer", transfer));
  server.registerTool("slow_transfer", { inputSchema: money, annotations: write }, counted("slow_transfer", slowTransfer));
  server.registerTool("export_report", { inputSchema: { month: z.string() }, annotations: write }, counted("export_report", exportReport));
}

/** The verified token of a request, as an auth middleware sets it: `Bearer token-<client>`. */
function authenticate(req: IncomingMessage & { auth?: unknown }): void {
  const token = /^Bearer (token-(\w+))$/.exec(req.headers.authorization ?? "");
  if (token) req.auth = { token: token[1], clientId: token[2], scopes: ["transfer"] };
}

const http = createServer(async (req, res) => {
  const url = new URL(req.url ?? "/", "http://127.0.0.1");
  if (url.pathname === "/advance") {
    await clock.advance(Number(url.searchParams.get("ms")));
    res.end(JSON.stringify({ now: clock.now() }));
    return;
  }
  if (url.pathname === "/stats") {
    res.end(JSON.stringify({ ran, called, storeBytes: store.bytes }));
    return;
  }
  if (url.pathname === "/gc") {
    for (let round = 0; round < 3; round++) (globalThis as { gc?: () => void }).gc?.();
    res.end(JSON.stringify(process.memoryUsage()));
    return;
  }
  authenticate(req);
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const body = JSON.parse(Buffer.concat(chunks).toString("utf8") || "null");
  const server = new McpServer({ name: "bank", version: "1.0.0" });
  register(server);
  const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
  res.on("close", () => {
    void transport.close();
    void server.close();
  });
  await server.connect(transport);
  await transport.handleRequest(req, res, body);
});
http.listen(0, "127.0.0.1", () => {
  const address = http.address();
  process.stdout.write(`${JSON.stringify({ port: typeof address === "object" && address !== null ? address.port : 0 })}\n`);
});
