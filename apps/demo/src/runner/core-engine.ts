import { AIMessage, type BaseMessage, SystemMessage, ToolMessage } from "@langchain/core/messages";
import type { ExecuteOutcome } from "@retry-reflect/core";
import { MAX_MODEL_CALLS_PER_TURN, type TurnEngine } from "./turn-engine.js";

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
  const messages: BaseMessage[] = [...input.messages];
  if (typeof input.model.bindTools !== "function") throw new Error("the model cannot call tools (no bindTools)");
  const model = input.model.bindTools([...input.tools]);
  for (let step = 0; step < MAX_MODEL_CALLS_PER_TURN; step++) {
    const reply = await model.invoke([new SystemMessage(input.systemPrompt), ...messages]);
    const message = new AIMessage({ content: reply.content, tool_calls: reply.tool_calls ?? [] });
    messages.push(message);
    input.reporter.modelReplied(message);
    const calls = message.tool_calls ?? [];
    if (calls.length === 0) return messages;
    let returnDirect = false;
    for (const call of calls) {
      const tool = input.tools.find((candidate) => candidate.name === call.name);
      const toolCallId = call.id ?? `${call.name}_${step}`;
      input.reporter.toolCallStarted(call.name);
      let result: ToolMessage;
      if (!tool) {
        result = new ToolMessage({
          name: call.name,
          tool_call_id: toolCallId,
          content: `Error: tool '${call.name}' does not exist.`,
          status: "error",
        });
      } else {
        const outcome = await input.plugin.execute(
          { toolName: call.name, args: call.args, callId: toolCallId, scope: input.threadId },
          // The attempt's signal (aborted by `attemptTimeoutMs`) becomes the tool's `config.signal`.
          (args, context) => tool.invoke(args, { signal: context.signal }),
        );
        result = toToolMessage(outcome, call.name, toolCallId);
        if (outcome.status === "success" && "returnDirect" in tool && tool.returnDirect === true) returnDirect = true;
      }
      messages.push(result);
      input.reporter.toolCallEnded(result);
    }
    if (returnDirect) return messages;
  }
  return messages;
};
