import { ErrorCodes } from "../errors/error-codes.js";
import { createToolError } from "../errors/tool-error.js";
import { argumentsFingerprint } from "../idempotency/fingerprint.js";
import type { GuardRefusal } from "../idempotency/guarded-call.js";
import { omittedField } from "../idempotency/idempotency-guard.js";
import { REPEATED_CALL_ACTION, repeatedCallMessage } from "../texts/model-texts.js";
import type { TrackedAttempts } from "./attempt-tracker.js";
import type { CallRun } from "./call-state.js";

/** Exact calls remembered per (scope, tool): the least recently failed or refused is forgotten beyond it. */
const MAX_REMEMBERED_CALLS = 64;

// `repeatedCallLimit`: an exact call (same tool, same canonical arguments) that already failed for a
// non-transient reason this many times in its scope is refused without running. A success of
// another call does not make it forgotten (the attempt tracker keeps the memory for the scope).

/**
 * The call's arguments as one text that sees content; for a write, the idempotency guard's own
 * fingerprint (without the key argument, as the guard computes it), so that a write re-issued
 * with a new key is the same call before and after the guard has seen it. Undefined past the depth limit.
 */
function callFingerprint(run: CallRun): string | undefined {
  if (run.fingerprint !== undefined) return run.fingerprint;
  try {
    return argumentsFingerprint(run.call.args, run.effect === "write" ? omittedField(run.idempotency) : undefined);
  } catch {
    return undefined;
  }
}

/** Counts `fingerprint` as the most recent exact call (a Map keeps insertion order: the first key is the least recent). */
function touch(repeats: Map<string, number>, fingerprint: string, failures: number): void {
  repeats.delete(fingerprint);
  repeats.set(fingerprint, failures);
}

/** Remembers a failed exact call (a non-transient failure, with the limit set). */
export function rememberFailedCall(run: CallRun, tracked: TrackedAttempts): void {
  if (run.policy.repeatedCallLimit === undefined) return;
  const fingerprint = callFingerprint(run);
  if (fingerprint === undefined) return;
  if (tracked.repeats === undefined) tracked.repeats = new Map();
  const repeats = tracked.repeats;
  touch(repeats, fingerprint, (repeats.get(fingerprint) ?? 0) + 1);
  if (repeats.size > MAX_REMEMBERED_CALLS) repeats.delete(repeats.keys().next().value as string);
}

/** The refusal of an exact call that failed `repeatedCallLimit` times already, or undefined. */
export function repeatedCall(run: CallRun, tracked: TrackedAttempts | undefined): GuardRefusal | undefined {
  const limit = run.policy.repeatedCallLimit;
  if (limit === undefined || tracked?.repeats === undefined) return undefined;
  const fingerprint = callFingerprint(run);
  const failures = fingerprint === undefined ? undefined : tracked.repeats.get(fingerprint);
  if (failures === undefined || failures < limit) return undefined;
  // A call the model keeps repeating stays remembered while other calls come and go.
  touch(tracked.repeats, fingerprint as string, failures);
  return {
    refused: "repeated_call",
    refusal: createToolError({
      code: ErrorCodes.REPEATED_CALL,
      message: repeatedCallMessage(run.toolName, failures),
      recoverable: true,
      suggestedAction: REPEATED_CALL_ACTION,
    }),
  };
}
