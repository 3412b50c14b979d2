import { AIMessage, type BaseMessage, SystemMessage, type ToolMessage } from "@langchain/core/messages";
import type { ToolCall } from "@langchain/core/messages/tool";
import { MAX_MODEL_CALLS_PER_TURN, type TurnInput } from "./turn-engine.js";

/** A model that has its tools bound. */
interface BoundModel {
  invoke(messages: BaseMessage[]): Promise<{ content: AIMessage["content"]; tool_calls?: ToolCall[] }>;
}

/** What an engine did with one tool call: the message the model gets, and whether the turn ends after this batch. */
export interface ToolCallResult {
  readonly message: ToolMessage;
  readonly endTurn?: boolean;
}

/**
 * The loop of an engine that drives the model itself (`--engine core`, `--adapter mcp`): call the
 * model, report its reply, run each tool call through `runCall` and feed the results back, until
 * the model answers without tool calls, a call ends the turn, or `MAX_MODEL_CALLS_PER_TURN`.
 */
export async function runModelLoop(
  input: TurnInput,
  model: BoundModel,
  runCall: (call: ToolCall, toolCallId: string) => Promise<ToolCallResult>,
): Promise<BaseMessage[]> {
  const messages: BaseMessage[] = [...input.messages];
  for (let step = 0; step < MAX_MODEL_CALLS_PER_TURN; step++) {
    const reply = await model.invoke([new SystemMessage(input.systemPrompt), ...messages]);
    const message = new AIMessage({ content: reply.content, tool_calls: reply.tool_calls ?? [] });
    messages.push(message);
    input.reporter.modelReplied(message);
    const calls = message.tool_calls ?? [];
    if (calls.length === 0) return messages;
    let endTurn = false;
    for (const call of calls) {
      input.reporter.toolCallStarted(call.name);
      const result = await runCall(call, call.id ?? `${call.name}_${step}`);
      messages.push(result.message);
      input.reporter.toolCallEnded(result.message);
      if (result.endTurn === true) endTurn = true;
    }
    if (endTurn) return messages;
  }
  return messages;
}
