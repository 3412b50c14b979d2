import { ErrorCodes } from "../errors/error-codes.js";
import { createToolError, type ToolError } from "../errors/tool-error.js";
import {
  IN_DOUBT_ACTION,
  IN_PROGRESS_ACTION,
  inDoubtMessage,
  inProgressMessage,
  KEY_REUSED_ACTION,
  keyReusedMessage,
  STORE_BUSY_ACTION,
  storeBusyMessage,
} from "../texts/model-texts.js";
import type { GuardedCall, GuardRefusal } from "./guarded-call.js";
import type { IdempotencyBeginResult } from "./idempotency-store.js";

// The guard's side of the store protocol: reading the key, reading what a store answered, the one
// table of what a write does on each answer, and the refusals a write gets before it runs.

const BEGIN_STATUSES = new Set(["acquired", "completed", "in_progress", "in_doubt", "busy"]);

/** A recoverable refusal: the write did not run. */
export function refusal(code: string, message: string, suggestedAction: string, retryAfterMs?: number, cause?: unknown): ToolError {
  return createToolError({ code, message, recoverable: true, suggestedAction, retryAfterMs, cause });
}

/** The key is held, here or in the store, for other arguments: `key_reused`, the write does not run. */
export function keyReused(run: GuardedCall): GuardRefusal {
  return {
    conflict: "key_reused",
    refusal: refusal(ErrorCodes.IDEMPOTENCY_KEY_REUSED, keyReusedMessage(run.toolName), KEY_REUSED_ACTION),
  };
}

export function readKey(args: unknown, field: string): string | undefined {
  if (typeof args !== "object" || args === null) return undefined;
  const value = (args as Record<string, unknown>)[field];
  if (typeof value === "string") return value.length > 0 ? value : undefined;
  if (typeof value === "number" && Number.isFinite(value)) return String(value);
  return undefined;
}

/** A store's `begin` answer, read: one of its documented answers, or a record the guard cannot use (with why). */
export type BeginAnswer = IdempotencyBeginResult | { readonly status: "invalid_record"; readonly problem: string };

/** What one write does on a `begin` answer: run (it holds `token`), replay the stored result, or be refused. */
export type LockAnswer = { readonly token: string } | { readonly replay: unknown } | GuardRefusal;

/**
 * A store's `begin` answer, if it has a documented status (a numeric token is taken as its text):
 * `invalid_record` for a record the guard cannot use (one the store could not read, a record without
 * its fingerprint, or a stored value `replayable` refuses); undefined for anything else (a fault).
 */
export function readBegin(value: unknown, replayable: (value: unknown) => boolean): BeginAnswer | undefined {
  if (typeof value !== "object" || value === null) return undefined;
  const result = value as Record<string, unknown>;
  const status = result.status;
  if (typeof status !== "string" || !BEGIN_STATUSES.has(status)) return undefined;
  const retryAfter =
    typeof result.retryAfterMs === "number" && Number.isFinite(result.retryAfterMs) && result.retryAfterMs >= 0
      ? result.retryAfterMs
      : 1000;
  const { fingerprint } = result;
  switch (status) {
    case "acquired":
      if (typeof result.token === "number" && Number.isFinite(result.token)) return { status, token: String(result.token) };
      return typeof result.token === "string" && result.token.length > 0 ? { status, token: result.token } : undefined;
    case "completed":
      if (typeof fingerprint !== "string") return invalidRecord("a completed record without its fingerprint");
      if (!replayable(result.value)) return invalidRecord("the stored result is not of a shape that can be returned to a caller");
      return { status, fingerprint, value: result.value };
    case "in_progress":
      return typeof fingerprint === "string" ? { status, fingerprint, retryAfterMs: retryAfter } : undefined;
    case "in_doubt":
      if (typeof result.invalidRecord === "string") return invalidRecord(`the store could not read it (${result.invalidRecord})`);
      return typeof fingerprint === "string" ? { status, fingerprint } : undefined;
    default:
      return { status: "busy", retryAfterMs: retryAfter };
  }
}

function invalidRecord(why: string): BeginAnswer {
  return {
    status: "invalid_record",
    problem: `the stored record of this key cannot be used: ${why}; it is not replayed, and the write is in doubt`,
  };
}

/**
 * The one table of answers to a `begin`, for every guard (the plugin's call path and `RequestGuard`):
 * acquired runs the write; completed replays its result, to the same arguments only; in progress
 * refuses for now (`IN_PROGRESS`, ask again within a second); in doubt, or a record that cannot be
 * used, stops (`WRITE_IN_DOUBT`: it may have taken effect); busy refuses for now (the store is full
 * of writes in flight). The same key with other arguments is `IDEMPOTENCY_KEY_REUSED`.
 */
export function answerOf(run: GuardedCall, begun: BeginAnswer): LockAnswer {
  switch (begun.status) {
    case "acquired":
      return { token: begun.token };
    case "completed":
      return begun.fingerprint === run.fingerprint ? { replay: begun.value } : keyReused(run);
    case "in_progress":
      if (begun.fingerprint !== run.fingerprint) return keyReused(run);
      // The holder may finish any moment (its lease is only the longest it may take): ask again soon.
      return {
        conflict: "in_progress",
        refusal: refusal(
          ErrorCodes.IN_PROGRESS,
          inProgressMessage(run.toolName),
          IN_PROGRESS_ACTION,
          Math.min(begun.retryAfterMs, IN_PROGRESS_RETRY_MS),
        ),
      };
    case "in_doubt":
      return begun.fingerprint === run.fingerprint ? inDoubt(run) : keyReused(run);
    case "invalid_record":
      // Whatever its fingerprint says: a record that cannot be read may hide a write that took effect.
      return inDoubt(run);
    default:
      return {
        conflict: "in_progress",
        refusal: refusal(ErrorCodes.IN_PROGRESS, storeBusyMessage(run.toolName), STORE_BUSY_ACTION, begun.retryAfterMs),
      };
  }
}

/** The longest `retry_after_ms` of an `IN_PROGRESS` refusal: a write held elsewhere usually ends well before its lease. */
const IN_PROGRESS_RETRY_MS = 1000;

/** It may have taken effect: running it again could do it twice. A stop, not a wait. */
function inDoubt(run: GuardedCall): GuardRefusal {
  return {
    conflict: "in_doubt",
    refusal: createToolError({
      code: ErrorCodes.WRITE_IN_DOUBT,
      message: inDoubtMessage(run.toolName),
      recoverable: false,
      suggestedAction: IN_DOUBT_ACTION,
    }),
  };
}

export function describeValue(value: unknown): string {
  if (value === null || value === undefined) return String(value);
  if (typeof value !== "object") return typeof value;
  const status = (value as { status?: unknown }).status;
  return typeof status === "string" ? `an object with status ${JSON.stringify(status.slice(0, 40))}` : "an object without a known status";
}
