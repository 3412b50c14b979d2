import { cleanText } from "../cleaning/cleaner.js";
import { errorMessageOf } from "../cleaning/error-message-of.js";
import { fitDetails } from "../cleaning/fit-details.js";
import { cutEscaped, cutText, shareBudget } from "../cleaning/text-budget.js";
import { ErrorCodes } from "../errors/error-codes.js";
import { createToolError, ToolError } from "../errors/tool-error.js";
import { canonicalJson } from "../idempotency/fingerprint.js";
import type { FailedOutcome, ReflectOutcome } from "../outcome.js";
import {
  circuitOpenAction,
  circuitOpenMessage,
  circuitOpenTemplate,
  circuitOpenText,
  detailsJson,
  exhaustedAction,
  exhaustedText,
  isOwnText,
  isolatedAction,
  isolatedMessage,
  isolatedText,
  notRecoverableAction,
  notRecoverableText,
  structuredJsonOf,
} from "../texts/model-texts.js";
import type { ReflectionTemplate, ReflectionValues } from "../texts/templater.js";
import type { ExhaustedMark } from "./attempt-tracker.js";
import type { CallRun, Engine } from "./call-state.js";

// The outcomes the model reads, built from a run and its (clean) error: the reflection, the three
// stops, and the rejections of an open or isolated circuit.

/** Details of the failure that opened a circuit, on its `CIRCUIT_OPEN` outcome. */
export type OpeningFailure = {
  readonly last_error_code: string;
  readonly last_error: string;
};

/** The values of the placeholders that come from a failure: `error` and `suggested_action` quoted (JSON strings). */
interface FailureValues {
  readonly error: string;
  readonly suggested_action: string;
  readonly error_code: string;
  readonly args: string;
}

/** How often a text shows each value that comes from a failure. */
interface Uses {
  readonly error: number;
  readonly suggested_action: number;
  readonly error_code: number;
  readonly args: number;
}

const NO_USES: Uses = { error: 0, suggested_action: 0, error_code: 0, args: 0 };
/** The built-in stop texts that quote the error once. */
const ERROR_ONCE: Uses = { error: 1, suggested_action: 0, error_code: 0, args: 0 };

function usesOf(template: ReflectionTemplate): Uses {
  return {
    error: template.count("error"),
    suggested_action: template.count("suggested_action"),
    error_code: template.count("error_code"),
    args: template.count("args"),
  };
}

const STANDARD_CODES: ReadonlySet<string> = new Set(Object.values(ErrorCodes));

/** An `error_code`'s characters that count against `maxErrorLength`: a standard code is the library's own word. */
function codeCost(code: string): number {
  return STANDARD_CODES.has(code) ? 0 : code.length;
}

/** A composed message: the text (prompt or stop instruction), the whole message, and the error it shows. */
interface Composed {
  readonly text: string;
  readonly message: string;
  readonly error: ToolError;
}

/**
 * The text (`render` given the failure's values) and the structured error JSON after it, within
 * `maxErrorLength` beyond the fixed template (as the option documents it): the failure's message,
 * suggested action, `details`, `{args}` and an unknown `error_code` count, escaped, each time they
 * appear. When they do not fit, the longest are cut (shared by `shareBudget`) and the error is
 * rebuilt with what was shown, so that `outcome.error` (an adapter's `structuredContent`) is what
 * the model read. The usual failure fits, and costs no more than the text and the JSON.
 */
function compose(
  engine: Engine,
  run: CallRun,
  error: ToolError,
  render: (values: FailureValues) => string,
  uses: Uses,
  promptError: string,
  promptCode: string,
  own = false,
): Composed {
  const budget = engine.cleaner.maxErrorLength;
  const { attempt, toolName } = run;
  const { maxRetries } = run.policy;
  const args = uses.args > 0 ? cleanText(engine.cleaner, safeCanonical(run.call.args)) : "";
  let quotedMessage = JSON.stringify(error.message);
  let quotedAction = JSON.stringify(error.suggestedAction);
  const samePromptError = promptError === error.message;
  let quotedPromptError = samePromptError ? quotedMessage : JSON.stringify(promptError);
  let details = error.details === undefined ? undefined : detailsJson(error.details);
  const messageTimes = 1 + (samePromptError ? uses.error : 0);
  const actionTimes = 1 + uses.suggested_action;
  // The library's own texts (a refusal's, a default action, a circuit's) are part of the fixed template.
  const ownMessage = own || isOwnText(error.message, toolName);
  const ownPromptError = samePromptError ? ownMessage : own || isOwnText(promptError, toolName);
  const ownAction = own || isOwnText(error.suggestedAction, toolName);
  const needs = [
    ownMessage ? 0 : (quotedMessage.length - 2) * messageTimes,
    samePromptError || ownPromptError ? 0 : (quotedPromptError.length - 2) * uses.error,
    ownAction ? 0 : (quotedAction.length - 2) * actionTimes,
    details?.length ?? 0,
    args.length * uses.args,
  ] as const;
  let reserved = codeCost(error.code) + codeCost(promptCode) * uses.error_code;
  let shown = error;
  let shownArgs = args;
  let shownCode = promptCode;
  if (needs[0] + needs[1] + needs[2] + needs[3] + needs[4] + reserved > budget) {
    let code = error.code;
    if (reserved > budget / 2) {
      // An unknown code this long would leave the texts nothing: it becomes the standard one.
      if (codeCost(code) > 0) code = ErrorCodes.TOOL_FAILED;
      if (codeCost(shownCode) > 0) shownCode = ErrorCodes.TOOL_FAILED;
      reserved = 0;
    }
    const given = shareBudget(needs, budget - reserved);
    /** A text cut to what it was given, `times` places sharing it; left whole when it got what it needs. */
    const fit = (text: string, index: 0 | 1 | 2, times: number) =>
      (given[index] as number) < needs[index] ? cutEscaped(text, Math.floor((given[index] as number) / times)) : text;
    const message = fit(error.message, 0, messageTimes);
    const suggestedAction = fit(error.suggestedAction, 2, actionTimes);
    const fittedDetails =
      details === undefined || error.details === undefined ? undefined : fitDetails(error.details, details, given[3] as number);
    shown = createToolError({
      code,
      message,
      recoverable: error.recoverable,
      suggestedAction,
      retryAfterMs: error.retryAfterMs,
      details: fittedDetails,
      kind: error.kind,
      cause: error.cause ?? error,
    });
    quotedMessage = JSON.stringify(message);
    quotedAction = JSON.stringify(suggestedAction);
    quotedPromptError = samePromptError ? quotedMessage : JSON.stringify(fit(promptError, 1, Math.max(1, uses.error)));
    details = fittedDetails === undefined ? undefined : detailsJson(fittedDetails);
    shownArgs = (given[4] as number) < needs[4] ? cutText(args, Math.floor((given[4] as number) / uses.args)) : args;
  }
  const text = render({ error: quotedPromptError, suggested_action: quotedAction, error_code: shownCode, args: shownArgs });
  const json = structuredJsonOf(shown, quotedMessage, quotedAction, details, attempt, maxRetries);
  return { text, message: `${text}\n\n${json}`, error: shown };
}

/**
 * Every placeholder's value: the library's own (the tool's name, the counters, `retry_after_s`)
 * and the failure's. One object literal of one shape (a spread of two objects is many times slower).
 */
function placeholderValues(run: CallRun, values: FailureValues, retryAfterS = "0"): ReflectionValues {
  return {
    tool_name: run.toolName,
    error: values.error,
    error_code: values.error_code,
    attempt: String(run.attempt),
    max_retries: String(run.policy.maxRetries),
    suggested_action: values.suggested_action,
    args: values.args,
    retry_after_s: retryAfterS,
  };
}

/** `reflect`: the rendered reflection prompt and the structured error; `refusal`: the error is the library's own (a call turned away). */
export function reflectOutcome(engine: Engine, run: CallRun, error: ToolError, refusal = false): ReflectOutcome {
  const template = run.policy.template;
  const composed = compose(
    engine,
    run,
    error,
    (values) => template.render(placeholderValues(run, values)),
    usesOf(template),
    error.message,
    error.code,
    refusal,
  );
  return { status: "reflect", prompt: composed.text, message: composed.message, error: composed.error, attempt: run.attempt };
}

/**
 * `failed`: the stop instruction for its reason (the policy's template, else the built-in text), and
 * the structured error. The built-in not-recoverable text ends with the library's own instruction
 * for the code, never the error's `suggested_action` (that stays in the JSON).
 */
export function failedOutcome(engine: Engine, run: CallRun, error: ToolError, reason: FailedOutcome["reason"]): FailedOutcome {
  const { policy } = run;
  const template =
    reason === "circuit_open"
      ? policy.circuitOpenTemplate
      : reason === "exhausted"
        ? policy.exhaustedTemplate
        : policy.notRecoverableTemplate;
  let composed: Composed;
  if (template !== undefined) {
    // `{error_code}` is the last failure's code: an exhausted budget's or an opening failure's, kept
    // in the details the engine wrote (a not-recoverable error's own details are the tool's: not read).
    const last = reason === "not_recoverable" ? undefined : error.details?.last_error_code;
    // The failure that opened a circuit: `{error}` is its message, beside its code.
    const lastError = reason === "circuit_open" ? error.details?.last_error : undefined;
    const retryAfterS = String(Math.ceil((error.retryAfterMs ?? causeRetryAfterMs(error) ?? 0) / 1000));
    composed = compose(
      engine,
      run,
      error,
      (values) => template.render(placeholderValues(run, values, retryAfterS)),
      usesOf(template),
      typeof lastError === "string" ? lastError : error.message,
      typeof last === "string" ? last : error.code,
    );
  } else if (reason === "circuit_open") {
    const text = circuitOpenText(run.toolName, error.retryAfterMs ?? 0);
    composed = compose(engine, run, error, () => text, NO_USES, error.message, error.code);
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
    const action = notRecoverableAction(run.toolName, error.code, error.details?.fault);
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
    const text = isolatedText(run.toolName);
    const composed = compose(engine, run, error, () => text, NO_USES, error.message, error.code);
    return { status: "failed", message: composed.message, error: composed.error, reason: "circuit_open", attempt: run.attempt };
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
