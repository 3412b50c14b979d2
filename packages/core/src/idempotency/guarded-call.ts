import type { ToolCall } from "../config/options.js";
import type { IdempotencySettings } from "../config/policy.js";
import type { ToolError } from "../errors/tool-error.js";

/** What the guard reads and writes of one logical call. */
export interface GuardedCall {
  readonly call: ToolCall;
  readonly toolName: string;
  readonly scope: string;
  readonly signal: AbortSignal | undefined;
  /** The tool's idempotency settings (the plugin's, or its policy's). */
  readonly idempotency: IdempotencySettings;
  /** Set by `prepare` for a guarded write: the user's key, the store key, the fingerprint. */
  idempotencyKey: string | undefined;
  storeKey: string | undefined;
  fingerprint: string | undefined;
  /** What `prepare` found, kept so that it runs once per call. */
  prepared: "unguarded" | GuardRefusal | "guarded" | undefined;
}

/**
 * The call is turned away before the tool runs: `conflict` names an idempotency conflict, `refused`
 * a refusal of the call itself (for their events).
 */
export interface GuardRefusal {
  readonly refusal: ToolError;
  readonly conflict?: "key_required" | "key_reused" | "in_progress";
  readonly refused?: "overloaded" | "repeated_call";
}
