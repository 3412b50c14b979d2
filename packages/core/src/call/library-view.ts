import { withText } from "../cleaning/clean-error.js";
import type { ToolError } from "../errors/tool-error.js";
import { DEFAULT_SUGGESTED_ACTIONS, isOwnText } from "../texts/model-texts.js";
import type { CallRun } from "./call-state.js";

/**
 * The error as the library shows it: its `suggested_action` is the library's own action for the
 * code (or, for a code of the tool's, for its kind); the tool's or server's own suggestion, when it
 * differs, is `tool_suggested_action` (already cleaned and capped). A `Retry-After` longer than
 * `maxBackoffMs` is cut to it: no wait the library would not keep reaches the model.
 */
export function libraryView(run: CallRun, error: ToolError): ToolError {
  const own = defaultActionOf(error);
  const given = error.suggestedAction;
  const action = given === "" || given === own || isOwnText(given, run.toolName) ? undefined : given;
  const cap = run.policy.maxBackoffMs;
  const retryAfterMs = error.retryAfterMs === undefined ? undefined : Math.min(error.retryAfterMs, cap);
  if (action === undefined && retryAfterMs === error.retryAfterMs) return error;
  if (action === undefined) return withText(error, { retryAfterMs });
  return withText(error, { suggestedAction: own, toolSuggestedAction: action, retryAfterMs });
}

/** The library's own action for an error: by its code when the code is the library's, else by its kind. */
function defaultActionOf(error: ToolError): string {
  const byCode = (DEFAULT_SUGGESTED_ACTIONS as Record<string, string>)[error.code];
  if (byCode !== undefined) return byCode;
  return retryAction(error);
}

/** The suggested action of a failure `shouldRetry` made recoverable: the default action of its kind. */
export function retryAction(error: ToolError): string {
  if (error.kind === "transient") return DEFAULT_SUGGESTED_ACTIONS.TRANSIENT;
  if (error.kind === "invalid_arguments") return DEFAULT_SUGGESTED_ACTIONS.INVALID_ARGUMENTS;
  return DEFAULT_SUGGESTED_ACTIONS.TOOL_FAILED;
}
