import { ToolMessage } from "@langchain/core/messages";
import type { ExecuteOutcome } from "@retry-reflect/core";
import { runModelLoop } from "./model-loop.js";
import type { TurnEngine } from "./turn-engine.js";

function toToolMessage(outcome: ExecuteOutcome<unknown>, toolName: string, toolCallId: string): ToolMessage {
  if (outcome.status === "success") {
    const value = outcome.value;
    return new ToolMessage({
      name: toolName,
      tool_call_id: toolCallId,
      content: typeof value === "string" ? value : JSON.stringify(value),
    });
  }
  return new ToolMessage({
    name: toolName,
    tool_call_id: toolCallId,
    content: outcome.message,
    status: "error",
    artifact: outcome.error.toJSON(),
  });
}

/**
 * A minimal agent loop on the core API alone (`plugin.execute`), without LangChain's agent:
 * what the LangChain adapter does, in a few lines. Used with `--engine core`.
 */
export const coreEngine: TurnEngine = async (input) => {
  if (typeof input.model.bindTools !== "function") throw new Error("the model cannot call tools (no bindTools)");
  const model = input.model.bindTools([...input.tools]);
  return runModelLoop(input, model, async (call, toolCallId) => {
    const tool = input.tools.find((candidate) => candidate.name === call.name);
    if (!tool) {
      const content = `Error: tool '${call.name}' does not exist.`;
      return { message: new ToolMessage({ name: call.name, tool_call_id: toolCallId, content, status: "error" }) };
    }
    const outcome = await input.plugin.execute(
      { toolName: call.name, args: call.args, callId: toolCallId, scope: input.threadId, namespace: input.namespace },
      // The attempt's signal (aborted by `attemptTimeoutMs`) becomes the tool's `config.signal`.
      (args, context) => tool.invoke(args, { signal: context.signal }),
    );
    const returnDirect = outcome.status === "success" && "returnDirect" in tool && tool.returnDirect === true;
    return { message: toToolMessage(outcome, call.name, toolCallId), endTurn: returnDirect };
  });
};
