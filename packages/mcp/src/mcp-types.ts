import type { Client } from "@modelcontextprotocol/sdk/client/index.js";

/** What the adapter needs of an MCP client: the SDK's `Client`, or anything with its `callTool` and `listTools`. */
export type McpClientLike = Pick<Client, "callTool" | "listTools">;

/** `Client.callTool`'s parameters: `params`, `resultSchema?`, `options?` (`signal`, `timeout`, ...). */
export type CallToolParams = Parameters<Client["callTool"]>[0];
export type CallToolResultSchema = Parameters<Client["callTool"]>[1];
export type CallToolOptions = Parameters<Client["callTool"]>[2];
/** What `Client.callTool` resolves to. */
export type CallToolResponse = Awaited<ReturnType<Client["callTool"]>>;

/** JSON-RPC error codes of the MCP SDK's `ErrorCode` that the adapter reads (copied: no runtime import of the SDK). */
export const RPC_REQUEST_TIMEOUT = -32001;
export const RPC_INVALID_PARAMS = -32602;
