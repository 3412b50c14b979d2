import { tool as oaTool, RunContext, setTracingDisabled } from "@openai/agents";
import { tool as aiTool } from "ai";
import { createTool } from "@mastra/core/tools";
import { z } from "zod";
import * as oa from "@retry-reflect/openai-agents";
import * as ai from "@retry-reflect/ai-sdk";
import * as ma from "@retry-reflect/mastra";
import * as mcp from "@retry-reflect/mcp";
import { RetryReflectPlugin } from "@retry-reflect/core";
setTracingDisabled(true);
const definition = { name: "noop", description: "Does nothing.", parameters: z.object({}), execute: async () => "ok" };
const bare = oaTool(definition);
const [ours] = oa.withRetryReflect([definition], RetryReflectPlugin.create({}));
const runContext = new RunContext({});
const details = () => ({ toolCall: { type: "function_call", callId: "call_1", name: "noop", arguments: "{}" } });
const N = 300_000;
async function loopOA(t) { for (let i = 0; i < N; i++) await t.invoke(runContext, "{}", details()); }
async function measure(label) { const res = []; for (let r = 0; r < 3; r++) { const out = []; for (const [n, t] of [["bare", bare], ["ours", ours]]) { const a = process.cpuUsage(); await loopOA(t); const b = process.cpuUsage(); out.push((b.user + b.system - a.user - a.system) * 1000 / N); } res.push(out); } console.log(label, res.map(([b, o]) => `bare ${b.toFixed(0)} ours ${o.toFixed(0)} (+${(o - b).toFixed(0)})`).join(" | ")); }
await loopOA(bare); await loopOA(ours);
await measure("alone");
if (process.argv[2] === "mix") {
  const aiw = ai.withRetryReflect({ noop: aiTool({ description: "noop", inputSchema: z.object({}), execute: async () => "ok" }) }, RetryReflectPlugin.create({})).noop;
  const maw = ma.withRetryReflect({ noop: createTool({ id: "noop", description: "d", inputSchema: z.object({}), execute: async () => "ok" }) }, RetryReflectPlugin.create({})).noop;
  const ready = { content: [{ type: "text", text: "ok" }] };
  const mcpw = mcp.withRetryReflect({ callTool: async () => ready, listTools: async () => ({ tools: [{ name: "noop", inputSchema: { type: "object" }, annotations: { readOnlyHint: true } }] }) }, RetryReflectPlugin.create({}), { toolEffects: { noop: "read" } });
  for (let i = 0; i < 200_000; i++) { await aiw.execute({}, { toolCallId: "c", messages: [], abortSignal: undefined, experimental_context: undefined }); await maw.execute({}, { runId: "r", agent: { agentId: "a", toolCallId: "c", messages: [] } }); await mcpw.callTool({ name: "noop", arguments: {} }); }
  await measure("after others");
}
