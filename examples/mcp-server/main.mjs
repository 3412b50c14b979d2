// MCP server: a send_email write behind withIdempotency, served over Streamable HTTP on a loopback port.
// The first response is lost after the email went out; the client (wrapped with withRetryReflect)
// retries in place with the same idempotency key, and the server answers from its store: one email.
import { createServer } from "node:http";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { consoleLogger, InMemoryIdempotencyStore } from "@retry-reflect/core";
import { REPLAYED_META_KEY, withIdempotency, withRetryReflect } from "@retry-reflect/mcp";
import { z } from "zod";

const outbox = [];
const log = (who) => consoleLogger({ write: (line) => console.log(`[${who}] ${line}`) });
// One mailbox behind this server, so one fixed namespace. With auth, leave it out: the default is the caller.
const sendEmail = withIdempotency(
  async ({ to, body }) => {
    outbox.push({ to, body });
    return { content: [{ type: "text", text: `sent to ${to} (email #${outbox.length})` }] };
  },
  { store: new InMemoryIdempotencyStore(), toolName: "send_email", namespace: "mailbox-of-ana", observers: [log("server")] },
);

let responseLost = false;
const http = createServer(async (req, res) => {
  const server = new McpServer({ name: "mail", version: "1.0.0" });
  const inputSchema = { to: z.string(), body: z.string(), idempotency_key: z.string() };
  server.registerTool("send_email", { inputSchema, annotations: { destructiveHint: true } }, async (args, extra) => {
    const result = await sendEmail(args, extra);
    if (!responseLost) {
      responseLost = true;
      res.socket?.destroy(); // the email went out, but its response never arrives
    }
    return result;
  });
  const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
  res.on("close", () => server.close());
  await server.connect(transport);
  await transport.handleRequest(req, res);
});
await new Promise((resolve) => http.listen(0, "127.0.0.1", resolve));
const url = new URL(`http://127.0.0.1:${http.address().port}/mcp`);
console.log(`MCP server on ${url}`);

// The client side: the adapter sends the model's key in the request's _meta, and retries in place.
const client = new Client({ name: "mail-agent", version: "1.0.0" });
await client.connect(new StreamableHTTPClientTransport(url));
const tools = withRetryReflect(client, { observers: [log("client")] });
const args = { to: "ana@example.com", body: "The report is ready.", idempotency_key: "report-ready-42" };
const result = await tools.callTool({ name: "send_email", arguments: args });

console.log(`send_email -> ${result.content[0].text} (replayed from the store: ${result._meta?.[REPLAYED_META_KEY] === true})`);
console.log(`emails actually sent: ${outbox.length}`);
await client.close();
http.close();
