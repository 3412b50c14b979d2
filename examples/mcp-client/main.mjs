// MCP client: a real McpServer and Client, connected in-process by the SDK's InMemoryTransport.
// The client is wrapped with withRetryReflect: its callTool retries, reflects and circuit-breaks.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { consoleLogger, RetryReflectPlugin } from "@retry-reflect/core";
import { withRetryReflect } from "@retry-reflect/mcp";
import { z } from "zod";

// The server: a flaky read (its backend answers 503 once) and a tool with a strict input schema.
const server = new McpServer({ name: "docs-and-weather", version: "1.0.0" });
let searchRuns = 0;
server.registerTool("search_docs", { inputSchema: { query: z.string() }, annotations: { readOnlyHint: true } }, async ({ query }) => {
  searchRuns += 1;
  if (searchRuns === 1) return { content: [{ type: "text", text: "HTTP 503 Service Unavailable" }], isError: true };
  return { content: [{ type: "text", text: `Doc: "${query}" is covered in chapter 3.` }] };
});
server.registerTool(
  "get_weather",
  { inputSchema: { city: z.string(), units: z.enum(["celsius", "fahrenheit"]) }, annotations: { readOnlyHint: true } },
  async ({ city, units }) => ({ content: [{ type: "text", text: `22 degrees ${units}, sunny in ${city}` }] }),
);

// The client, connected over the in-memory transport pair, then wrapped.
const [clientTransport, serverTransport] = InMemoryTransport.createLinkedPair();
await server.connect(serverTransport);
const client = new Client({ name: "my-agent", version: "1.0.0" });
await client.connect(clientTransport);
const tools = withRetryReflect(client, RetryReflectPlugin.create({ maxRetries: 3, observers: [consoleLogger()] }));

// What an agent loop does with the model's tool calls: call, and hand the result back to the model.
const show = (result) => result.content.map((block) => block.text).join("\n");
const search = await tools.callTool({ name: "search_docs", arguments: { query: "retries" } });
console.log(`search_docs -> ${show(search)}`);
console.log(`search_docs ran ${searchRuns} times (a 503, then success); the model saw only the result`);

const bad = await tools.callTool({ name: "get_weather", arguments: { city: "NYC", units: "kelvin" } });
console.log(`get_weather (units: kelvin) -> isError: ${bad.isError}, the model reads:\n${show(bad)}`);
console.log(`structured error: ${bad.structuredContent.error_code}, recoverable: ${bad.structuredContent.recoverable}`);

const good = await tools.callTool({ name: "get_weather", arguments: { city: "NYC", units: "celsius" } });
console.log(`get_weather (units: celsius) -> ${show(good)}`);

await client.close();
