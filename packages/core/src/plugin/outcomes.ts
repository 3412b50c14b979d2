import { ErrorCodes } from "../errors/error-codes.js";
import { createToolError, ToolError } from "../errors/tool-error.js";
import { canonicalJson } from "../idempotency/fingerprint.js";
import { errorMessageOf } from "../reflection/clean-error-text.js";
import {
  circuitOpenAction,
  circuitOpenMessage,
  circuitOpenTemplate,
  circuitOpenText,
  exhaustedAction,
  exhaustedText,
  isolatedAction,
  isolatedMessage,
  isolatedText,
  notRecoverableText,
  structuredErrorJson,
} from "../texts/model-texts.js";
import type { ExhaustedMark } from "./attempt-tracker.js";
import type { CallRun, Engine } from "./call-run.js";
import type { FailedOutcome, ReflectOutcome } from "./outcome.js";
import { cleanText, withText } from "./sanitize.js";

// The outcomes the model reads, built from a run and its (clean) error: the reflection, the three
// stops, and the rejections of an open or isolated circuit.

/** Details of the failure that opened a circuit, on its `CIRCUIT_OPEN` outcome. */
export type OpeningFailure = {
  readonly last_error_code: string;
  readonly last_error: string;
};

/** The values of the reflection's placeholders (and the stop texts', `retry_after_s` added). */
function templateValues(engine: Engine, run: CallRun, error: ToolError, errorCode: string) {
  return {
    tool_name: run.toolName,
    error: JSON.stringify(error.message),
    error_code: errorCode,
    attempt: String(run.attempt),
    max_retries: String(run.policy.maxRetries),
    suggested_action: error.suggestedAction,
    // The model's own arguments, its key included (it needs the key to retry the same operation).
    args: cleanText(engine.cleaner, safeCanonical(run.call.args)),
  };
}

export function reflectOutcome(engine: Engine, run: CallRun, error: ToolError): ReflectOutcome {
  const prompt = run.policy.template.render(templateValues(engine, run, error, error.code));
  return {
    status: "reflect",
    prompt,
    message: `${prompt}\n\n${structuredErrorJson(error, run.attempt, run.policy.maxRetries)}`,
    error,
    attempt: run.attempt,
  };
}

/** `failed`: the stop instruction for its reason (the policy's template, else the built-in text), and the structured error. */
export function failedOutcome(engine: Engine, run: CallRun, error: ToolError, reason: FailedOutcome["reason"]): FailedOutcome {
  const { policy } = run;
  const template =
    reason === "circuit_open"
      ? policy.circuitOpenTemplate
      : reason === "exhausted"
        ? policy.exhaustedTemplate
        : policy.notRecoverableTemplate;
  let text: string;
  if (template !== undefined) {
    // `{error_code}` is the last failure's code: an exhausted budget's or an opening failure's, kept
    // in the details the engine wrote (a not-recoverable error's own details are the tool's: not read).
    const last = reason === "not_recoverable" ? undefined : error.details?.last_error_code;
    // The failure that opened a circuit: `{error}` is its message, beside its code.
    const lastError = reason === "circuit_open" ? error.details?.last_error : undefined;
    const shown = typeof lastError === "string" ? withText(error, { message: lastError }) : error;
    const retryAfterMs = error.retryAfterMs ?? (ToolError.isInstance(error.cause) ? error.cause.retryAfterMs : undefined);
    text = template.render({
      ...templateValues(engine, run, shown, typeof last === "string" ? last : error.code),
      retry_after_s: String(Math.ceil((retryAfterMs ?? 0) / 1000)),
    });
  } else {
    const quoted = JSON.stringify(error.message);
    text =
      reason === "circuit_open"
        ? circuitOpenText(run.toolName, error.retryAfterMs ?? 0)
        : reason === "exhausted"
          ? exhaustedText(run.toolName, run.attempt, quoted)
          : notRecoverableText(run.toolName, quoted, error.suggestedAction);
  }
  return {
    status: "failed",
    message: `${text}\n\n${structuredErrorJson(error, run.attempt, policy.maxRetries)}`,
    error,
    reason,
    attempt: run.attempt,
  };
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

/**
 * `failed` / `CIRCUIT_OPEN`: a rejection (`retryAfterMs` to wait; `Infinity` for an isolated
 * circuit, which promises no time), or, with `opening`, the failure that opened it.
 */
export function circuitOpenOutcome(engine: Engine, run: CallRun, retryAfterMs: number, opening?: OpeningFailure): FailedOutcome {
  const { maxRetries } = run.policy;
  if (retryAfterMs === Number.POSITIVE_INFINITY) {
    const error = createToolError({
      code: ErrorCodes.CIRCUIT_OPEN,
      message: isolatedMessage(run.toolName),
      recoverable: false,
      suggestedAction: isolatedAction(run.toolName),
      details: { isolated: true, ...opening },
    });
    const message = `${isolatedText(run.toolName)}\n\n${structuredErrorJson(error, run.attempt, maxRetries)}`;
    return { status: "failed", message, error, reason: "circuit_open", attempt: run.attempt };
  }
  const wait = Math.max(0, Math.ceil(retryAfterMs));
  const error = createToolError({
    code: ErrorCodes.CIRCUIT_OPEN,
    message: circuitOpenMessage(run.toolName),
    recoverable: false,
    suggestedAction: circuitOpenAction(run.toolName),
    retryAfterMs: wait,
    ...(opening === undefined ? {} : { details: opening }),
  });
  if (opening !== undefined || run.policy.circuitOpenTemplate !== undefined) return failedOutcome(engine, run, error, "circuit_open");
  // A plain rejection: the message is put together from parts built once per tool.
  let template = engine.rejections.get(run.toolName);
  if (template === undefined) {
    template = circuitOpenTemplate(run.toolName);
    engine.rejections.set(run.toolName, template);
  }
  return {
    status: "failed",
    message: template.message(wait, run.attempt, maxRetries),
    error,
    reason: "circuit_open",
    attempt: run.attempt,
  };
}

function safeCanonical(args: unknown): string {
  try {
    return canonicalJson(args);
  } catch (error) {
    return `(arguments could not be shown: ${errorMessageOf(error)})`;
  }
}
