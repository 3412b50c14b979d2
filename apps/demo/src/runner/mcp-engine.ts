import { ToolMessage } from "@langchain/core/messages";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { ToolAnnotations } from "@modelcontextprotocol/sdk/types.js";
import { structuredToolError, withRetryReflect } from "@retry-reflect/mcp";
import { ScriptedChatModel } from "../model/scripted-chat-model.js";
import { isStructuredError } from "../tools/tool-hooks.js";
import { runModelLoop } from "./model-loop.js";
import { outputText, type ScenarioTool, scenarioTools } from "./scenario-tools.js";
import type { TurnEngine } from "./turn-engine.js";

/** The MCP annotations of an effect: what a server says of its tool, and what the adapter reads as its effect. */
function annotationsOf(effect: ScenarioTool["effect"]): ToolAnnotations | undefined {
  if (effect === "read") return { readOnlyHint: true };
  if (effect === "idempotent") return { readOnlyHint: false, idempotentHint: true };
  if (effect === "write") return { readOnlyHint: false, destructiveHint: true };
  return undefined;
}

/**
 * An in-process MCP server serving the scenario's tools, each with the annotations of its effect;
 * a tool's function runs with the request's signal (which the client adapter aborts at the
 * attempt's limit). A failure is returned as the adapter's README asks of a server:
 * `structuredToolError(error)`, an `isError` result holding the structured error (its code, and
 * `retry_after_ms` from a 429's `Retry-After`).
 */
function scenarioServer(tools: readonly ScenarioTool[]): McpServer {
  const server = new McpServer({ name: "retry-reflect-demo", version: "0.0.0" });
  for (const tool of tools) {
    const annotations = annotationsOf(tool.effect);
    server.registerTool(
      tool.name,
      { description: tool.description, inputSchema: tool.schema.shape, ...(annotations === undefined ? {} : { annotations }) },
      async (args: unknown, extra: { signal: AbortSignal }) => {
        try {
          const output = await tool.run(args, extra.signal);
          // A structured error the tool returned (the translation API's QUOTA_EXCEEDED) is an error result too.
          if (isStructuredError(output)) return structuredToolError(output);
          return { content: [{ type: "text" as const, text: outputText(output) }] };
        } catch (error) {
          return structuredToolError(error); // the error's class, status and Retry-After travel with it
        }
      },
    );
  }
  return server;
}

/** The text blocks of a `callTool` result, joined. */
function resultText(result: unknown): string {
  const content = (result as { content?: unknown }).content;
  if (!Array.isArray(content)) return JSON.stringify(result);
  return content.map((block: { type?: string; text?: string }) => (block.type === "text" ? (block.text ?? "") : "")).join("\n");
}

/**
 * `--adapter mcp`: the scenario's tools served by an `McpServer` in process (a linked in-memory
 * transport pair), called through `withRetryReflect(client, plugin).callTool(...)` from
 * `@retry-reflect/mcp`, by a loop around the scripted model that feeds each result's text back.
 * The adapter reads each tool's effect from its annotations; a `returnDirect` tool ends the turn.
 */
export const mcpEngine: TurnEngine = async (input) => {
  if (!(input.model instanceof ScriptedChatModel)) throw new Error("--adapter mcp plays the scripted model only");
  const scenario = scenarioTools(input);
  const server = scenarioServer(scenario);
  const [clientTransport, serverTransport] = InMemoryTransport.createLinkedPair();
  const client = new Client({ name: "retry-reflect-demo", version: "0.0.0" });
  await Promise.all([server.connect(serverTransport), client.connect(clientTransport)]);
  try {
    const tools = withRetryReflect(client, input.plugin, {
      scope: input.threadId,
      ...(input.namespace === undefined ? {} : { namespace: input.namespace }),
    });
    const { tools: offered } = await tools.listTools();
    const model = input.model.bindTools(offered);
    return await runModelLoop(input, model, async (call, toolCallId) => {
      const result = await tools.callTool({ name: call.name, arguments: call.args });
      const isError = (result as { isError?: unknown }).isError === true;
      const content = resultText(result);
      return {
        message: new ToolMessage({ name: call.name, tool_call_id: toolCallId, content, ...(isError ? { status: "error" as const } : {}) }),
        endTurn: !isError && scenario.some((tool) => tool.name === call.name && tool.returnDirect),
      };
    });
  } finally {
    await client.close();
    await server.close();
  }
};
