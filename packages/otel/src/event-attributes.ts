import type { Attributes } from "@opentelemetry/api";
import type { RetryReflectEvent } from "@retry-reflect/core/events";
import { ATTR_GEN_AI_TOOL_NAME, RETRY_REFLECT_FIELD_PREFIX } from "./semconv.js";
import type { ErrorTextMode } from "./types.js";

/** Event fields that hold error text (the rest are codes, numbers and enumerations). */
const ERROR_TEXT_FIELDS: ReadonlySet<string> = new Set(["error"]);

/**
 * The attributes of an event's span event and log record: `tool_name` becomes
 * `gen_ai.tool.name`, every other documented field `retry_reflect.<field>`
 * (`retry_reflect.attempt`, `retry_reflect.backoff_ms`, ...), in documented order. With
 * `"code-only"`, the error text (`error`) is left out.
 */
export function eventAttributes(event: RetryReflectEvent, errorText: ErrorTextMode): Attributes {
  const attributes: Attributes = {};
  for (const [field, value] of Object.entries(event.fields) as [string, unknown][]) {
    if (typeof value !== "string" && typeof value !== "number" && typeof value !== "boolean") continue;
    if (errorText === "code-only" && ERROR_TEXT_FIELDS.has(field)) continue;
    const key = field === "tool_name" ? ATTR_GEN_AI_TOOL_NAME : `${RETRY_REFLECT_FIELD_PREFIX}${field}`;
    attributes[key] = value;
  }
  if (attributes[ATTR_GEN_AI_TOOL_NAME] === undefined) attributes[ATTR_GEN_AI_TOOL_NAME] = event.toolName;
  return attributes;
}

const CIRCUIT_STATE_OF_EVENT: Partial<Record<RetryReflectEvent["type"], string>> = {
  circuit_opened: "open",
  circuit_half_opened: "half-open",
  circuit_closed: "closed",
};

/** The breaker state a breaker event moves to (`open`, `half-open`, `closed`); undefined for other events. */
export function circuitStateOfEvent(event: RetryReflectEvent): string | undefined {
  return CIRCUIT_STATE_OF_EVENT[event.type];
}
