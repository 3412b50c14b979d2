import type { ToolError } from "../errors/tool-error.js";

// What the guard reads of a call and of its settings: its own types, so that the guard depends on
// no stage of the call and on no option parsing (the call's `ToolCall` and the resolved policy fit them).

/** What the guard reads of a tool call (a `ToolCall` is one). */
export interface GuardedToolCall {
  readonly toolName: string;
  readonly args: unknown;
  /** The call's own scope: derived keys are never merged across scopes. */
  readonly scope?: string;
  /** Whose writes these are. @default the scope */
  readonly namespace?: string;
  /** `false`: the tool's schema has no key argument: a derived key, never a refusal for a missing one. */
  readonly declaresKey?: boolean;
}

/** How a write's idempotency key is found. */
export type IdempotencyDerive = "never" | "when-missing" | "always";

/** A write's idempotency settings, as one call uses them (the store is the plugin's). */
export interface IdempotencySettings {
  readonly keyField: string;
  readonly key: ((call: GuardedToolCall) => string | undefined) | undefined;
  readonly ttlMs: number;
  readonly leaseMs: number;
  readonly requireKey: boolean;
  readonly derive: IdempotencyDerive;
  readonly maxResultBytes: number;
}

/** What the guard reads and writes of one logical call. */
export interface GuardedCall {
  readonly call: GuardedToolCall;
  readonly toolName: string;
  readonly signal: AbortSignal | undefined;
  /** The tool's idempotency settings (the plugin's, or its policy's). */
  readonly idempotency: IdempotencySettings;
  /** Set by `prepare` for a guarded write: the user's key, the store key, the fingerprint. */
  idempotencyKey?: string;
  storeKey?: string;
  fingerprint?: string;
}

/**
 * The call is turned away before the tool runs: `conflict` names an idempotency conflict, `refused`
 * a refusal of the call itself (for their events).
 */
export interface GuardRefusal {
  readonly refusal: ToolError;
  readonly conflict?: "key_required" | "key_reused" | "in_progress" | "in_doubt";
  readonly refused?: "overloaded" | "repeated_call";
}
