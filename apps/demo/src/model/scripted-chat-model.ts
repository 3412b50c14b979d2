import { BaseChatModel, type BaseChatModelParams } from "@langchain/core/language_models/chat_models";
import { AIMessage, type BaseMessage } from "@langchain/core/messages";
import type { ChatResult } from "@langchain/core/outputs";

/** A tool call the script decides to make. */
export interface ScriptedToolCall {
  readonly name: string;
  readonly args: Record<string, unknown>;
}

/** What the script answers: a final text, or tool calls (with an optional thought). */
export type ScriptedReply = { readonly text: string } | { readonly toolCalls: readonly ScriptedToolCall[]; readonly text?: string };

/**
 * The scripted "model": a pure function of the conversation so far. It reads what the tools and
 * the plugin answered (a reflection prompt, a stop instruction) and decides, like a model would,
 * but deterministically.
 */
export type ChatScript = (messages: readonly BaseMessage[]) => ScriptedReply;

export interface ScriptedChatModelParams extends BaseChatModelParams {
  readonly script: ChatScript;
}

/**
 * An offline chat model driven by a script. Implements `bindTools` (the tools are only recorded),
 * so `createAgent` accepts it. Tool-call ids are `call_1`, `call_2`, ... per model instance.
 */
export class ScriptedChatModel extends BaseChatModel {
  readonly script: ChatScript;
  private readonly counter: { next: number };
  boundToolNames: readonly string[] = [];

  constructor(params: ScriptedChatModelParams, counter: { next: number } = { next: 1 }) {
    super(params);
    this.script = params.script;
    this.counter = counter;
  }

  _llmType(): string {
    return "scripted";
  }

  override bindTools(tools: readonly unknown[]): ScriptedChatModel {
    const bound = new ScriptedChatModel({ script: this.script }, this.counter);
    bound.boundToolNames = tools.map((tool) => (typeof tool === "object" && tool !== null && "name" in tool ? String(tool.name) : "?"));
    return bound;
  }

  async _generate(messages: BaseMessage[]): Promise<ChatResult> {
    const reply = this.script(messages);
    const text = reply.text ?? "";
    const message =
      "toolCalls" in reply
        ? new AIMessage({
            content: text,
            tool_calls: reply.toolCalls.map((call) => ({
              id: `call_${this.counter.next++}`,
              name: call.name,
              args: call.args,
              type: "tool_call" as const,
            })),
          })
        : new AIMessage({ content: text });
    return { generations: [{ text, message }] };
  }
}
