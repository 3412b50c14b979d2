// Every text the model reads that the engine writes itself: the default reflection prompt, stop
// instructions, rejections, conflicts, suggested actions, the notes of tools left out while their
// circuit is open. (`templater.ts` renders the reflection template and writes the structured error.)

/** The default reflection prompt (the original Retry & Reflect design's). */
export const DEFAULT_REFLECTION_PROMPT =
  "The tool '{tool_name}' failed with: {error}. Analyze what went wrong and provide corrected arguments.";

/**
 * The default text of a temporary failure: the same call again after the wait, whose time the
 * library keeps for the tool's next call in the scope. Told after a transient failure that outlasted
 * the call's patience, an open circuit, a spent retry budget, and a call that did not run or is
 * still running (`IN_PROGRESS`, `STORE_UNAVAILABLE`, `OVERLOADED`, a write cut off at its time
 * limit). Never "corrected arguments": a write whose key changed could run twice.
 */
export const DEFAULT_RETRY_LATER_PROMPT =
  "The tool '{tool_name}' is temporarily unavailable: {error}. It may work again in about {retry_after_s} s: call it again then with the same arguments (the same idempotency key, if it has one), or tell the user.";

/** The text of a write without a key that failed transiently: it may have taken effect. */
export function unknownOutcomeText(toolName: string, quotedError: string): string {
  return `The tool '${toolName}' failed with: ${quotedError}. ${UNKNOWN_OUTCOME_ACTION}`;
}

/** Default suggested actions, by code. */
export const DEFAULT_SUGGESTED_ACTIONS = {
  INVALID_ARGUMENTS: "Correct the arguments named in the error and call the tool again.",
  TRANSIENT: "This is a temporary failure: call the tool again with the same arguments.",
  RATE_LIMITED: "The service is rate limited: wait, then call the tool again with the same arguments.",
  TIMEOUT: "The call timed out: call the tool again with the same arguments.",
  TOOL_FAILED: "Check the arguments against the error, then call the tool again with corrected arguments, or tell the user what failed.",
  PERMISSION_DENIED:
    "The tool was refused access to what the arguments name (a path or resource outside what it may use): call it again with one it may access, or tell the user.",
  UNAUTHORIZED:
    "The tool is not authorised to use its service (its credentials are missing, invalid or lack permission); other arguments cannot fix this. Do not call it again for this task; tell the user the tool is not authorised.",
} as const;

/** The suggested action of `RETRY_BUDGET_SPENT`: the same call, after the wait the error gives. */
export const RETRY_BUDGET_SPENT_ACTION =
  "Many calls of this tool are failing, so retries are paused to spare its service: call it again with the same arguments after retry_after_ms, or continue without it.";

/** The suggested action of a fault in the tool's own code (a `ReferenceError`, a `TypeError` of a programming mistake). */
export const TOOL_CODE_FAULT_ACTION =
  "The tool itself failed because of a bug in its code, not because of your arguments. Do not call it again for this task; tell the user that the tool is broken.";

/** What a value in `details` that cannot be serialized (too deep, a getter or proxy trap that throws) is shown as. */
export const UNSERIALIZABLE = "[unserializable]";

/** The message of a failure that could not be read: a getter or proxy trap threw, or a field was not of its type. */
export const UNREADABLE_ERROR_MESSAGE =
  "The tool failed with an error that could not be read (reading it threw, or a field was not of its type).";

/**
 * The library's own instruction after a not-recoverable error, from its table by the (validated)
 * code: never the error's own `suggested_action`, which is the tool's or a server's text and
 * reaches the model only inside the structured JSON. A code without an entry gets the default stop.
 */
export function notRecoverableAction(toolName: string, code: string, fault: unknown): string {
  if (code === "UNAUTHORIZED") return DEFAULT_SUGGESTED_ACTIONS.UNAUTHORIZED;
  if (code === "TOOL_FAILED" && fault === "tool_code") return TOOL_CODE_FAULT_ACTION;
  if (code === "WRITE_IN_DOUBT") return IN_DOUBT_ACTION;
  return `Do not call '${toolName}' again for this task; tell the user what failed.`;
}

/** The stop instruction for a non-recoverable error; `action` is the library's own ({@link notRecoverableAction}). */
export function notRecoverableText(toolName: string, quotedError: string, action: string): string {
  return `The tool '${toolName}' failed with: ${quotedError}. This error is not recoverable, do not retry it. ${action}`;
}

/** The stop instruction once retries are exhausted. */
export function exhaustedText(toolName: string, attempts: number, quotedError: string): string {
  return `The tool '${toolName}' failed ${attempts} ${attempts === 1 ? "time" : "times"}; the last error was: ${quotedError}. Do not call '${toolName}' again for this task. Tell the user what failed.`;
}

export function exhaustedAction(toolName: string): string {
  return `Do not call '${toolName}' again for this task; tell the user that it failed and why.`;
}

export function circuitOpenMessage(toolName: string): string {
  return `The circuit breaker of '${toolName}' is open after repeated failures.`;
}

/** The action of a tool told as temporarily unavailable (past a call's patience, its circuit open): the same call after the wait, or without the tool. */
export function temporaryAction(toolName: string): string {
  return `Call '${toolName}' again with the same arguments after retry_after_ms, or continue without it and tell the user it is unavailable for now.`;
}

/** The suggested action of an `INVALID_ARGUMENTS` error built from schema problems. */
export const INVALID_ARGUMENTS_ACTION = "Correct the fields named in the error and call the tool again with valid arguments.";

export const UNKNOWN_OUTCOME_ACTION =
  "The outcome is unknown: the action may or may not have taken effect. Check whether it did before calling again, and pass an idempotency key so that a retry cannot run it twice.";

export function keyRequiredMessage(toolName: string): string {
  return `The tool '${toolName}' changes state and needs an idempotency key; none was given.`;
}

export function keyReusedMessage(toolName: string): string {
  return `The idempotency key given to '${toolName}' was already used with different arguments.`;
}

/** A write whose earlier run under its key never reported a result (`WRITE_IN_DOUBT`). */
export function inDoubtMessage(toolName: string): string {
  return `An earlier '${toolName}' call with this idempotency key started and its result was lost (its process stopped, or the store failed over): it may or may not have taken effect.`;
}

/** After `WRITE_IN_DOUBT`: a stop for this key, the outcome checked by someone who can. */
export const IN_DOUBT_ACTION =
  "Do not call the tool again with this key for this task: tell the user that the outcome is unknown and must be checked before the action is repeated.";

export function inProgressMessage(toolName: string): string {
  return `The same '${toolName}' operation is already running elsewhere.`;
}

export function keyRequiredAction(keyField: string): string {
  return `Call the tool again with an \`${keyField}\` argument: a new unique value for a new operation, the same value when retrying the same operation.`;
}

export const KEY_REUSED_ACTION =
  "This idempotency key was already used for a different request. If this is a new operation, call again with a new unique key; if it is a retry, use exactly the original arguments.";

export const IN_PROGRESS_ACTION = "The same operation is still running: wait, then call again with the same arguments and key.";

/** A store full of in-flight writes: back pressure, the write did not run. */
export function storeBusyMessage(toolName: string): string {
  return `Too many '${toolName}' operations are in flight at once; this one was not performed.`;
}

export const STORE_BUSY_ACTION = "Wait, then call the tool again with the same arguments and key.";

export function storeUnavailableMessage(toolName: string): string {
  return `The idempotency store of '${toolName}' is unavailable, so the operation was not performed.`;
}

export const STORE_UNAVAILABLE_ACTION =
  "The operation was not performed. Call the tool again later with the same arguments and key, or tell the user it could not be done now.";

/** Arguments with a getter that throws, a Proxy that refuses to be read, ...: not data the guard can fingerprint. */
export const UNREADABLE_ARGUMENTS_MESSAGE = "The arguments could not be read as plain data (a value that cannot be read or copied).";

export function argumentsTooDeepMessage(maxDepth: number): string {
  return `The arguments are nested deeper than ${maxDepth} levels.`;
}

export const ARGUMENTS_TOO_DEEP_ACTION = "Call the tool again with flatter arguments, as its schema describes them.";

/** The stop instruction of a circuit isolated by an operator: no promised time. */
export function isolatedText(toolName: string): string {
  return `The tool '${toolName}' has been disabled by an operator (its circuit breaker is isolated until it is reset). Do not call it again for this task; continue without it or tell the user it is unavailable.`;
}

export function isolatedMessage(toolName: string): string {
  return `The circuit breaker of '${toolName}' is isolated: the tool is disabled until an operator resets it.`;
}

export function isolatedAction(toolName: string): string {
  return `Do not call '${toolName}' again for this task; continue without it or tell the user it is unavailable.`;
}

/** A call refused because the same call already failed `failures` times (`repeatedCallLimit`). */
export function repeatedCallMessage(toolName: string, failures: number): string {
  return `The same call of '${toolName}' with these exact arguments already failed ${failures} ${failures === 1 ? "time" : "times"}; it was not run again.`;
}

export const REPEATED_CALL_ACTION =
  "Do not repeat this exact call: change the arguments as the earlier error says, use another tool, or stop and tell the user what failed.";

/** A call refused because `maxConcurrent` calls of the tool are running. */
export function overloadedMessage(toolName: string, limit: number): string {
  return `Too many calls of '${toolName}' are running at once (at most ${limit}); this one was not run.`;
}

export const OVERLOADED_ACTION = "Wait a moment, then call the tool again with the same arguments.";

/** An attempt cut off by `attemptTimeoutMs`. */
export function attemptTimeoutMessage(toolName: string, timeoutMs: number): string {
  return `The tool '${toolName}' did not answer within ${timeoutMs} ms; the attempt was cut off.`;
}

/** A guarded write cut off at its limit: it may still complete, and is never run twice. */
export function writeTimeoutMessage(toolName: string, timeoutMs: number): string {
  return `The tool '${toolName}' did not answer within ${timeoutMs} ms; the attempt was cut off, but the operation may still complete.`;
}

export const WRITE_TIMEOUT_ACTION =
  "Wait a moment, then call the tool again with the same arguments and key: if the operation completed, its result is returned; it never runs twice.";

/** The library's texts that do not depend on the call. */
const OWN_TEXTS: ReadonlySet<string> = new Set<string>([
  ...Object.values(DEFAULT_SUGGESTED_ACTIONS),
  TOOL_CODE_FAULT_ACTION,
  UNREADABLE_ERROR_MESSAGE,
  INVALID_ARGUMENTS_ACTION,
  UNKNOWN_OUTCOME_ACTION,
  KEY_REUSED_ACTION,
  IN_PROGRESS_ACTION,
  IN_DOUBT_ACTION,
  STORE_BUSY_ACTION,
  STORE_UNAVAILABLE_ACTION,
  ARGUMENTS_TOO_DEEP_ACTION,
  REPEATED_CALL_ACTION,
  OVERLOADED_ACTION,
  WRITE_TIMEOUT_ACTION,
]);

/**
 * Whether a message or suggested action is one of the library's own texts (a default action, the
 * stop and circuit texts of this tool): part of the fixed template, never counted against
 * `maxErrorLength` nor cut. Compared whole, so a tool's text that only starts like one is not.
 */
export function isOwnText(text: string, toolName: string): boolean {
  if (OWN_TEXTS.has(text)) return true;
  return [exhaustedAction, isolatedAction, circuitOpenMessage, isolatedMessage].some((own) => text === own(toolName));
}

/** "about 42 s" / "about 3 min": the remaining open time, rounded up, as the core's stop message says it. */
function aboutDuration(ms: number): string {
  const seconds = Math.max(1, Math.ceil(ms / 1000));
  return seconds < 120 ? `about ${seconds} s` : `about ${Math.ceil(seconds / 60)} min`;
}

/** The system note a host adds for a tool it leaves out because its circuit is open (`remainingMs` unknown: `later`). */
export function openCircuitNote(toolName: string, remainingMs: number | undefined): string {
  const back = remainingMs === undefined ? "later" : `in ${aboutDuration(remainingMs)}`;
  return `The tool '${toolName}' is temporarily unavailable (its circuit breaker opened after repeated failures), so it is not in your tools for now; it may be available again ${back}. Continue without it or tell the user.`;
}

/** The system note for a tool left out because an operator isolated its circuit. */
export function isolatedCircuitNote(toolName: string): string {
  return `The tool '${toolName}' has been disabled by an operator, so it is not in your tools until it is re-enabled. Continue without it or tell the user it is unavailable.`;
}
