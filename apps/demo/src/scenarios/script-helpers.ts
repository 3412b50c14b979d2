import type { BaseMessage, ToolMessage } from "@langchain/core/messages";
import { isErrorResult, lastToolResults, structuredErrorOf, textOf } from "../model/conversation.js";

/** The latest tool result the model is answering, if the last message is one. */
export function latestResult(messages: readonly BaseMessage[]): ToolMessage | undefined {
  const results = lastToolResults(messages);
  return results[results.length - 1];
}

/**
 * True when the plugin told the model to stop using the tool (a `failed` outcome: not
 * recoverable, retries exhausted, the give-up time, an isolated circuit): only the definitive
 * stops say "do not call ... again". An open circuit is temporary, not a stop.
 */
export function mustStop(result: ToolMessage): boolean {
  if (!isErrorResult(result)) return false;
  const structured = structuredErrorOf(result);
  if (structured?.recoverable === false) return true;
  if (structured?.error_code === "RETRIES_EXHAUSTED") return true;
  return /do not (call|retry)/i.test(textOf(result));
}

/**
 * The wait in seconds when the plugin told the model that the tool is temporarily unavailable
 * (a transient failure that outlasted the call's patience, an open circuit): "It may work again in
 * about N s". Undefined for any other result.
 */
export function temporaryWaitSeconds(result: ToolMessage): number | undefined {
  if (!isErrorResult(result) || mustStop(result)) return undefined;
  const structured = structuredErrorOf(result) as { recoverable?: boolean; retry_after_ms?: unknown } | undefined;
  if (structured?.recoverable !== true || typeof structured.retry_after_ms !== "number") return undefined;
  if (!/is temporarily unavailable/.test(textOf(result))) return undefined;
  return Math.max(1, Math.ceil(structured.retry_after_ms / 1000));
}

/** The error the plugin reported, for the model's apology. */
export function reportedError(result: ToolMessage): string {
  const structured = structuredErrorOf(result);
  return structured && "message" in structured && typeof structured.message === "string"
    ? structured.message
    : (textOf(result).split("\n")[0] ?? "");
}
