import { withText } from "../cleaning/clean-error.js";
import { ErrorCodes } from "../errors/error-codes.js";
import { RetriesExhaustedError } from "../errors/retries-exhausted-error.js";
import { createToolError, ToolError } from "../errors/tool-error.js";
import type { CallEnd } from "../events/events.js";
import type { ExecuteOutcome, FailedOutcome, ReflectOutcome } from "../outcome.js";
import type { ExhaustedMark, TrackedAttempts } from "../state/counters.js";
import * as texts from "../texts/model-texts.js";
import { NO_USES } from "../texts/templater.js";
import { type CallRun, type Engine, orElse } from "./call.js";
import { type Composed, compose, templated } from "./compose-message.js";
import type { Decision, ReflectText } from "./decide.js";

/** A failure retried in place after `delayMs` (the attempt loop waits, then runs the next attempt). */
export interface Retry {
  readonly status: "retry";
  readonly delayMs: number;
}

/** Carries a decision out: the events, the scope's counter (the gate time, the exhausted stop) and the outcome. `error` is clean. */
export function applyDecision(
  engine: Engine,
  run: CallRun,
  tracked: TrackedAttempts,
  error: ToolError,
  decision: Decision,
  origin: "tool" | "refusal",
): ReflectOutcome | FailedOutcome | Retry {
  const { options, notifier } = engine;
  const { toolName } = run;
  if (decision.kind === "stop") {
    if (decision.reason === "not_recoverable") return failedOutcome(engine, run, error, "not_recoverable");
    // Exhausted: the scope stops using the tool (with global tracking there is no task to stop: the count starts again).
    const mark = { at: options.clock.now(), message: error.message, lastErrorCode: error.code, lastError: error };
    const global = options.trackingScope === "global";
    if (global) engine.tracker.clear(run.counterKey);
    else tracked.exhausted = mark;
    const resetMs = run.policy.exhaustedResetMs;
    const fields = { tool_name: toolName, attempts: run.attempt, error: error.message };
    notifier.emit("retries_exhausted", toolName, run.info, global || resetMs === 0 ? fields : { ...fields, retry_after_ms: resetMs });
    return failedOutcome(engine, run, exhaustedError(run, mark), "exhausted");
  }
  if (origin === "tool") {
    tracked.lastDelayMs = decision.delayMs;
    notifier.emit("retry", toolName, run.info, {
      tool_name: toolName,
      attempt: run.attempt,
      max: run.policy.maxRetries,
      backoff_ms: decision.delayMs,
      error: error.message,
      error_code: error.code,
      mode: decision.kind === "retry" ? "in_place" : "reflect",
    });
  }
  if (decision.kind === "retry") return { status: "retry", delayMs: decision.delayMs };
  // The gate: a refusal moves it only when it asks for a wait.
  if (origin === "tool" || error.retryAfterMs !== undefined) tracked.readyAt = options.clock.now() + decision.delayMs;
  let shown = error;
  if (decision.text === "unknown_outcome") shown = withText(error, { suggestedAction: texts.UNKNOWN_OUTCOME_ACTION });
  const told = decision.text === "retry_later";
  // A temporary failure of the tool asks for the same call after the wait (a write cut off, and a
  // spent budget, keep their own action, which says why).
  const ownAction = error.suggestedAction === texts.WRITE_TIMEOUT_ACTION || error.code === ErrorCodes.RETRY_BUDGET_SPENT;
  if (told && origin === "tool" && !ownAction) shown = withText(error, { suggestedAction: texts.temporaryAction(toolName) });
  // The wait the model is told is the one the gate keeps; a temporary failure always says it.
  if ((told || shown.retryAfterMs !== undefined) && shown.retryAfterMs !== decision.delayMs) {
    shown = withText(shown, { retryAfterMs: decision.delayMs });
  }
  return reflectOutcome(engine, run, shown, origin === "refusal", decision.text, decision.delayMs);
}

/** `reflect`: the text `text` names (`retry_later`: in about `wait` ms) and the structured error; `own`: a call turned away. */
export function reflectOutcome(
  engine: Engine,
  run: CallRun,
  error: ToolError,
  own: boolean,
  text: ReflectText,
  wait: number,
): ReflectOutcome {
  let composed: Composed;
  if (text === "unknown_outcome") {
    composed = compose(engine, run, error, ({ error: quoted }) => texts.unknownOutcomeText(run.toolName, quoted));
  } else {
    const { policy } = run;
    // A call turned away by an open circuit: the user's `circuitOpenPrompt`, if any.
    const circuit = error.code === ErrorCodes.CIRCUIT_OPEN ? policy.circuitOpenTemplate : undefined;
    const template = circuit ?? (text === "retry_later" ? policy.retryLaterTemplate : policy.template);
    // At least 1 s: "in about 0 s" reads as no wait at all.
    const retryAfterS = String(Math.max(1, Math.ceil(wait / 1000)));
    composed = templated(engine, run, error, template, retryAfterS, error.code, own);
  }
  return { status: "reflect", prompt: composed.text, message: composed.message, error: composed.error, attempt: run.attempt };
}

/**
 * `failed`: the stop instruction for its reason (the policy's template, else the built-in text), and
 * the structured error, whose action is the library's own for a stop (the tool's stays `tool_suggested_action`).
 */
export function failedOutcome(engine: Engine, run: CallRun, given: ToolError, reason: "exhausted" | "not_recoverable"): FailedOutcome {
  const { policy, toolName } = run;
  const stopAction = reason === "not_recoverable" ? texts.notRecoverableAction(toolName, given.code, given.details?.fault) : undefined;
  const error = stopAction === undefined || stopAction === given.suggestedAction ? given : withText(given, { suggestedAction: stopAction });
  const template = reason === "exhausted" ? policy.exhaustedTemplate : policy.notRecoverableTemplate;
  let composed: Composed;
  if (template !== undefined) {
    // `{error_code}` is the last failure's code: an exhausted budget's, kept in the details the engine wrote.
    const last = reason === "not_recoverable" ? undefined : error.details?.last_error_code;
    const retryAfterS = String(Math.ceil((error.retryAfterMs ?? causeRetryAfterMs(error) ?? 0) / 1000));
    composed = templated(engine, run, error, template, retryAfterS, typeof last === "string" ? last : error.code);
  } else if (reason === "exhausted") {
    composed = compose(engine, run, error, ({ error: quoted }) => texts.exhaustedText(toolName, run.attempt, quoted));
  } else {
    composed = compose(engine, run, error, ({ error: quoted }) => texts.notRecoverableText(toolName, quoted, error.suggestedAction));
  }
  return { status: "failed", message: composed.message, error: composed.error, reason, attempt: run.attempt };
}

/** The wait a `RETRIES_EXHAUSTED` error's last failure asked for (its `cause`: read with care, it may be the tool's). */
function causeRetryAfterMs(error: ToolError): number | undefined {
  const cause = error.cause;
  const wait = ToolError.isInstance(cause) ? orElse(() => cause.retryAfterMs, undefined) : undefined;
  return typeof wait === "number" && Number.isFinite(wait) ? wait : undefined;
}

/** `RETRIES_EXHAUSTED`, keeping the failure that spent the budget as its `cause`. */
export function exhaustedError(run: CallRun, mark: ExhaustedMark): ToolError {
  return createToolError({
    code: ErrorCodes.RETRIES_EXHAUSTED,
    message: mark.message,
    recoverable: false,
    suggestedAction: texts.exhaustedAction(run.toolName),
    details: { last_error_code: mark.lastErrorCode },
    cause: mark.lastError,
  });
}

/** `failed` / `CIRCUIT_OPEN` of an isolated circuit (an operator's `isolate()`): no promised time, a stop for the task. */
export function circuitOpenOutcome(engine: Engine, run: CallRun): FailedOutcome {
  const { toolName } = run;
  const error = createToolError({
    code: ErrorCodes.CIRCUIT_OPEN,
    message: texts.isolatedMessage(toolName),
    recoverable: false,
    suggestedAction: texts.isolatedAction(toolName),
    details: { isolated: true },
  });
  const composed = compose(engine, run, error, () => texts.isolatedText(toolName), NO_USES);
  return { status: "failed", message: composed.message, error: composed.error, reason: "circuit_open", attempt: run.attempt };
}

/** The codes of a tool told as temporarily unavailable (its circuit open, its retry budget spent). */
const UNAVAILABLE: ReadonlySet<string> = new Set<string>([ErrorCodes.CIRCUIT_OPEN, ErrorCodes.RETRY_BUDGET_SPENT]);

/** A call's end: a fallback for a final failure, the observers told, then `onExhausted`. */
export async function ended<T>(engine: Engine, run: CallRun, outcome: ExecuteOutcome<T>): Promise<ExecuteOutcome<T>> {
  const last = await withFallback(engine, run, outcome);
  endCall(engine, run, last);
  if (last.status === "failed" && last.reason === "exhausted" && engine.options.onExhausted === "throw") {
    throw new RetriesExhaustedError({ toolName: run.toolName, attempts: last.attempt, error: last.error });
  }
  return last;
}

/**
 * A failure (`failed`, or a tool that is not a write told as temporarily unavailable) replaced by the
 * `fallback` value, if it gives one (a throw, a rejection or `undefined` keeps the failure).
 */
async function withFallback<T>(engine: Engine, run: CallRun, outcome: ExecuteOutcome<T>): Promise<ExecuteOutcome<T>> {
  const fallback = run.policy.fallback;
  if (fallback === undefined || outcome.status === "success") return outcome;
  const { error } = outcome;
  const unavailable = run.effect !== "write" && (UNAVAILABLE.has(error.code) || error.kind === "transient");
  if (outcome.status === "reflect" && !unavailable) return outcome;
  let value: unknown;
  try {
    value = await fallback(run.call, error); // any thenable is awaited, never returned as the value
  } catch {
    return outcome;
  }
  if (value === undefined) return outcome;
  engine.notifier.emit("fallback_used", run.toolName, run.info, { tool_name: run.toolName, error_code: error.code });
  return { status: "success", value: value as T, attempt: outcome.attempt, replayed: false, fallback: true };
}

/** Tells the observers how the call ended: an outcome, or what was thrown out of `execute`. */
export function endCall(engine: Engine, run: CallRun, outcome: ExecuteOutcome<unknown> | undefined, thrown?: unknown): void {
  if (!engine.notifier.callHooks) return;
  const success = outcome?.status === "success" ? outcome : undefined;
  const failure = outcome !== undefined && outcome.status !== "success" ? outcome : undefined;
  const end: CallEnd = {
    status: outcome !== undefined ? outcome.status : run.signal?.aborted ? "aborted" : passesThrough(run, thrown) ? "interrupted" : "error",
    attempts: run.attempts,
    attempt: outcome?.attempt ?? run.attempt,
    replayed: success?.replayed === true,
    fallback: success?.fallback === true,
    durationMs: engine.options.clock.now() - run.info.startTime,
    circuitState: run.breaker.state(run.breakerKey),
    error: failure?.error,
    reason: failure?.status === "failed" ? failure.reason : undefined,
    value: success?.value,
    thrown: outcome === undefined ? thrown : undefined,
  };
  engine.notifier.tell((observer) => observer.onCallEnd?.(run.info, end));
}

/** Control flow, rethrown untouched: as a host's reading of it says, else `execute`'s `call.passThrough` (a throwing one says no). */
export function passesThrough(run: CallRun, thrown: unknown): boolean {
  const reading = run.reading;
  if (reading !== undefined && reading.thrown === thrown) return reading.passThrough;
  const passThrough = run.call.passThrough;
  return orElse(() => passThrough?.(thrown) === true, false);
}
