// One agent process of the end-to-end idempotency test (test/server-idempotency.test.ts), run with
// `--import tsx`: a real MCP `Client` over Streamable HTTP to the shared mail server, wrapped with
// the adapter's defaults, sends one email with the model's key. A lost response is retried in place
// with the same key in `_meta`. Prints the result's text and whether the server replayed it.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { REPLAYED_META_KEY, withRetryReflect } from "../../src/index.js";

const [url, key] = process.argv.slice(2) as [string, string];
const client = new Client({ name: "agent", version: "1.0.0" });
await client.connect(new StreamableHTTPClientTransport(new URL(url)));
const tools = withRetryReflect(client, { initialBackoffMs: 10 });
const result = (await tools.callTool({
  name: "send_email",
  arguments: { to: "ana@example.com", body: "The temperature is 12 °C", idempotency_key: key },
})) as { content: Array<{ text?: string }>; _meta?: Record<string, unknown> };
process.stdout.write(`${JSON.stringify({ text: result.content[0]?.text ?? "", replayed: result._meta?.[REPLAYED_META_KEY] === true })}\n`);
await client.close();
