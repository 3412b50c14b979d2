import { withText } from "../cleaning/clean-error.js";
import type { ToolError } from "../errors/tool-error.js";
import type { FailedOutcome, ReflectOutcome } from "../outcome.js";
import { UNKNOWN_OUTCOME_ACTION } from "../texts/model-texts.js";
import type { TrackedAttempts } from "./attempt-tracker.js";
import { circuitOpenOutcome, exhaustedError, failedOutcome, reflectOutcome } from "./build-outcome.js";
import type { CallRun, Engine } from "./call-state.js";
import type { Decision } from "./decide.js";

/**
 * Carries a decision out: the events, the scope's counter (the gate time, the exhausted stop) and
 * the outcome; for an in-place retry, the delay to wait. `error` is already clean.
 */
export function applyDecision(
  engine: Engine,
  run: CallRun,
  tracked: TrackedAttempts,
  error: ToolError,
  decision: Decision,
  origin: "tool" | "refusal",
): ReflectOutcome | FailedOutcome | number {
  const { options, notifier, tracker } = engine;
  switch (decision.kind) {
    case "stop": {
      if (decision.reason === "not_recoverable") return failedOutcome(engine, run, error, "not_recoverable");
      if (decision.reason === "circuit_open") {
        return circuitOpenOutcome(engine, run, decision.retryAfterMs ?? 0, { last_error_code: error.code, last_error: error.message });
      }
      // Exhausted: the scope stops using the tool (with global tracking there is no task to stop: the count starts again).
      const mark = { message: error.message, lastErrorCode: error.code, lastError: error };
      if (options.trackingScope === "global") tracker.clear(run.counterKey, run.toolName);
      else tracked.exhausted = mark;
      notifier.emit("retries_exhausted", run.toolName, run.info, { tool_name: run.toolName, attempts: run.attempt, error: error.message });
      return failedOutcome(engine, run, exhaustedError(run, mark), "exhausted");
    }
    case "retry":
    case "reflect": {
      const inPlace = decision.kind === "retry";
      if (origin === "tool") {
        tracked.lastDelayMs = decision.delayMs;
        notifier.emit("retry", run.toolName, run.info, {
          tool_name: run.toolName,
          attempt: run.attempt,
          max: run.policy.maxRetries,
          backoff_ms: decision.delayMs,
          error: error.message,
          error_code: error.code,
          mode: inPlace ? "in_place" : "reflect",
        });
      }
      if (inPlace) return decision.delayMs;
      // The gate: a refusal moves it only when it asks for a wait.
      if (origin === "tool" || error.retryAfterMs !== undefined) tracked.readyAt = options.clock.now() + decision.delayMs;
      const shown =
        decision.kind === "reflect" && decision.unknownOutcome ? withText(error, { suggestedAction: UNKNOWN_OUTCOME_ACTION }) : error;
      return reflectOutcome(engine, run, shown, origin === "refusal");
    }
  }
}
