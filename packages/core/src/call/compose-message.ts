import { cleanText } from "../cleaning/cleaner.js";
import { errorMessageOf } from "../cleaning/error-message-of.js";
import { fitDetails } from "../cleaning/fit-details.js";
import { cutEscaped, cutText, shareBudget } from "../cleaning/text-budget.js";
import { ErrorCodes } from "../errors/error-codes.js";
import { createToolError, type ToolError } from "../errors/tool-error.js";
import { canonicalJson } from "../idempotency/fingerprint.js";
import { detailsJson, isOwnText, structuredJsonOf } from "../texts/model-texts.js";
import type { ReflectionValues, Uses } from "../texts/templater.js";
import type { CallRun } from "./call-state.js";
import type { Engine } from "./engine.js";

// A reflect/failed message put together under its budget: the failure's own text (message,
// suggested action, the tool's own suggestion, details, arguments, an unknown code) holds at most `maxErrorLength`
// characters after escaping, beyond the library's fixed template.

/** The values of the placeholders that come from a failure: `error` and `suggested_action` quoted (JSON strings). */
export interface FailureValues {
  readonly error: string;
  readonly suggested_action: string;
  readonly error_code: string;
  readonly args: string;
}

const STANDARD_CODES: ReadonlySet<string> = new Set(Object.values(ErrorCodes));

/** An `error_code`'s characters that count against `maxErrorLength`: a standard code is the library's own word. */
function codeCost(code: string): number {
  return STANDARD_CODES.has(code) ? 0 : code.length;
}

/** A composed message: the text (prompt or stop instruction), the whole message, and the error it shows. */
export interface Composed {
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
export function compose(
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
  let quotedToolAction = error.toolSuggestedAction === undefined ? undefined : JSON.stringify(error.toolSuggestedAction);
  const samePromptError = promptError === error.message;
  let quotedPromptError = samePromptError ? quotedMessage : JSON.stringify(promptError);
  let details = error.details === undefined ? undefined : detailsJson(error.details);
  const messageTimes = 1 + (samePromptError ? uses.error : 0);
  // The library's own texts (a refusal's, a default action, a circuit's) are part of the fixed template.
  const ownMessage = own || isOwnText(error.message, toolName);
  const ownPromptError = samePromptError ? ownMessage : own || isOwnText(promptError, toolName);
  const ownAction = own || isOwnText(error.suggestedAction, toolName);
  // `{suggested_action}` shows the tool's own suggestion where it has one (quoted, as data), else the library's.
  const actionTimes = 1 + (quotedToolAction === undefined ? uses.suggested_action : 0);
  const needs = [
    ownMessage ? 0 : (quotedMessage.length - 2) * messageTimes,
    samePromptError || ownPromptError ? 0 : (quotedPromptError.length - 2) * uses.error,
    ownAction ? 0 : (quotedAction.length - 2) * actionTimes,
    details?.length ?? 0,
    args.length * uses.args,
    quotedToolAction === undefined ? 0 : (quotedToolAction.length - 2) * (1 + uses.suggested_action),
  ] as const;
  let reserved = codeCost(error.code) + codeCost(promptCode) * uses.error_code;
  let shown = error;
  let shownArgs = args;
  let shownCode = promptCode;
  if (needs[0] + needs[1] + needs[2] + needs[3] + needs[4] + needs[5] + reserved > budget) {
    let code = error.code;
    if (reserved > budget / 2) {
      // An unknown code this long would leave the texts nothing: it becomes the standard one.
      if (codeCost(code) > 0) code = ErrorCodes.TOOL_FAILED;
      if (codeCost(shownCode) > 0) shownCode = ErrorCodes.TOOL_FAILED;
      reserved = 0;
    }
    const given = shareBudget(needs, budget - reserved);
    /** A text cut to what it was given, `times` places sharing it; left whole when it got what it needs. */
    const fit = (text: string, index: 0 | 1 | 2 | 5, times: number) =>
      (given[index] as number) < needs[index] ? cutEscaped(text, Math.floor((given[index] as number) / times)) : text;
    const message = fit(error.message, 0, messageTimes);
    const suggestedAction = fit(error.suggestedAction, 2, actionTimes);
    const toolSuggestedAction =
      error.toolSuggestedAction === undefined ? undefined : fit(error.toolSuggestedAction, 5, 1 + uses.suggested_action);
    const fittedDetails =
      details === undefined || error.details === undefined ? undefined : fitDetails(error.details, details, given[3] as number);
    shown = createToolError({
      code,
      message,
      recoverable: error.recoverable,
      suggestedAction,
      toolSuggestedAction,
      retryAfterMs: error.retryAfterMs,
      details: fittedDetails,
      kind: error.kind,
      cause: error.cause ?? error,
    });
    quotedMessage = JSON.stringify(message);
    quotedAction = JSON.stringify(suggestedAction);
    quotedToolAction = toolSuggestedAction === undefined ? undefined : JSON.stringify(toolSuggestedAction);
    quotedPromptError = samePromptError ? quotedMessage : JSON.stringify(fit(promptError, 1, Math.max(1, uses.error)));
    details = fittedDetails === undefined ? undefined : detailsJson(fittedDetails);
    shownArgs = (given[4] as number) < needs[4] ? cutText(args, Math.floor((given[4] as number) / uses.args)) : args;
  }
  const text = render({
    error: quotedPromptError,
    suggested_action: quotedToolAction ?? quotedAction,
    error_code: shownCode,
    args: shownArgs,
  });
  const json = structuredJsonOf(shown, quotedMessage, quotedAction, details, attempt, maxRetries, quotedToolAction);
  return { text, message: `${text}\n\n${json}`, error: shown };
}

/**
 * Every placeholder's value: the library's own (the tool's name, the counters, `retry_after_s`)
 * and the failure's. One object literal of one shape (a spread of two objects is many times slower).
 */
export function placeholderValues(run: CallRun, values: FailureValues, retryAfterS = "0"): ReflectionValues {
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

function safeCanonical(args: unknown): string {
  try {
    return canonicalJson(args);
  } catch (error) {
    return `(arguments could not be shown: ${errorMessageOf(error)})`;
  }
}
