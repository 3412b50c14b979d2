// One agent process of the cross-process tenancy test (test/tenancy-across-processes.test.ts), run
// as a child process with `--import tsx`: an MCP server with a `transfer` write tool (annotated
// `destructiveHint`, no key in its schema) and a client wrapped with the adapter's defaults, over a
// Redis idempotency store shared with the other processes. It makes one transfer for its user and
// prints what happened as one JSON line. It runs this package from its sources (tsx) over the built
// core and Redis stores (`npm test` builds first).
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { redisStores } from "@retry-reflect/redis";
import { createClient } from "redis";
import { z } from "zod";
import { withRetryReflect } from "../../src/index.js";

const [url, prefix, user, iban] = process.argv.slice(2) as [string, string, string, string];
let serverCalled = 0;
const server = new McpServer({ name: "bank", version: "1.0.0" });
server.registerTool(
  "transfer",
  { inputSchema: { to: z.string(), amount: z.number() }, annotations: { destructiveHint: true } },
  async ({ to, amount }) => {
    serverCalled++;
    return { content: [{ type: "text" as const, text: `receipt of ${user}: ${amount} to ${to} from ${iban}` }] };
  },
);
const [clientTransport, serverTransport] = InMemoryTransport.createLinkedPair();
const client = new Client({ name: "agent", version: "1.0.0" });
await Promise.all([server.connect(serverTransport), client.connect(clientTransport)]);

const redis = createClient({ url, disableOfflineQueue: true });
redis.on("error", () => {});
await redis.connect();
const stores = redisStores({ client: redis, prefix, commandTimeoutMs: 2000 });
const tools = withRetryReflect(client, { idempotency: { store: stores.idempotency, derive: "always" } });
const result = (await tools.callTool({ name: "transfer", arguments: { to: "IBAN-SHOP", amount: 100 } })) as {
  content: Array<{ text?: string }>;
};
process.stdout.write(`${JSON.stringify({ serverCalled, text: result.content[0]?.text ?? "" })}\n`);
await stores.close();
await redis.quit();
await client.close();
