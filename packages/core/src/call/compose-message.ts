import { errorMessageOf } from "../classify/error-signals.js";
import { withText } from "../cleaning/clean-error.js";
import { cleanText, cutEscaped, cutText, fitDetails, shareBudget } from "../cleaning/clean-text.js";
import { ErrorCodes } from "../errors/error-codes.js";
import type { ToolError } from "../errors/tool-error.js";
import { canonicalJson } from "../idempotency/fingerprint.js";
import { isOwnText } from "../texts/model-texts.js";
import { detailsJson, ERROR_ONCE, type ReflectionTemplate, structuredJsonOf, type Uses } from "../texts/templater.js";
import type { CallRun, Engine } from "./call.js";

/** The values of the placeholders that come from a failure: `error` and `suggested_action` quoted (JSON strings). */
export interface FailureValues {
  readonly error: string;
  readonly suggested_action: string;
  readonly error_code: string;
  readonly args: string;
}

/** A composed message: the text (prompt or stop instruction), the whole message, and the error it shows. */
export interface Composed {
  readonly text: string;
  readonly message: string;
  readonly error: ToolError;
}

const STANDARD_CODES: ReadonlySet<string> = new Set(Object.values(ErrorCodes));

/** An `error_code`'s characters that count against `maxErrorLength`: a standard code is the library's own word. */
function codeCost(code: string): number {
  return STANDARD_CODES.has(code) ? 0 : code.length;
}

/** A template's text and the structured error: `promptCode` is what `{error_code}` shows. */
export function templated(
  engine: Engine,
  run: CallRun,
  error: ToolError,
  template: ReflectionTemplate,
  retryAfterS: string,
  promptCode: string,
  own = false,
): Composed {
  const render = (values: FailureValues) =>
    template.render({
      ...values,
      tool_name: run.toolName,
      attempt: String(run.attempt),
      max_retries: String(run.policy.maxRetries),
      retry_after_s: retryAfterS,
    });
  return compose(engine, run, error, render, template.uses, promptCode, own);
}

/**
 * The text and the structured error JSON after it, within `maxErrorLength` beyond the fixed
 * template: the failure's texts, `details`, `{args}` and an unknown `error_code` count, escaped,
 * each time they appear. When they do not fit, the longest are cut (`shareBudget`) and the error is
 * rebuilt with what was shown, so that `outcome.error` is what the model read.
 */
export function compose(
  engine: Engine,
  run: CallRun,
  error: ToolError,
  render: (values: FailureValues) => string,
  uses: Uses = ERROR_ONCE,
  promptCode = error.code,
  own = false,
): Composed {
  const budget = engine.cleaner.maxErrorLength;
  const { attempt, toolName } = run;
  const args = uses.args > 0 ? cleanText(engine.cleaner, safeCanonical(run.call.args)) : "";
  const details = error.details === undefined ? undefined : detailsJson(error.details);
  const messageTimes = 1 + uses.error;
  // The library's own texts (a refusal's, a default action, a circuit's) are part of the fixed template.
  const ownMessage = own || isOwnText(error.message, toolName);
  const ownAction = own || isOwnText(error.suggestedAction, toolName);
  // `{suggested_action}` shows the tool's own suggestion where it has one (quoted, as data), else the library's.
  const toolAction = error.toolSuggestedAction;
  const actionTimes = 1 + (toolAction === undefined ? uses.suggested_action : 0);
  const needs = [
    ownMessage ? 0 : (JSON.stringify(error.message).length - 2) * messageTimes,
    ownAction ? 0 : (JSON.stringify(error.suggestedAction).length - 2) * actionTimes,
    details?.length ?? 0,
    args.length * uses.args,
    toolAction === undefined ? 0 : (JSON.stringify(toolAction).length - 2) * (1 + uses.suggested_action),
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
    const fit = (text: string, index: 0 | 1 | 4, times: number) =>
      (given[index] as number) < needs[index] ? cutEscaped(text, Math.floor((given[index] as number) / times)) : text;
    const message = fit(error.message, 0, messageTimes);
    const suggestedAction = fit(error.suggestedAction, 1, actionTimes);
    const toolSuggestedAction = toolAction === undefined ? undefined : fit(toolAction, 4, 1 + uses.suggested_action);
    const fittedDetails =
      details === undefined || error.details === undefined ? undefined : fitDetails(error.details, details, given[2] as number);
    shown = withText(error, { code, message, suggestedAction, toolSuggestedAction, details: fittedDetails });
    shownArgs = (given[3] as number) < needs[3] ? cutText(args, Math.floor((given[3] as number) / uses.args)) : args;
  }
  // The texts of the error shown, quoted (JSON strings) as the model reads them.
  const quotedMessage = JSON.stringify(shown.message);
  const quotedAction = JSON.stringify(shown.suggestedAction);
  const quotedToolAction = shown.toolSuggestedAction === undefined ? undefined : JSON.stringify(shown.toolSuggestedAction);
  const shownDetails = shown.details === undefined ? undefined : detailsJson(shown.details);
  const text = render({ error: quotedMessage, suggested_action: quotedToolAction ?? quotedAction, error_code: shownCode, args: shownArgs });
  const json = structuredJsonOf(shown, quotedMessage, quotedAction, shownDetails, attempt, run.policy.maxRetries, quotedToolAction);
  return { text, message: `${text}\n\n${json}`, error: shown };
}

function safeCanonical(args: unknown): string {
  try {
    return canonicalJson(args);
  } catch (error) {
    return `(arguments could not be shown: ${errorMessageOf(error)})`;
  }
}
