// One agent process of test/server-idempotency-http.test.ts, run with `--import tsx`: a real MCP
// `Client` over Streamable HTTP to the shared bank server, authenticated with its own bearer token,
// wrapped with the adapter's defaults. It makes one `transfer` with the model's key (sent in the
// request's `_meta`) and prints the result's text and whether the server replayed it.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { REPLAYED_META_KEY, withRetryReflect } from "../../src/index.js";

const [url, token, key, to] = process.argv.slice(2) as [string, string, string, string];
const client = new Client({ name: "agent", version: "1.0.0" });
await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { Authorization: `Bearer ${token}` } } }));
const tools = withRetryReflect(client, { initialBackoffMs: 10 });
const result = (await tools.callTool({ name: "transfer", arguments: { to, amount: 100, idempotency_key: key } })) as {
  content: Array<{ text?: string }>;
  _meta?: Record<string, unknown>;
};
process.stdout.write(`${JSON.stringify({ text: result.content[0]?.text ?? "", replayed: result._meta?.[REPLAYED_META_KEY] === true })}\n`);
await client.close();
