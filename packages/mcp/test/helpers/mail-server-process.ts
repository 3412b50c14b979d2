// The MCP server of the end-to-end idempotency test (test/server-idempotency.test.ts), run as its
// own process with `--import tsx`: a stateless Streamable HTTP server with a `send_email` write
// tool (annotated `destructiveHint`, `idempotency_key` in its schema) whose handler is wrapped in
// `withIdempotency` over an in-memory store. The first `send_email` request's response is lost:
// the handler runs (the email goes out), then the server drops the connection before answering,
// as a stream that breaks. `GET /sent` answers how many emails went out. Prints its port.
import { createServer } from "node:http";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { InMemoryIdempotencyStore } from "@retry-reflect/core";
import { z } from "zod";
import { withIdempotency } from "../../src/index.js";

const guarded = process.argv[2] !== "unguarded";
const store = new InMemoryIdempotencyStore();
const sent: string[] = [];
let dropped = false;

const send = async ({ to, body }: { to: string; body: string }) => {
  sent.push(`${to}: ${body}`);
  return { content: [{ type: "text" as const, text: `sent to ${to} (#${sent.length})` }] };
};
// One mailbox behind this server, whoever connects (no auth, no sessions): a fixed namespace, so a
// second client process with the same key is the same operation.
const handler = guarded ? withIdempotency(send, { store, toolName: "send_email", namespace: "mailbox-of-ana" }) : send;

const http = createServer(async (req, res) => {
  if (req.method === "GET" && req.url === "/sent") {
    res.end(JSON.stringify({ sent: sent.length }));
    return;
  }
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const body = JSON.parse(Buffer.concat(chunks).toString("utf8") || "null");
  const server = new McpServer({ name: "mail", version: "1.0.0" });
  server.registerTool(
    "send_email",
    {
      inputSchema: { to: z.string(), body: z.string(), idempotency_key: z.string() },
      annotations: { destructiveHint: true },
    },
    async (args, extra) => {
      const result = await handler(args, extra);
      if (!dropped) {
        dropped = true;
        res.socket?.destroy(); // the response is lost: the client sees the connection close
      }
      return result;
    },
  );
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
