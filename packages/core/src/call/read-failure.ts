import { classifyError, isReturnedFailure } from "../classify/classify-error.js";
import { withText } from "../cleaning/clean-error.js";
import { ToolError } from "../errors/tool-error.js";
import { DEFAULT_SUGGESTED_ACTIONS, isOwnText } from "../texts/model-texts.js";
import { type AttemptResult, lateOf } from "./attempt.js";
import type { CallRun, HostReading } from "./call-state.js";
import type { ThrownReading } from "./tool-call.js";

// What an attempt did, read as a failure: a returned value that reports one, or what a thrown
// error is to classify (a host adapter's call reads both its own way); whether it is control flow;
// its classification, and the error as the library shows it.

/** A failed attempt: `failure` is what gets classified; `thrown` what the tool threw or returned (control flow and the host's retry mark are asked about it). */
export interface FailedAttempt {
  readonly kind: "failure";
  readonly failure: unknown;
  readonly thrown: unknown;
}

/** An attempt read: a success with its value, or a failure. A host's reading of what it threw is kept by the run (`run.reading`). */
export async function readAttempt<T>(
  run: CallRun,
  result: AttemptResult<T>,
): Promise<{ readonly kind: "success"; readonly value: T } | FailedAttempt> {
  if (result.kind === "returned") {
    const failure = returnedFailure(run, result.value);
    return failure === undefined ? { kind: "success", value: result.value } : { kind: "failure", failure, thrown: failure };
  }
  const thrown = result.error;
  if (run.host?.readThrown === undefined) return { kind: "failure", failure: thrown, thrown };
  run.reading = await readThrown(run, thrown);
  return { kind: "failure", failure: run.reading.failure, thrown };
}

/**
 * Failure detection for a returned value: the host's own test when the call comes from an adapter
 * (an error `ToolMessage`), else the built-in shapes (a `ToolError`, the structured error shape,
 * MCP `isError`); then the policy's `isFailure` (which can only add failures). The failure to
 * classify, or undefined for a success.
 */
export function returnedFailure(run: CallRun, value: unknown): unknown {
  const host = run.host;
  if (host?.failureOfResult !== undefined) {
    const reported = host.failureOfResult(value);
    if (reported !== undefined) return reported;
  } else if (isReturnedFailure(value)) return value;
  const isFailure = run.policy.isFailure;
  if (isFailure === undefined) return undefined;
  let verdict: boolean | ToolError | undefined;
  try {
    verdict = isFailure(value, { toolName: run.toolName, args: run.call.args, attempt: run.attempt, scope: run.scope });
  } catch {
    // A throwing hook adds nothing: the value is judged by the built-in shapes alone (a success
    // here). Never a crash, and never a failure the tool did not report.
    return undefined;
  }
  // `true`: the value itself is the failure, classified as a thrown one would be (the policy's
  // `classifyError`, then the built-in rules: a returned `{ status: 503 }` is transient). Undefined
  // would read as a success: it is classified here.
  if (verdict === true) return value === undefined ? classifyError(value) : value;
  return ToolError.isInstance(verdict) ? verdict : undefined;
}

/**
 * A host call's reading of what its tool threw (`readThrown`, may be async), checked: the failure
 * to classify, whether it is the host's control flow, the host's retry mark. The core's own attempt
 * timeout is not read (a write's may still be running: the failure stage reads that off it); a
 * reader that throws, or answers with anything but a reading, leaves the error as thrown. Boxed:
 * what a tool threw may be a hostile object that must never be read as a thenable.
 */
async function readThrown(run: CallRun, thrown: unknown): Promise<HostReading> {
  const host = run.host;
  if (host?.readThrown === undefined || lateOf(thrown) !== undefined) return asThrown(thrown);
  try {
    const read = host.readThrown(thrown, run.call.args);
    const reading: unknown = isPromise(read) ? await read : read;
    if (typeof reading !== "object" || reading === null) return asThrown(thrown);
    const { failure, passThrough, retryable } = reading as ThrownReading;
    return { thrown, failure, passThrough: passThrough === true, retryable: typeof retryable === "boolean" ? retryable : undefined };
  } catch {
    return asThrown(thrown);
  }
}

function asThrown(thrown: unknown): HostReading {
  return { thrown, failure: thrown, passThrough: false, retryable: undefined };
}

function isPromise(value: unknown): value is Promise<unknown> {
  try {
    return value instanceof Promise;
  } catch {
    return false; // a revoked Proxy
  }
}

/** A host adapter's reading of `thrown` (`readThrown`), when the run holds one of that very error. */
function readingOf(run: CallRun, thrown: unknown): HostReading | undefined {
  const reading = run.reading;
  return reading !== undefined && reading.thrown === thrown ? reading : undefined;
}

/**
 * Whether what was thrown is control flow, rethrown untouched: a host adapter's reading of it says
 * so, else `execute`'s `call.passThrough` (a throwing one says no).
 */
export function passesThrough(run: CallRun, thrown: unknown): boolean {
  const reading = readingOf(run, thrown);
  if (reading !== undefined) return reading.passThrough;
  const passThrough = run.call.passThrough;
  if (passThrough === undefined) return false;
  try {
    return passThrough(thrown) === true;
  } catch {
    return false;
  }
}

/**
 * The policy's `shouldRetry`, else the host's mark (`call.retryable`); undefined: the default
 * decision. A hook that throws (or returns anything but a boolean) decides nothing: a throwing
 * `shouldRetry` leaves the decision to the mark, a throwing mark to the default.
 */
export function retryVerdict(run: CallRun, error: ToolError, thrown: unknown): boolean | undefined {
  const shouldRetry = run.policy.shouldRetry;
  if (shouldRetry !== undefined) {
    try {
      const verdict = shouldRetry(error, { toolName: run.toolName, args: run.call.args, attempt: run.attempt, scope: run.scope });
      if (typeof verdict === "boolean") return verdict;
    } catch {
      // Decides nothing.
    }
  }
  // A host adapter's mark comes with its reading of what was thrown; `execute`'s with the call.
  const reading = readingOf(run, thrown);
  if (reading !== undefined) return reading.retryable;
  const retryable = run.call.retryable;
  if (retryable === undefined) return undefined;
  try {
    const mark = retryable(thrown);
    return typeof mark === "boolean" ? mark : undefined;
  } catch {
    return undefined;
  }
}

/** Whether the failure is a write's timeout whose attempt may still be running (read with care: the failure may be a hostile object). */
export function stillRunning(failure: unknown): boolean {
  try {
    return lateOf(failure) !== undefined;
  } catch {
    return false;
  }
}

/** The user's classifier first (a throwing one falls back), then the built-in rules. */
export function classify(run: CallRun, failure: unknown): ToolError {
  const custom = run.policy.classifyError;
  if (custom) {
    try {
      const classified = custom(failure, { toolName: run.toolName, args: run.call.args, attempt: run.attempt });
      if (classified !== undefined && ToolError.isInstance(classified)) return classified;
    } catch {
      // A throwing classifier falls back to the default classification.
    }
  }
  return classifyError(failure);
}

/**
 * The error as the library shows it: its `suggested_action` is the library's own action for the
 * code (or, for a code of the tool's, for its kind); the tool's or server's own suggestion, when it
 * differs, is `tool_suggested_action` (already cleaned and capped). A `Retry-After` longer than
 * `maxBackoffMs` is cut to it: no wait the library would not keep reaches the model.
 */
export function libraryView(run: CallRun, error: ToolError): ToolError {
  const own = (DEFAULT_SUGGESTED_ACTIONS as Record<string, string>)[error.code] ?? retryAction(error);
  const given = error.suggestedAction;
  const action = given === "" || given === own || isOwnText(given, run.toolName) ? undefined : given;
  const cap = run.policy.maxBackoffMs;
  const retryAfterMs = error.retryAfterMs === undefined ? undefined : Math.min(error.retryAfterMs, cap);
  if (action === undefined && retryAfterMs === error.retryAfterMs) return error;
  if (action === undefined) return withText(error, { retryAfterMs });
  return withText(error, { suggestedAction: own, toolSuggestedAction: action, retryAfterMs });
}

/** The library's own action for a failure's kind (a code of the tool's, or a failure `shouldRetry` made recoverable). */
export function retryAction(error: ToolError): string {
  if (error.kind === "transient") return DEFAULT_SUGGESTED_ACTIONS.TRANSIENT;
  if (error.kind === "invalid_arguments") return DEFAULT_SUGGESTED_ACTIONS.INVALID_ARGUMENTS;
  return DEFAULT_SUGGESTED_ACTIONS.TOOL_FAILED;
}
