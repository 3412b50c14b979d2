import { withText } from "../cleaning/clean-error.js";
import { ErrorCodes } from "../errors/error-codes.js";
import { createToolError, ToolError } from "../errors/tool-error.js";
import type { FailedOutcome, ReflectOutcome } from "../outcome.js";
import {
  exhaustedAction,
  exhaustedText,
  isolatedAction,
  isolatedMessage,
  isolatedText,
  notRecoverableAction,
  notRecoverableText,
  unknownOutcomeText,
} from "../texts/model-texts.js";
import { ERROR_ONCE, NO_USES, type ReflectionTemplate } from "../texts/templater.js";
import type { ExhaustedMark } from "./attempt-tracker.js";
import type { CallRun } from "./call-state.js";
import { type Composed, compose, type FailureValues, placeholderValues } from "./compose-message.js";
import type { ReflectText } from "./decision.js";
import type { Engine } from "./engine.js";

// The outcomes the model reads, built from a run and its (clean) error: the reflection (the
// temporary text among them), the stops, and an isolated circuit's.

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
