import type { RetryBudgetSettings } from "../budget/retry-budget.js";
import { ErrorCodes } from "../errors/error-codes.js";
import { ToolError } from "../errors/tool-error.js";
import type { FailedOutcome, ReflectOutcome } from "../outcome.js";
import { RETRY_BUDGET_SPENT_ACTION } from "../texts/model-texts.js";
import type { TrackedAttempts } from "./attempt-tracker.js";
import type { CallRun } from "./call-state.js";
import { applyDecision } from "./decision.js";
import type { Engine } from "./engine.js";

/**
 * A transient failure the policy would retry in place, while its tool's retry budget is spent: the
 * call ends `reflect` (`RETRY_BUDGET_SPENT`, recoverable, the temporary text): the same call again
 * after a wait drawn uniformly from [`waitMs` (until the window has room), `waitMs` + the window].
 * Calls turned away together (a fleet's, when its service is overloaded) so come back spread over a
 * window, not together as it slides: a herd that would meet the overloaded service, and the spent
 * budget, again.
 */
export function budgetSpent(
  engine: Engine,
  run: CallRun,
  tracked: TrackedAttempts,
  error: ToolError,
  budget: RetryBudgetSettings,
  waitMs: number,
): ReflectOutcome | FailedOutcome {
  const delayMs = Math.ceil(waitMs) + Math.floor(engine.options.random() * budget.windowMs);
  engine.notifier.emit("retry_budget_spent", run.toolName, run.info, {
    tool_name: run.toolName,
    window_ms: budget.windowMs,
    retry_after_ms: delayMs,
  });
  const spent = new ToolError({
    code: ErrorCodes.RETRY_BUDGET_SPENT,
    message: error.message,
    recoverable: true,
    kind: "other",
    suggestedAction: RETRY_BUDGET_SPENT_ACTION,
    retryAfterMs: delayMs,
    details: { last_error_code: error.code },
  });
  return applyDecision(engine, run, tracked, spent, { kind: "reflect", delayMs, text: "retry_later" }, "tool") as
    | ReflectOutcome
    | FailedOutcome;
}
