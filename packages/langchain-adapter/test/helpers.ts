export { drive, recordEvents } from "@retry-reflect/core/testing";

import { AIMessage, type BaseMessage, ToolMessage } from "@langchain/core/messages";
import type { RetryReflectEvent } from "@retry-reflect/core/events";

/** The model's turn that calls tools (no text), as a provider would send it. */
export function callTools(...calls: Array<{ name: string; args: Record<string, unknown>; id: string }>): AIMessage {
  return new AIMessage({ content: "", tool_calls: calls.map((call) => ({ ...call, type: "tool_call" as const })) });
}

/** `type: text` lines of a transcript, the way the seed shows one. */
export function transcript(messages: readonly BaseMessage[]): string[] {
  return messages.map((message) => {
    if (ToolMessage.isInstance(message)) return `[tool ${message.name} ${message.status ?? "success"}]: ${String(message.content)}`;
    if (AIMessage.isInstance(message) && message.tool_calls && message.tool_calls.length > 0) {
      return `[model]: ${message.tool_calls.map((call) => `${call.name}(${JSON.stringify(call.args)})`).join(", ")}`;
    }
    return `[${message.getType()}]: ${String(message.content)}`;
  });
}

/** One field of an event, whatever its type. */
export function fieldOf(event: RetryReflectEvent, name: string): unknown {
  return (event.fields as Readonly<Record<string, unknown>>)[name];
}
