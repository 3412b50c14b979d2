import { ErrorCodes } from "../errors/error-codes.js";
import { createToolError, type ToolError } from "../errors/tool-error.js";
import { KEY_REUSED_ACTION, keyReusedMessage } from "../texts/model-texts.js";
import type { GuardedCall, GuardRefusal } from "./guarded-call.js";
import type { IdempotencyBeginResult } from "./idempotency-store.js";

// The guard's side of the store protocol: reading the key, checking what a store answered, and
// the refusals a write gets before it runs.

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

/** A store's `begin` answer, if it has the documented shape (a numeric token is taken as its text). */
export function checkBegin(value: unknown): IdempotencyBeginResult | undefined {
  if (typeof value !== "object" || value === null) return undefined;
  const result = value as Record<string, unknown>;
  const status = result.status;
  if (typeof status !== "string" || !BEGIN_STATUSES.has(status)) return undefined;
  const retryAfter =
    typeof result.retryAfterMs === "number" && Number.isFinite(result.retryAfterMs) && result.retryAfterMs >= 0
      ? result.retryAfterMs
      : 1000;
  switch (status) {
    case "acquired":
      if (typeof result.token === "number" && Number.isFinite(result.token)) return { status, token: String(result.token) };
      return typeof result.token === "string" && result.token.length > 0 ? { status, token: result.token } : undefined;
    case "completed":
      return typeof result.fingerprint === "string" ? { status, fingerprint: result.fingerprint, value: result.value } : undefined;
    case "in_progress":
      return typeof result.fingerprint === "string" ? { status, fingerprint: result.fingerprint, retryAfterMs: retryAfter } : undefined;
    case "in_doubt":
      return typeof result.fingerprint === "string" ? { status, fingerprint: result.fingerprint } : undefined;
    default:
      return { status: "busy", retryAfterMs: retryAfter };
  }
}

export function describeValue(value: unknown): string {
  if (value === null || value === undefined) return String(value);
  if (typeof value !== "object") return typeof value;
  const status = (value as { status?: unknown }).status;
  return typeof status === "string" ? `an object with status ${JSON.stringify(status.slice(0, 40))}` : "an object without a known status";
}
