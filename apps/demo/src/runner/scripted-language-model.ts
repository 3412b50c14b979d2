import { AIMessage, type BaseMessage, HumanMessage, SystemMessage, ToolMessage } from "@langchain/core/messages";
import { MockLanguageModelV3 } from "ai/test";
import type { ChatScript } from "../model/scripted-chat-model.js";
import { scriptedReplies } from "./scripted-turn.js";
import type { TurnInput } from "./turn-engine.js";

type ModelTurn = Awaited<ReturnType<MockLanguageModelV3["doGenerate"]>>;
type ModelPrompt = Parameters<MockLanguageModelV3["doGenerate"]>[0]["prompt"];

const usage = {
  inputTokens: { total: 0, noCache: 0, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 0, text: 0, reasoning: 0 },
};

/** What an AI SDK tool output says, as text (the error text of a failure, JSON for a value). */
function outputText(output: { type: string; value?: unknown }): { text: string; error: boolean } {
  const error = output.type.startsWith("error");
  const text = typeof output.value === "string" ? output.value : JSON.stringify(output.value ?? null);
  return { text, error };
}

/** The AI SDK prompt (what `generateText`, or a Mastra agent, sends a model) as LangChain messages, which the scenario scripts read. */
export function toScriptMessages(prompt: ModelPrompt): BaseMessage[] {
  const messages: BaseMessage[] = [];
  for (const message of prompt) {
    if (message.role === "system") messages.push(new SystemMessage(message.content));
    else if (message.role === "user") {
      messages.push(new HumanMessage(message.content.map((part) => (part.type === "text" ? part.text : "")).join("")));
    } else if (message.role === "assistant") {
      const text = message.content.map((part) => (part.type === "text" ? part.text : "")).join("");
      const toolCalls = message.content.flatMap((part) =>
        part.type === "tool-call"
          ? [{ id: part.toolCallId, name: part.toolName, args: (part.input ?? {}) as Record<string, unknown>, type: "tool_call" as const }]
          : [],
      );
      messages.push(new AIMessage({ content: text, tool_calls: toolCalls }));
    } else if (message.role === "tool") {
      for (const part of message.content) {
        if (part.type !== "tool-result") continue;
        const { text, error } = outputText(part.output as { type: string; value?: unknown });
        messages.push(
          new ToolMessage({ tool_call_id: part.toolCallId, name: part.toolName, content: text, ...(error ? { status: "error" } : {}) }),
        );
      }
    }
  }
  return messages;
}

/**
 * A mock AI SDK model (`MockLanguageModelV3` from `ai/test`) that replays the scenario's script: it
 * turns the prompt it is sent into the messages the script reads, and the script's reply into a
 * provider answer (tool calls, or text). Each reply is reported to the transcript. The model of
 * `--adapter ai-sdk` and of `--adapter mastra` (a Mastra agent runs AI SDK models).
 */
export function scriptedLanguageModel(script: ChatScript, input: TurnInput, conversation: BaseMessage[]): MockLanguageModelV3 {
  const reply = scriptedReplies(script, input, conversation);
  return new MockLanguageModelV3({
    doGenerate: async (options): Promise<ModelTurn> => {
      options.abortSignal?.throwIfAborted();
      const { text, calls } = reply(toScriptMessages(options.prompt));
      if (calls.length === 0)
        return { content: [{ type: "text", text }], finishReason: { unified: "stop", raw: "stop" }, usage, warnings: [] };
      return {
        content: [
          ...(text ? [{ type: "text" as const, text }] : []),
          ...calls.map((call) => ({
            type: "tool-call" as const,
            toolCallId: call.id,
            toolName: call.name,
            input: JSON.stringify(call.args),
          })),
        ],
        finishReason: { unified: "tool-calls", raw: "tool_calls" },
        usage,
        warnings: [],
      };
    },
  });
}
