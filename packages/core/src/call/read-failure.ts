import { backoffDelay } from "../backoff/backoff.js";
import type { CircuitPermit } from "../breaker/circuit-breaker.js";
import { classifyError, isReturnedFailure } from "../classify/classify-error.js";
import { sanitizeError, withText } from "../cleaning/clean-error.js";
import { abortReason } from "../clock.js";
import { ErrorCodes } from "../errors/error-codes.js";
import { ToolError } from "../errors/tool-error.js";
import type { FailedOutcome, ReflectOutcome } from "../outcome.js";
import { recordFailure } from "../state/counters.js";
import { DEFAULT_SUGGESTED_ACTIONS, exhaustedAction, isOwnText } from "../texts/model-texts.js";
import { budgetSpent, rememberFailedCall } from "./admit.js";
import { type AttemptResult, lateOf } from "./attempt.js";
import { type CallRun, type Engine, type EngineCall, type HostReading, orElse, type ThrownReading } from "./call.js";
import { countsForBreaker, decide } from "./decide.js";
import { applyDecision, passesThrough, type Retry } from "./outcome.js";

/** A failed attempt: `failure` is what gets classified; `thrown` what the tool threw or returned. */
export interface FailedAttempt {
  readonly kind: "failure";
  readonly failure: unknown;
  readonly thrown: unknown;
}

export async function readAttempt<T>(
  run: CallRun,
  result: AttemptResult<T>,
): Promise<{ readonly kind: "success"; readonly value: T } | FailedAttempt> {
  if (result.kind === "returned") {
    const failure = returnedFailure(run, result.value);
    return failure === undefined ? { kind: "success", value: result.value } : { kind: "failure", failure, thrown: failure };
  }
  const thrown = result.error;
  // A host adapter reads what its tool threw, once; never the core's own attempt timeout.
  if (run.host?.readThrown === undefined || lateOf(thrown) !== undefined) return { kind: "failure", failure: thrown, thrown };
  run.reading = await readThrown(run.host, thrown, run.call.args);
  return { kind: "failure", failure: run.reading.failure, thrown };
}

/**
 * The failure a returned value reports, or undefined for a success: the host's own test (an error
 * `ToolMessage`), else the built-in shapes; then the policy's `isFailure`, which can only add one.
 */
export function returnedFailure(run: CallRun, value: unknown): unknown {
  const host = run.host;
  if (host?.failureOfResult !== undefined) {
    const reported = host.failureOfResult(value);
    if (reported !== undefined) return reported;
  } else if (isReturnedFailure(value)) return value;
  // A throwing hook adds nothing. `true`: the value is the failure, classified as a thrown one would be (undefined would read as a success).
  const verdict = ask(run.policy.isFailure, value, { toolName: run.toolName, args: run.call.args, attempt: run.attempt, scope: run.scope });
  if (verdict === true) return value === undefined ? classifyError(value) : value;
  return ToolError.isInstance(verdict) ? verdict : undefined;
}

/** A host's reading of what its tool threw, checked: a reader that throws, or answers with anything but an object, leaves the error as thrown. */
async function readThrown(host: EngineCall, thrown: unknown, args: unknown): Promise<HostReading> {
  const asThrown: HostReading = { thrown, failure: thrown, passThrough: false, retryable: undefined };
  try {
    const reading: unknown = await host.readThrown?.(thrown, args);
    if (typeof reading !== "object" || reading === null) return asThrown;
    const { failure, passThrough, retryable } = reading as ThrownReading;
    return { thrown, failure, passThrough: passThrough === true, retryable: typeof retryable === "boolean" ? retryable : undefined };
  } catch {
    return asThrown;
  }
}

/** Calls a user's hook: what it answers, or undefined when it throws. */
function ask<A, R>(hook: ((arg: A, context: never) => R) | undefined, arg: A, context?: unknown): R | undefined {
  return orElse(() => hook?.(arg, context as never), undefined);
}

/** The policy's `shouldRetry`, else the host's mark; undefined (or a hook that throws): the default decision. */
function retryVerdict(run: CallRun, error: ToolError, thrown: unknown): boolean | undefined {
  const context = { toolName: run.toolName, args: run.call.args, attempt: run.attempt, scope: run.scope };
  const verdict = ask(run.policy.shouldRetry, error, context);
  if (typeof verdict === "boolean") return verdict;
  const reading = run.reading;
  if (reading !== undefined && reading.thrown === thrown) return reading.retryable;
  const mark = ask(run.call.retryable, thrown);
  return typeof mark === "boolean" ? mark : undefined;
}

/** The user's classifier first (a throwing one falls back), then the built-in rules. */
function classify(run: CallRun, failure: unknown): ToolError {
  const context = { toolName: run.toolName, args: run.call.args, attempt: run.attempt };
  const classified = ask(run.policy.classifyError, failure, context);
  return classified !== undefined && ToolError.isInstance(classified) ? classified : classifyError(failure);
}

/**
 * The error as the library shows it: its own action for the code (or kind), the tool's own
 * suggestion as `tool_suggested_action`; a `Retry-After` cut to `maxBackoffMs`.
 */
function libraryView(run: CallRun, error: ToolError): ToolError {
  const own = (DEFAULT_SUGGESTED_ACTIONS as Record<string, string>)[error.code] ?? retryAction(error);
  const given = error.suggestedAction;
  const action = given === "" || given === own || isOwnText(given, run.toolName) ? undefined : given;
  const cap = run.policy.maxBackoffMs;
  const retryAfterMs = error.retryAfterMs === undefined ? undefined : Math.min(error.retryAfterMs, cap);
  if (action === undefined && retryAfterMs === error.retryAfterMs) return error;
  if (action === undefined) return withText(error, { retryAfterMs });
  return withText(error, { suggestedAction: own, toolSuggestedAction: action, retryAfterMs });
}

function retryAction({ kind }: ToolError): string {
  const { TRANSIENT, INVALID_ARGUMENTS, TOOL_FAILED } = DEFAULT_SUGGESTED_ACTIONS;
  return kind === "transient" ? TRANSIENT : kind === "invalid_arguments" ? INVALID_ARGUMENTS : TOOL_FAILED;
}

/** The outcome of a failed attempt, or a retry in place. Throws the abort reason, or a pass-through error. */
export async function afterFailure(
  engine: Engine,
  run: CallRun,
  permit: CircuitPermit,
  { failure, thrown }: FailedAttempt,
): Promise<ReflectOutcome | FailedOutcome | Retry> {
  const { breaker, policy, breakerKey } = run;
  // The caller's abort wins over whatever the tool did after it.
  const aborted = run.signal?.aborted === true;
  if (aborted || passesThrough(run, thrown)) {
    breaker.onNeutral(breakerKey, permit);
    throw aborted ? abortReason(run.signal as AbortSignal) : thrown;
  }
  // Cleaned at once: the tool's error is read once, into a plain error.
  let error = libraryView(run, sanitizeError(engine.cleaner, classify(run, failure), run.idempotencyKey));
  const { tracker, options } = engine;
  const previousCode = error.code === ErrorCodes.PERMISSION_DENIED ? tracker.get(run.counterKey, run.toolName)?.lastCode : undefined;
  let circuitOpenForMs: number | undefined;
  if (countsForBreaker(error.kind, error.code, previousCode, policy.circuitBreakerCountsInvalidArguments)) {
    // A shared store answers first: calls failing together each see the circuit as their own failure left it.
    circuitOpenForMs = await breaker.onFailure(breakerKey, permit, run.info);
  } else {
    breaker.onNeutral(breakerKey, permit);
    circuitOpenForMs = breaker.peek(breakerKey);
  }
  const tracked = tracker.entry(run.counterKey, run.toolName);
  const now = options.clock.now();
  recordFailure(run, tracked, now, error.code);
  const verdict = retryVerdict(run, error, thrown);
  if (verdict !== undefined && verdict !== error.recoverable) {
    // The suggested action was written for the other verdict: the model is told what this one means.
    error = withText(error, { recoverable: verdict, suggestedAction: verdict ? retryAction(error) : exhaustedAction(run.toolName) });
  }
  if (error.kind !== "transient") {
    if (policy.repeatedCallLimit !== undefined) rememberFailedCall(run, tracked);
    tracked.reflections += 1;
  }
  const failingSince = tracked.failingSince as number;
  const decision = decide(
    {
      origin: "tool",
      recoverable: error.recoverable,
      kind: error.kind,
      reflections: tracked.reflections,
      budgetSpent: tracked.exhausted !== undefined,
      circuitOpenForMs,
      effect: run.effect,
      guarded: run.storeKey !== undefined,
      // A write cut off by its timeout may still be running: reflected, never retried in place.
      stillRunning: run.storeKey !== undefined && lateOf(failure) !== undefined,
      backoffMs: backoffDelay(run.attempt, policy, options.random, tracked.lastDelayMs),
      retryAfterMs: error.retryAfterMs,
      inPlaceRetries: run.inPlace,
      sinceCallStartMs: now - run.startedAt,
      failingForMs: now - failingSince,
      failures: tracked.failures,
      succeededElsewhere: tracker.succeededSince(run.toolName, failingSince),
    },
    policy,
  );
  const budget = policy.retryBudget;
  if (decision.kind === "retry" && budget !== undefined) {
    // A shared budget is asked of the store (failure path only); one in memory takes the retry before this await.
    const waitMs = await engine.budgets.takeRetry(run.toolName, budget, options.clock.now());
    if (waitMs > 0) return budgetSpent(engine, run, tracked, error, budget, waitMs);
  }
  return applyDecision(engine, run, tracked, error, decision, "tool");
}
