import { createMCPClient } from "@ai-sdk/mcp";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { afterEach } from "vitest";

// The `@ai-sdk/mcp` tests' one way to reach a real `McpServer`: in process, over the SDK's
// in-memory transport; every client and server made in a test is closed after it.

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

/** An `@ai-sdk/mcp` client connected to `server`; both are closed after the test. */
export async function mcpClientOf(server: McpServer): Promise<Awaited<ReturnType<typeof createMCPClient>>> {
  const [clientTransport, serverTransport] = InMemoryTransport.createLinkedPair();
  await server.connect(serverTransport);
  const client = await createMCPClient({ transport: clientTransport });
  closers.push(async () => {
    await client.close();
    await server.close();
  });
  return client;
}
