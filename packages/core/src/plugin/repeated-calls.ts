import { ErrorCodes } from "../errors/error-codes.js";
import { createToolError } from "../errors/tool-error.js";
import { argumentsFingerprint } from "../idempotency/fingerprint.js";
import type { GuardRefusal } from "../idempotency/idempotency-guard.js";
import { REPEATED_CALL_ACTION, repeatedCallMessage } from "../texts/model-texts.js";
import type { TrackedAttempts } from "./attempt-tracker.js";
import type { CallRun } from "./call-run.js";

/** Exact calls remembered per (scope, tool): the oldest is forgotten beyond it. */
const MAX_REMEMBERED_CALLS = 64;

// `repeatedCallLimit`: an exact call (same tool, same canonical arguments) that already failed for a
// non-transient reason this many times in its scope is refused without running.

/** The call's arguments as one text that sees content (the write's own fingerprint when it has one); undefined past the depth limit. */
function callFingerprint(run: CallRun): string | undefined {
  if (run.fingerprint !== undefined) return run.fingerprint;
  try {
    return argumentsFingerprint(run.call.args, run.effect === "write" ? run.idempotency.keyField : undefined);
  } catch {
    return undefined;
  }
}

/** Remembers a failed exact call (a non-transient failure, with the limit set). */
export function rememberFailedCall(run: CallRun, tracked: TrackedAttempts): void {
  if (run.policy.repeatedCallLimit === undefined) return;
  const fingerprint = callFingerprint(run);
  if (fingerprint === undefined) return;
  if (tracked.repeats === undefined) tracked.repeats = new Map();
  const repeats = tracked.repeats;
  repeats.set(fingerprint, (repeats.get(fingerprint) ?? 0) + 1);
  if (repeats.size > MAX_REMEMBERED_CALLS) repeats.delete(repeats.keys().next().value as string);
}

/** The refusal of an exact call that failed `repeatedCallLimit` times already, or undefined. */
export function repeatedCall(run: CallRun, tracked: TrackedAttempts | undefined): GuardRefusal | undefined {
  const limit = run.policy.repeatedCallLimit;
  if (limit === undefined || tracked?.repeats === undefined) return undefined;
  const fingerprint = callFingerprint(run);
  const failures = fingerprint === undefined ? undefined : tracked.repeats.get(fingerprint);
  if (failures === undefined || failures < limit) return undefined;
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
