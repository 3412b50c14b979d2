import type { ToolEffect } from "../events/events.js";

// What one tool call is, as `execute` receives it, and what the tool and the hooks see of it.

/** What a tool call is, as `execute` receives it. */
export interface ToolCall<Args = unknown> {
  /** The tool's name: scoping, breaker and attempt tracking key on it. */
  readonly toolName: string;
  /** The tool's arguments, as the model produced them. */
  readonly args: Args;
  /** The model's tool-call id, for telemetry. */
  readonly callId?: string;
  /** Attempt-tracking scope, usually one agent run. Default `"default"`. Ignored when `trackingScope` is `"global"`. */
  readonly scope?: string;
  /**
   * Whose writes these are: a stored write result is replayed only to a call of the same namespace
   * (the conversation, the request or the tenant id), and a key used in another namespace is a
   * fresh key there. Give calls that must replay across runs or replicas (a queue redelivering a
   * request) one namespace. @default the call's `scope` (else `"default"`)
   */
  readonly namespace?: string;
  /** Aborts backoff waits and is passed to the tool. */
  readonly signal?: AbortSignal;
  /** Overrides `toolEffects` / `defaultEffect` for this call. */
  readonly effect?: ToolEffect;
  /** What the tool does, as the model is told (telemetry shows it as `gen_ai.tool.description`). @default none */
  readonly description?: string;
  /** The tool's kind in GenAI terms (`"function"`, `"extension"`, `"datastore"`), for telemetry (`gen_ai.tool.type`). @default none */
  readonly toolType?: string;
  /**
   * Errors for which this returns true are control flow, not failures (a framework's interrupt):
   * rethrown untouched, not counted, not classified. @default none
   */
  readonly passThrough?: (error: unknown) => boolean;
  /**
   * The host framework's own "retry or not" mark on what the tool threw (LangChain's
   * `getRetryable`): decides when the policy has no `shouldRetry`, or it returns `undefined` or
   * throws. @default none
   */
  readonly retryable?: (failure: unknown) => boolean | undefined;
}

/** What the tool function receives besides its arguments. */
export interface ToolContext {
  /** 1 for the first call of this tool in this scope, 2 for the first retry, ... */
  readonly attempt: number;
  readonly signal: AbortSignal | undefined;
  /** For `write` tools: the idempotency key, to forward downstream (an `Idempotency-Key` header). */
  readonly idempotencyKey?: string;
  readonly toolName: string;
  readonly callId: string | undefined;
}

export interface ClassifyContext {
  readonly toolName: string;
  readonly args: unknown;
  readonly attempt: number;
}

/** What `shouldRetry` and `isFailure` see of the call. */
export interface FailureContext {
  readonly toolName: string;
  readonly args: unknown;
  /** The attempt's number in its scope (provisional for `isFailure`: the failure would take it). */
  readonly attempt: number;
  readonly scope: string;
}
