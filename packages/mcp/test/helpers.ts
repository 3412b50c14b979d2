export { drive, recordEvents } from "@retry-reflect/core/testing";

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { CallInfo, RetryReflectObserver } from "@retry-reflect/core/events";

/** A real `McpServer` and `Client` over `InMemoryTransport.createLinkedPair()`: offline, in process. */
export async function connect(register: (server: McpServer) => void): Promise<{ client: Client; server: McpServer }> {
  const server = new McpServer({ name: "test-server", version: "1.0.0" });
  register(server);
  const [clientTransport, serverTransport] = InMemoryTransport.createLinkedPair();
  const client = new Client({ name: "test-client", version: "1.0.0" });
  await Promise.all([server.connect(serverTransport), client.connect(clientTransport)]);
  return { client, server };
}

/** An `isError` result with one text block, as a server returns it. */
export function errorText(text: string) {
  return { content: [{ type: "text" as const, text }], isError: true };
}

/** A text result. */
export function text(value: string) {
  return { content: [{ type: "text" as const, text: value }] };
}

/** The text of a result's first block. */
export function firstText(result: unknown): string {
  const block = (result as { content?: Array<{ text?: string }> }).content?.[0];
  return block?.text ?? "";
}

/** An observer that keeps what the plugin knows of each call (its effect, its scope). */
export function recordCalls(): RetryReflectObserver & { readonly calls: CallInfo[] } {
  const calls: CallInfo[] = [];
  return { calls, onCallStart: (call) => void calls.push(call) };
}

/** Lets the transport deliver pending messages (a few macrotask turns, no timer). */
export async function settle(rounds = 5): Promise<void> {
  for (let round = 0; round < rounds; round++) await new Promise<void>((resolve) => setImmediate(resolve));
}
