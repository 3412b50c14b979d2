import { AIMessage, type BaseMessage, ToolMessage } from "@langchain/core/messages";

/** Helpers for scripts: what the conversation says so far. */

export function textOf(message: BaseMessage): string {
  const content = message.content;
  if (typeof content === "string") return content;
  return content
    .map((part) => (typeof part === "string" ? part : "text" in part && typeof part.text === "string" ? part.text : ""))
    .join("");
}

/** The tool results that answered the last model message (empty when the last message is not a tool result). */
export function lastToolResults(messages: readonly BaseMessage[]): ToolMessage[] {
  const results: ToolMessage[] = [];
  for (let index = messages.length - 1; index >= 0; index--) {
    const message = messages[index];
    if (message === undefined || !ToolMessage.isInstance(message)) break;
    results.unshift(message);
  }
  return results;
}

/** True for a tool result the plugin turned into an error (a reflection or a stop instruction). */
export function isErrorResult(message: ToolMessage): boolean {
  return message.status === "error";
}

/** Parses a JSON tool result; undefined when it is not JSON. */
export function jsonOf(message: BaseMessage): unknown {
  try {
    return JSON.parse(textOf(message));
  } catch {
    return undefined;
  }
}

/** The structured error `{error_code, recoverable, ...}` the plugin appends to its messages, if any. */
export function structuredErrorOf(
  message: ToolMessage,
): { error_code?: string; recoverable?: boolean; suggested_action?: string } | undefined {
  const artifact: unknown = message.artifact;
  if (typeof artifact === "object" && artifact !== null && "error_code" in artifact) return artifact as { error_code?: string };
  const text = textOf(message);
  const start = text.indexOf('{"error_code"');
  if (start < 0) return undefined;
  try {
    return JSON.parse(text.slice(start)) as { error_code?: string };
  } catch {
    return undefined;
  }
}

/** How many times the model already called `toolName` in this conversation. */
export function callsOf(messages: readonly BaseMessage[], toolName: string): number {
  let count = 0;
  for (const message of messages) {
    if (AIMessage.isInstance(message)) count += (message.tool_calls ?? []).filter((call) => call.name === toolName).length;
  }
  return count;
}
