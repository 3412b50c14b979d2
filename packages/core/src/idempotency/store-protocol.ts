import { ErrorCodes } from "../errors/error-codes.js";
import { createToolError, type ToolErrorInit } from "../errors/tool-error.js";
import {
  ARGUMENTS_TOO_DEEP_ACTION,
  argumentsTooDeepMessage,
  IN_DOUBT_ACTION,
  IN_PROGRESS_ACTION,
  inDoubtMessage,
  inProgressMessage,
  KEY_REUSED_ACTION,
  keyRequiredAction,
  keyRequiredMessage,
  keyReusedMessage,
  STORE_BUSY_ACTION,
  STORE_UNAVAILABLE_ACTION,
  storeBusyMessage,
  storeUnavailableMessage,
  UNREADABLE_ARGUMENTS_MESSAGE,
} from "../texts/model-texts.js";
import { ArgumentDepthError, hex } from "./fingerprint.js";
import type { GuardedCall, GuardRefusal } from "./guarded-call.js";

// The guard's side of the store protocol: reading the key and hashing it into a store key, the one
// table of what a write does on each answer of a store, and every refusal a write gets before it runs.

/** The call is turned away before its tool runs, recoverable unless said; `tag` names an idempotency conflict or a refusal (for its event). */
export function refused(
  tag: Pick<GuardRefusal, "conflict" | "refused">,
  code: string,
  message: string,
  suggestedAction: string,
  more?: Partial<Pick<ToolErrorInit, "recoverable" | "retryAfterMs" | "cause">>,
): GuardRefusal {
  return { ...tag, refusal: createToolError({ code, message, recoverable: true, suggestedAction, ...more }) };
}

/** The key is held, here or in the store, for other arguments. */
export function keyReused(run: GuardedCall): GuardRefusal {
  return refused({ conflict: "key_reused" }, ErrorCodes.IDEMPOTENCY_KEY_REUSED, keyReusedMessage(run.toolName), KEY_REUSED_ACTION);
}

export function keyRequired(run: GuardedCall): GuardRefusal {
  const action = keyRequiredAction(run.idempotency.keyField);
  return refused({ conflict: "key_required" }, ErrorCodes.IDEMPOTENCY_KEY_REQUIRED, keyRequiredMessage(run.toolName), action);
}

/**
 * Arguments too deep, or that cannot be read as data (a getter that throws, a Proxy): the model's
 * arguments, not the tool, so `INVALID_ARGUMENTS`: an attempt, never a breaker failure.
 */
export function unreadableArguments(error: unknown): GuardRefusal {
  const message = error instanceof ArgumentDepthError ? argumentsTooDeepMessage(error.maxDepth) : UNREADABLE_ARGUMENTS_MESSAGE;
  return refused({}, ErrorCodes.INVALID_ARGUMENTS, message, ARGUMENTS_TOO_DEEP_ACTION);
}

/** The store did not answer, or answered nonsense. Its fault is the `cause`, never in the model's text. */
export function storeUnavailable(run: GuardedCall, cause: unknown): GuardRefusal {
  return refused({}, ErrorCodes.STORE_UNAVAILABLE, storeUnavailableMessage(run.toolName), STORE_UNAVAILABLE_ACTION, { cause });
}

/** It may have taken effect: running it again could do it twice. A stop, not a wait. */
function inDoubt(run: GuardedCall): GuardRefusal {
  const message = inDoubtMessage(run.toolName);
  return refused({ conflict: "in_doubt" }, ErrorCodes.WRITE_IN_DOUBT, message, IN_DOUBT_ACTION, { recoverable: false });
}

/** Not now: the key is held (or the store is full of writes in flight); the same call after `retryAfterMs`. */
function inProgress(message: string, suggestedAction: string, retryAfterMs: number): GuardRefusal {
  return refused({ conflict: "in_progress" }, ErrorCodes.IN_PROGRESS, message, suggestedAction, { retryAfterMs });
}

/**
 * 128 bits of a sequence of texts as 32 hex characters: two cyrb53-style pairs of states with
 * independent seeds (not cryptographic), each text's length mixed in before it, so that no two
 * different sequences read as one ("ab","c" is not "a","bc"). The guard's store keys: a namespace,
 * a tool and a key never reach a store as they are, and two different triples collide only by
 * chance (about 2^-64 for a billion keys). Stores keep them: the value for given texts never changes.
 */
export function hash128(...texts: string[]): string {
  let state1 = 0x9e3779b9;
  let state2 = 0x85ebca6b;
  let state3 = 0xc2b2ae35;
  let state4 = 0x27d4eb2f;
  const mix = (code: number): void => {
    state1 = Math.imul(state1 ^ code, 2654435761);
    state2 = Math.imul(state2 ^ code, 1597334677);
    state3 = Math.imul(state3 ^ code, 2246822519);
    state4 = Math.imul(state4 ^ code, 3266489917);
  };
  for (const text of texts) {
    mix(text.length);
    for (let index = 0; index < text.length; index++) mix(text.charCodeAt(index));
  }
  state1 = Math.imul(state1 ^ (state1 >>> 16), 2246822507) ^ Math.imul(state2 ^ (state2 >>> 13), 3266489909);
  state2 = Math.imul(state2 ^ (state2 >>> 16), 2246822507) ^ Math.imul(state1 ^ (state1 >>> 13), 3266489909);
  state3 = Math.imul(state3 ^ (state3 >>> 16), 2654435761) ^ Math.imul(state4 ^ (state4 >>> 13), 1597334677);
  state4 = Math.imul(state4 ^ (state4 >>> 16), 2654435761) ^ Math.imul(state3 ^ (state3 >>> 13), 1597334677);
  return hex(state1) + hex(state2) + hex(state3) + hex(state4);
}

export function readKey(args: unknown, field: string): string | undefined {
  if (typeof args !== "object" || args === null) return undefined;
  const value = (args as Record<string, unknown>)[field];
  if (typeof value === "string") return value.length > 0 ? value : undefined;
  if (typeof value === "number" && Number.isFinite(value)) return String(value);
  return undefined;
}

/** What one write does on a `begin` answer: run (it holds `token`), replay the stored result, or be refused. */
export type LockAnswer = { readonly token: string } | { readonly replay: unknown } | GuardRefusal;

/**
 * The one table of answers to a `begin`, for every guard (the plugin's call path and `RequestGuard`):
 * acquired runs the write (a numeric token is taken as its text); completed replays its result, to
 * the same arguments only; in progress refuses for now (`IN_PROGRESS`, ask again within a second);
 * in doubt stops (`WRITE_IN_DOUBT`: it may have taken effect); busy refuses for now (the store is
 * full of writes in flight). The same key with other arguments is `IDEMPOTENCY_KEY_REUSED`. A record
 * the guard cannot use (one the store could not read, a completed record without its fingerprint,
 * or a stored value `replayable` refuses) is in doubt whatever its fingerprint, and told to
 * `onInvalidRecord`. Undefined for an answer of no documented shape: a fault of the store.
 */
export function answerOf(
  run: GuardedCall,
  answer: unknown,
  replayable: (value: unknown) => boolean,
  onInvalidRecord: (problem: string) => void,
): LockAnswer | undefined {
  if (typeof answer !== "object" || answer === null) return undefined;
  const { status, fingerprint, token, value, retryAfterMs, invalidRecord } = answer as Record<string, unknown>;
  const retryAfter = typeof retryAfterMs === "number" && Number.isFinite(retryAfterMs) && retryAfterMs >= 0 ? retryAfterMs : 1000;
  const unusable = (why: string): GuardRefusal => {
    onInvalidRecord(`the stored record of this key cannot be used: ${why}; it is not replayed, and the write is in doubt`);
    return inDoubt(run);
  };
  switch (status) {
    case "acquired":
      if (typeof token === "number" && Number.isFinite(token)) return { token: String(token) };
      return typeof token === "string" && token.length > 0 ? { token } : undefined;
    case "completed":
      if (typeof fingerprint !== "string") return unusable("a completed record without its fingerprint");
      if (!replayable(value)) return unusable("the stored result is not of a shape that can be returned to a caller");
      return fingerprint === run.fingerprint ? { replay: value } : keyReused(run);
    case "in_progress":
      if (typeof fingerprint !== "string") return undefined;
      if (fingerprint !== run.fingerprint) return keyReused(run);
      // The holder may finish any moment (its lease is only the longest it may take): ask again within a second.
      return inProgress(inProgressMessage(run.toolName), IN_PROGRESS_ACTION, Math.min(retryAfter, 1000));
    case "in_doubt":
      if (typeof invalidRecord === "string") return unusable(`the store could not read it (${invalidRecord})`);
      if (typeof fingerprint !== "string") return undefined;
      return fingerprint === run.fingerprint ? inDoubt(run) : keyReused(run);
    case "busy":
      return inProgress(storeBusyMessage(run.toolName), STORE_BUSY_ACTION, retryAfter);
    default:
      return undefined;
  }
}

export function describeValue(value: unknown): string {
  if (value === null || value === undefined) return String(value);
  if (typeof value !== "object") return typeof value;
  const status = (value as { status?: unknown }).status;
  return typeof status === "string" ? `an object with status ${JSON.stringify(status.slice(0, 40))}` : "an object without a known status";
}
