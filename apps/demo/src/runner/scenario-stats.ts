import type { CallEnd, CallInfo, RetryReflectEvent, RetryReflectObserver } from "@retry-reflect/core/events";
import type { ToolHooks } from "../tools/tool-hooks.js";

/** A tool result as the model received it. */
export interface ToolResultRecord {
  readonly toolName: string;
  /** `"error"` for a reflection or a stop instruction from the plugin. */
  readonly status: "success" | "error";
  readonly content: string;
}

/** What happened in one scenario, counted from the tools, the model and the plugin's events. */
export interface ScenarioStats {
  /** Real runs of tool functions (a replay or a fail-fast is not one). */
  toolExecutions: number;
  executionsByTool: Record<string, number>;
  modelCalls: number;
  /** `retry` events with `mode=in_place`: the same call repeated without a model round trip. */
  retriesInPlace: number;
  /** Calls that ended with a reflection prompt: the model was asked to correct its arguments. */
  reflections: number;
  /**
   * Calls that ended with the temporary text: the tool is temporarily unavailable, it may work
   * again after the wait told (`retry_after_ms`), call it again then or tell the user. A transient
   * failure that outlasted the call's patience, or a call turned away by an open circuit.
   */
  temporary: number;
  /** Breaker moves in order: `open`, `half-open`, `closed`. */
  breakerTransitions: string[];
  /** Calls that failed fast on an open circuit. */
  callsRejected: number;
  /** Calls that met an open circuit due to let a probe through within their patience, and waited (`waiting_for_recovery`). */
  waitsForRecovery: number;
  /** Attempts the plugin cut off at `attemptTimeoutMs` (`attempt_timed_out` events). */
  attemptsTimedOut: number;
  /** Tool runs whose signal aborted while they ran, as the tool saw it (it then stops its work). */
  signalsAborted: number;
  /** Writes answered from the plugin's idempotency guard without running the tool. */
  guardReplays: number;
  /** Writes the email service answered from its own `Idempotency-Key` record (it got the key from the tool). */
  serviceDeduplicated: number;
  /** Emails the email service actually sent. */
  emailsSent: number;
  /** Logical calls the plugin handled, by tool (an excluded tool never appears). */
  callsHandledByTool: Record<string, number>;
  events: RetryReflectEvent[];
  toolResults: ToolResultRecord[];
  /** The model's last text answer. */
  finalAnswer: string;
}

export function createScenarioStats(): ScenarioStats {
  return {
    toolExecutions: 0,
    executionsByTool: {},
    modelCalls: 0,
    retriesInPlace: 0,
    reflections: 0,
    temporary: 0,
    breakerTransitions: [],
    callsRejected: 0,
    waitsForRecovery: 0,
    attemptsTimedOut: 0,
    signalsAborted: 0,
    guardReplays: 0,
    serviceDeduplicated: 0,
    emailsSent: 0,
    callsHandledByTool: {},
    events: [],
    toolResults: [],
    finalAnswer: "",
  };
}

/** Duplicate writes prevented, by the guard and by the service that received the key. */
export function duplicateWritesPrevented(stats: ScenarioStats): number {
  return stats.guardReplays + stats.serviceDeduplicated;
}

/**
 * True for a `reflect` end told as temporary (the retry-later text): a transient failure, or an
 * open circuit's `CIRCUIT_OPEN`. Any other `reflect` end is a reflection prompt.
 */
export function isTemporaryEnd(end: CallEnd): boolean {
  return end.status === "reflect" && (end.error?.kind === "transient" || end.error?.code === "CIRCUIT_OPEN");
}

/** An observer that counts the plugin's events and handled calls into `stats`. */
export function statsObserver(stats: ScenarioStats): RetryReflectObserver {
  return {
    onCallStart(call: CallInfo) {
      stats.callsHandledByTool[call.toolName] = (stats.callsHandledByTool[call.toolName] ?? 0) + 1;
    },
    onCallEnd(_call, end) {
      if (end.status !== "reflect") return;
      if (isTemporaryEnd(end)) stats.temporary++;
      else stats.reflections++;
    },
    onEvent(event) {
      stats.events.push(event);
      switch (event.type) {
        case "retry":
          if (event.fields.mode === "in_place") stats.retriesInPlace++;
          break;
        case "circuit_opened":
          stats.breakerTransitions.push("open");
          break;
        case "circuit_half_opened":
          stats.breakerTransitions.push("half-open");
          break;
        case "circuit_closed":
          stats.breakerTransitions.push("closed");
          break;
        case "call_rejected":
          stats.callsRejected++;
          break;
        case "waiting_for_recovery":
          stats.waitsForRecovery++;
          break;
        case "attempt_timed_out":
          stats.attemptsTimedOut++;
          break;
        case "idempotent_replay":
          stats.guardReplays++;
          break;
        default:
          break;
      }
    },
  };
}

/** Tool hooks that count executions into `stats` and pass everything on to `next`. */
export function countingHooks(stats: ScenarioStats, next: ToolHooks): ToolHooks {
  return {
    onExecute(toolName, args) {
      stats.toolExecutions++;
      stats.executionsByTool[toolName] = (stats.executionsByTool[toolName] ?? 0) + 1;
      next.onExecute?.(toolName, args);
    },
    onToolError(toolName, message) {
      next.onToolError?.(toolName, message);
    },
    onAbort(toolName, reason) {
      stats.signalsAborted++;
      next.onAbort?.(toolName, reason);
    },
  };
}
