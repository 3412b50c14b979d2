import type { BaseMessage, ToolMessage } from "@langchain/core/messages";
import { isErrorResult, lastToolResults, structuredErrorOf, textOf } from "../model/conversation.js";

/** The latest tool result the model is answering, if the last message is one. */
export function latestResult(messages: readonly BaseMessage[]): ToolMessage | undefined {
  const results = lastToolResults(messages);
  return results[results.length - 1];
}

/** True when the plugin told the model to stop using the tool (a `failed` outcome). */
export function mustStop(result: ToolMessage): boolean {
  if (!isErrorResult(result)) return false;
  const structured = structuredErrorOf(result);
  if (structured?.recoverable === false) return true;
  if (structured?.error_code === "RETRIES_EXHAUSTED" || structured?.error_code === "CIRCUIT_OPEN") return true;
  return /do not (call|retry)/i.test(textOf(result));
}

/** The error the plugin reported, for the model's apology. */
export function reportedError(result: ToolMessage): string {
  const structured = structuredErrorOf(result);
  return structured && "message" in structured && typeof structured.message === "string"
    ? structured.message
    : (textOf(result).split("\n")[0] ?? "");
}
