import { withText } from "../cleaning/clean-error.js";
import { ErrorCodes } from "../errors/error-codes.js";
import { createToolError, ToolError } from "../errors/tool-error.js";
import type { FailedOutcome, ReflectOutcome } from "../outcome.js";
import type { ExhaustedMark, TrackedAttempts } from "../state/counters.js";
import {
  exhaustedAction,
  exhaustedText,
  isolatedAction,
  isolatedMessage,
  isolatedText,
  notRecoverableAction,
  notRecoverableText,
  temporaryAction,
  UNKNOWN_OUTCOME_ACTION,
  unknownOutcomeText,
  WRITE_TIMEOUT_ACTION,
} from "../texts/model-texts.js";
import { ERROR_ONCE, NO_USES, type ReflectionTemplate } from "../texts/templater.js";
import type { CallRun } from "./call-state.js";
import { type Composed, compose, type FailureValues, placeholderValues } from "./compose-message.js";
import type { Decision, ReflectText } from "./decide.js";
import type { Engine } from "./engine.js";

// A decision carried out (`applyDecision`), and the outcomes the model reads, built from a run and
// its (clean) error: the reflection (the temporary text among them), the stops, and an isolated
// circuit's.

/** A failure retried in place after `delayMs` (the attempt loop waits, then runs the next attempt). */
export interface Retry {
  readonly status: "retry";
  readonly delayMs: number;
}

/**
 * Carries a decision out: the events, the scope's counter (the gate time, the exhausted stop) and
 * the outcome; or an in-place retry after its delay. `error` is already clean.
 */
export function applyDecision(
  engine: Engine,
  run: CallRun,
  tracked: TrackedAttempts,
  error: ToolError,
  decision: Decision,
  origin: "tool" | "refusal",
): ReflectOutcome | FailedOutcome | Retry {
  const { options, notifier, tracker } = engine;
  switch (decision.kind) {
    case "stop": {
      if (decision.reason === "not_recoverable") return failedOutcome(engine, run, error, "not_recoverable");
      // Exhausted: the scope stops using the tool (with global tracking there is no task to stop: the count starts again).
      const mark = { at: options.clock.now(), message: error.message, lastErrorCode: error.code, lastError: error };
      if (options.trackingScope === "global") tracker.clear(run.counterKey, run.toolName);
      else tracked.exhausted = mark;
      const resetMs = run.policy.exhaustedResetMs;
      notifier.emit(
        "retries_exhausted",
        run.toolName,
        run.info,
        options.trackingScope === "global" || resetMs === 0
          ? { tool_name: run.toolName, attempts: run.attempt, error: error.message }
          : { tool_name: run.toolName, attempts: run.attempt, error: error.message, retry_after_ms: resetMs },
      );
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
      if (inPlace) return { status: "retry", delayMs: decision.delayMs };
      // The gate: a refusal moves it only when it asks for a wait.
      if (origin === "tool" || error.retryAfterMs !== undefined) tracked.readyAt = options.clock.now() + decision.delayMs;
      let shown = error;
      if (decision.kind === "reflect" && decision.text === "unknown_outcome")
        shown = withText(error, { suggestedAction: UNKNOWN_OUTCOME_ACTION });
      // A failure of the tool told as temporary asks for the same call after the wait (a write cut
      // off at its limit, and a spent budget, keep their own action, which says why).
      const ownAction = error.suggestedAction === WRITE_TIMEOUT_ACTION || error.code === ErrorCodes.RETRY_BUDGET_SPENT;
      if (decision.kind === "reflect" && decision.text === "retry_later" && origin === "tool" && !ownAction) {
        shown = withText(error, { suggestedAction: temporaryAction(run.toolName) });
      }
      // The wait the model is told is the one the gate keeps (a server's Retry-After, capped); a
      // temporary failure always says it: the tool may work again after it.
      const told = decision.kind === "reflect" && decision.text === "retry_later";
      if ((told || shown.retryAfterMs !== undefined) && shown.retryAfterMs !== decision.delayMs) {
        shown = withText(shown, { retryAfterMs: decision.delayMs });
      }
      return reflectOutcome(
        engine,
        run,
        shown,
        origin === "refusal",
        decision.kind === "reflect" ? decision.text : "reflection",
        decision.delayMs,
      );
    }
  }
}

/**
 * `reflect`: the text (`reflection`: the reflection prompt; `retry_later`: the same call again in
 * about `waitMs`; `unknown_outcome`: check before calling again) and the structured error;
 * `refusal`: the error is the library's own (a call turned away).
 */
export function reflectOutcome(
  engine: Engine,
  run: CallRun,
  error: ToolError,
  refusal = false,
  text: ReflectText = "reflection",
  waitMs = 0,
): ReflectOutcome {
  let composed: Composed;
  if (text === "unknown_outcome") {
    composed = compose(
      engine,
      run,
      error,
      (values) => unknownOutcomeText(run.toolName, values.error),
      ERROR_ONCE,
      error.message,
      error.code,
    );
  } else {
    // A call turned away by an open circuit: the user's `circuitOpenPrompt`, if any.
    const circuit = error.code === ErrorCodes.CIRCUIT_OPEN ? run.policy.circuitOpenTemplate : undefined;
    const template = circuit ?? (text === "retry_later" ? run.policy.retryLaterTemplate : run.policy.template);
    // At least 1 s: "in about 0 s" reads as no wait at all.
    const retryAfterS = String(Math.max(1, Math.ceil(waitMs / 1000)));
    composed = templated(engine, run, error, template, retryAfterS, error.message, error.code, refusal);
  }
  return { status: "reflect", prompt: composed.text, message: composed.message, error: composed.error, attempt: run.attempt };
}

/**
 * `failed`: the stop instruction for its reason (the policy's template, else the built-in text), and
 * the structured error. The built-in not-recoverable text ends with the library's own instruction
 * for the code, never the error's `suggested_action` (that stays in the JSON).
 */
export function failedOutcome(engine: Engine, run: CallRun, given: ToolError, reason: FailedOutcome["reason"]): FailedOutcome {
  const { policy } = run;
  // The structured error's action is the library's own for a stop (the tool's, if any, stays `tool_suggested_action`).
  const stopAction = reason === "not_recoverable" ? notRecoverableAction(run.toolName, given.code, given.details?.fault) : undefined;
  const error = stopAction === undefined || stopAction === given.suggestedAction ? given : withText(given, { suggestedAction: stopAction });
  // An isolated circuit's stop has its own text (`circuitOpenOutcome`); the others may have the user's.
  const template =
    reason === "exhausted" ? policy.exhaustedTemplate : reason === "not_recoverable" ? policy.notRecoverableTemplate : undefined;
  let composed: Composed;
  if (template !== undefined) {
    // `{error_code}` is the last failure's code: an exhausted budget's, kept in the details the
    // engine wrote (a not-recoverable error's own details are the tool's: not read).
    const last = reason === "not_recoverable" ? undefined : error.details?.last_error_code;
    const retryAfterS = String(Math.ceil((error.retryAfterMs ?? causeRetryAfterMs(error) ?? 0) / 1000));
    composed = templated(engine, run, error, template, retryAfterS, error.message, typeof last === "string" ? last : error.code);
  } else if (reason === "exhausted") {
    composed = compose(
      engine,
      run,
      error,
      (values) => exhaustedText(run.toolName, run.attempt, values.error),
      ERROR_ONCE,
      error.message,
      error.code,
    );
  } else {
    const action = stopAction ?? error.suggestedAction;
    composed = compose(
      engine,
      run,
      error,
      (values) => notRecoverableText(run.toolName, values.error, action),
      ERROR_ONCE,
      error.message,
      error.code,
    );
  }
  return { status: "failed", message: composed.message, error: composed.error, reason, attempt: run.attempt };
}

/** A template's text and the structured error: `promptError` and `promptCode` are what `{error}` and `{error_code}` show. */
function templated(
  engine: Engine,
  run: CallRun,
  error: ToolError,
  template: ReflectionTemplate,
  retryAfterS: string,
  promptError: string,
  promptCode: string,
  own = false,
): Composed {
  const render = (values: FailureValues) => template.render(placeholderValues(run, values, retryAfterS));
  return compose(engine, run, error, render, template.uses, promptError, promptCode, own);
}

/** The wait a `RETRIES_EXHAUSTED` error's last failure asked for (its `cause`, a clean error). */
function causeRetryAfterMs(error: ToolError): number | undefined {
  const cause = error.cause;
  if (!ToolError.isInstance(cause)) return undefined;
  try {
    const wait = cause.retryAfterMs;
    return typeof wait === "number" && Number.isFinite(wait) ? wait : undefined;
  } catch {
    return undefined; // a not-recoverable error's cause is the tool's own object: read with care
  }
}

/** `RETRIES_EXHAUSTED`, keeping the failure that spent the budget as its `cause`. */
export function exhaustedError(run: CallRun, mark: ExhaustedMark): ToolError {
  return createToolError({
    code: ErrorCodes.RETRIES_EXHAUSTED,
    message: mark.message,
    recoverable: false,
    suggestedAction: exhaustedAction(run.toolName),
    details: { last_error_code: mark.lastErrorCode },
    cause: mark.lastError,
  });
}

/** `failed` / `CIRCUIT_OPEN` of an isolated circuit (an operator's `isolate()`): no promised time, a stop for the task. */
export function circuitOpenOutcome(engine: Engine, run: CallRun, _retryAfterMs: number): FailedOutcome {
  const error = createToolError({
    code: ErrorCodes.CIRCUIT_OPEN,
    message: isolatedMessage(run.toolName),
    recoverable: false,
    suggestedAction: isolatedAction(run.toolName),
    details: { isolated: true },
  });
  const text = isolatedText(run.toolName);
  const composed = compose(engine, run, error, () => text, NO_USES, error.message, error.code);
  return { status: "failed", message: composed.message, error: composed.error, reason: "circuit_open", attempt: run.attempt };
}
