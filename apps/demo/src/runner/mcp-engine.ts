import { ToolMessage } from "@langchain/core/messages";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { withRetryReflect } from "@retry-reflect/mcp";
import { z } from "zod";
import { ScriptedChatModel } from "../model/scripted-chat-model.js";
import type { DemoServices } from "../services/start-services.js";
import { errorText, observeExecution, type ToolHooks } from "../tools/tool-hooks.js";
import { fetchWeather, WEATHER_TOOL_DESCRIPTION } from "../tools/weather-tool.js";
import { runModelLoop } from "./model-loop.js";
import type { TurnEngine } from "./turn-engine.js";

/**
 * An in-process MCP server whose `get_weather` calls the demo's weather service. A failure is
 * returned as MCP tools return them: `isError: true` with the service's error text.
 */
function weatherServer(services: DemoServices, hooks: ToolHooks): McpServer {
  const server = new McpServer({ name: "retry-reflect-demo-weather", version: "0.0.0" });
  server.registerTool(
    "get_weather",
    {
      description: WEATHER_TOOL_DESCRIPTION,
      inputSchema: { city: z.string().describe("City name, e.g. NYC, London, Paris"), units: z.string().describe("Temperature units") },
    },
    async (args, extra) => {
      try {
        const body = await observeExecution(hooks, "get_weather", args, () => fetchWeather(services.weather.url, args, extra.signal));
        return { content: [{ type: "text" as const, text: JSON.stringify(body) }] };
      } catch (error) {
        return { content: [{ type: "text" as const, text: errorText(error) }], isError: true };
      }
    },
  );
  return server;
}

/** The text blocks of a `callTool` result, joined. */
function resultText(result: unknown): string {
  const content = (result as { content?: unknown }).content;
  if (!Array.isArray(content)) return JSON.stringify(result);
  return content.map((block: { type?: string; text?: string }) => (block.type === "text" ? (block.text ?? "") : "")).join("\n");
}

/**
 * `--adapter mcp`: `get_weather` served by an `McpServer` in process (a linked in-memory transport
 * pair), called through `withRetryReflect(client, plugin).callTool(...)` from `@retry-reflect/mcp`,
 * by a loop around the scripted model that feeds each result's text back. Plays scenario 1 only.
 */
export const mcpEngine: TurnEngine = async (input) => {
  if (!(input.model instanceof ScriptedChatModel)) throw new Error("--adapter mcp plays the scripted model only");
  const { services, hooks = {} } = input;
  if (!services) throw new Error("--adapter mcp needs the scenario's services");
  const server = weatherServer(services, hooks);
  const [clientTransport, serverTransport] = InMemoryTransport.createLinkedPair();
  const client = new Client({ name: "retry-reflect-demo", version: "0.0.0" });
  await Promise.all([server.connect(serverTransport), client.connect(clientTransport)]);
  try {
    const tools = withRetryReflect(client, input.plugin, { scope: input.threadId });
    const { tools: offered } = await tools.listTools();
    const model = input.model.bindTools(offered);
    return await runModelLoop(input, model, async (call, toolCallId) => {
      const result = await tools.callTool({ name: call.name, arguments: call.args });
      const isError = (result as { isError?: unknown }).isError === true;
      const content = resultText(result);
      return {
        message: new ToolMessage({ name: call.name, tool_call_id: toolCallId, content, ...(isError ? { status: "error" as const } : {}) }),
      };
    });
  } finally {
    await client.close();
    await server.close();
  }
};
