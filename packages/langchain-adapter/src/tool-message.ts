import { ToolMessage } from "@langchain/core/messages";
import type { FailedOutcome, ReflectOutcome } from "@retry-reflect/core";

/**
 * The tool message a `reflect` or `failed` outcome becomes: `status: "error"`, the outcome's
 * message (the reflection prompt or the stop instruction, with the structured error as JSON)
 * as content, and the structured error (`{ error_code, message, recoverable, suggested_action,
 * retry_after_ms? }`) as `artifact`, so that code after the model can branch on it.
 * `response_metadata.retry_reflect` says which outcome it was.
 */
export function outcomeToolMessage(outcome: ReflectOutcome | FailedOutcome, toolName: string, callId: string | undefined): ToolMessage {
  return new ToolMessage({
    status: "error",
    content: outcome.message,
    artifact: outcome.error.toJSON(),
    tool_call_id: callId ?? "",
    name: toolName,
    response_metadata: {
      retry_reflect: {
        status: outcome.status,
        attempt: outcome.attempt,
        ...(outcome.status === "failed" ? { reason: outcome.reason } : {}),
      },
    },
  });
}

/**
 * A replayed result (an idempotent `write` call answered from the store) belongs to the call
 * that first produced it: re-address a stored `ToolMessage` to the tool call being answered now,
 * since the model's provider rejects a tool message whose id matches no pending call.
 */
export function readdressToolMessage<T>(stored: T, callId: string | undefined): T | ToolMessage {
  const value = reviveToolMessage(stored);
  if (!ToolMessage.isInstance(value) || callId === undefined || value.tool_call_id === callId) return value;
  return new ToolMessage({
    content: value.content,
    artifact: value.artifact,
    status: value.status,
    name: value.name,
    tool_call_id: callId,
    additional_kwargs: value.additional_kwargs,
    response_metadata: { ...value.response_metadata, retry_reflect: { status: "success", replayed: true } },
  });
}

/**
 * A store that keeps results as JSON (`@retry-reflect/redis`) gives a `ToolMessage` back in its
 * serialized form (`{ lc: 1, type: "constructor", id: [..., "ToolMessage"], kwargs }`): made a
 * `ToolMessage` again, so that a replay answers `createAgent` with a message, as the first call did.
 */
export function reviveToolMessage<T>(value: T): T | ToolMessage {
  if (typeof value !== "object" || value === null || ToolMessage.isInstance(value)) return value;
  const candidate = value as Record<string, unknown>;
  const id = candidate.id;
  if (
    candidate.lc !== 1 ||
    candidate.type !== "constructor" ||
    !Array.isArray(id) ||
    id[id.length - 1] !== "ToolMessage" ||
    typeof candidate.kwargs !== "object" ||
    candidate.kwargs === null
  ) {
    return value;
  }
  return new ToolMessage(candidate.kwargs as ConstructorParameters<typeof ToolMessage>[0] & object);
}
