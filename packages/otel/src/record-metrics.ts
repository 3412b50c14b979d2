import type { Attributes } from "@opentelemetry/api";
import type { CallEnd, CallInfo, RetryReflectEvent } from "@retry-reflect/core/events";
import { circuitStateOfEvent } from "./event-attributes.js";
import type { Instruments } from "./instruments.js";
import {
  ATTR_ERROR_TYPE,
  ATTR_GEN_AI_OPERATION_NAME,
  ATTR_GEN_AI_TOOL_NAME,
  ATTR_RETRY_REFLECT_CIRCUIT_STATE,
  ATTR_RETRY_REFLECT_ERROR_CODE,
  ATTR_RETRY_REFLECT_MODE,
  ATTR_RETRY_REFLECT_OUTCOME,
  ERROR_TYPE_VALUE_OTHER,
  GEN_AI_OPERATION_NAME_VALUE_EXECUTE_TOOL,
} from "./semconv.js";

/** Counts an event: retries (by mode and error code), breaker transitions, rejections, waits for recovery, replays, spent retry budgets. */
export function recordEventMetrics(instruments: Instruments, event: RetryReflectEvent): void {
  const tool = { [ATTR_GEN_AI_TOOL_NAME]: event.toolName };
  switch (event.type) {
    case "retry":
      instruments.retries.add(1, {
        ...tool,
        [ATTR_RETRY_REFLECT_MODE]: event.fields.mode,
        [ATTR_RETRY_REFLECT_ERROR_CODE]: event.fields.error_code,
      });
      return;
    case "circuit_opened":
    case "circuit_half_opened":
    case "circuit_closed":
      instruments.transitions.add(1, { ...tool, [ATTR_RETRY_REFLECT_CIRCUIT_STATE]: circuitStateOfEvent(event) });
      return;
    case "call_rejected":
      instruments.rejections.add(1, tool);
      return;
    case "waiting_for_recovery":
      instruments.recoveryWaits.add(1, tool);
      return;
    case "idempotent_replay":
      instruments.replays.add(1, tool);
      return;
    case "retry_budget_spent":
      instruments.budgetSpent.add(1, tool);
      return;
    default:
      return;
  }
}

/** Records a call's duration in seconds (by tool, outcome, `error.type`) and counts reflections. */
export function recordCallMetrics(instruments: Instruments, call: CallInfo, end: CallEnd, errorType: string | undefined): void {
  const attributes: Attributes = {
    [ATTR_GEN_AI_OPERATION_NAME]: GEN_AI_OPERATION_NAME_VALUE_EXECUTE_TOOL,
    [ATTR_GEN_AI_TOOL_NAME]: call.toolName,
    [ATTR_RETRY_REFLECT_OUTCOME]: end.status,
  };
  if (errorType !== undefined) attributes[ATTR_ERROR_TYPE] = errorType;
  instruments.duration.record(Math.max(0, end.durationMs) / 1000, attributes);
  if (end.status === "reflect") {
    instruments.reflections.add(1, {
      [ATTR_GEN_AI_TOOL_NAME]: call.toolName,
      [ATTR_RETRY_REFLECT_ERROR_CODE]: end.error?.code ?? ERROR_TYPE_VALUE_OTHER,
    });
  }
}
