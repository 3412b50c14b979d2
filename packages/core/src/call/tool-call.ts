import type { ToolEffect } from "../outcome.js";

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
  /**
   * Whether the tool's argument schema declares the idempotency key argument (`idempotency.keyField`),
   * as an adapter reads it from the host tool's schema. `false` (an MCP server's write tool, a host
   * tool without the field): the write gets a derived key (as `derive: "when-missing"`), is never
   * refused for a missing key, and never receives the key argument (a model's stray one is removed
   * from the arguments). `true` or undefined (a bare `execute`): `requireKey` and `derive` as set.
   * @default undefined
   */
  readonly declaresKey?: boolean;
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

/**
 * A call as the engine takes it: `execute`'s, or a host adapter's (`runToolCall`), whose scope and
 * namespace are asked for only when the plugin needs them, and which reads what its tool did its
 * own way. The adapter's call is the tool's `this` (its `run` method) and its hooks' too.
 */
export interface EngineCall<Args = unknown> extends Omit<ToolCall<Args>, "scope" | "namespace"> {
  readonly scope?: string | (() => string);
  readonly namespace?: string | (() => string);
  /** A returned value that reports a failure: the failure to classify, else undefined. Replaces the built-in shapes' test. */
  failureOfResult?(result: unknown): unknown;
  /** What the host makes of an error its tool threw (`HostToolCall.readThrown`); may be async. */
  readThrown?(error: unknown, args: unknown): ThrownReading | Promise<ThrownReading>;
}

/** What a host adapter makes of an error its tool threw (`HostToolCall.readThrown`): one value, read once per failed attempt. */
export interface ThrownReading {
  /** The failure to classify: the error as thrown, or what it means (a schema error with its fields named). */
  readonly failure: unknown;
  /** The host's control flow (an interrupt): rethrown untouched, never counted or classified. @default false */
  readonly passThrough?: boolean;
  /** The host's own "retry or not" mark (LangChain's `getRetryable`): the default of the policy's `shouldRetry`. @default none */
  readonly retryable?: boolean;
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

/** `execute`'s call, checked before anything reads it. */
export function checkCall(call: unknown, fn: unknown): void {
  if (typeof call !== "object" || call === null)
    throw new TypeError(`execute: expected a call object { toolName, args }, received ${call === null ? "null" : typeof call}`);
  const { toolName, signal } = call as ToolCall;
  if (typeof toolName !== "string" || toolName.length === 0)
    throw new TypeError(
      `execute: expected \`toolName\` to be a non-empty string, received ${JSON.stringify(toolName) ?? String(toolName)}`,
    );
  if (typeof fn !== "function") throw new TypeError(`execute: expected the tool function as the second argument, received ${typeof fn}`);
  if (signal !== undefined && (typeof signal !== "object" || signal === null || typeof (signal as AbortSignal).aborted !== "boolean")) {
    throw new TypeError("execute: expected `signal` to be an AbortSignal");
  }
  const { description, toolType, namespace, declaresKey } = call as ToolCall;
  if (declaresKey !== undefined && typeof declaresKey !== "boolean")
    throw new TypeError(
      `execute: expected \`declaresKey\` to be a boolean, received ${JSON.stringify(declaresKey) ?? String(declaresKey)}`,
    );
  if (namespace !== undefined && (typeof namespace !== "string" || namespace.length === 0))
    throw new TypeError(
      `execute: expected \`namespace\` to be a non-empty string, received ${JSON.stringify(namespace) ?? String(namespace)}`,
    );
  if (description !== undefined && typeof description !== "string")
    throw new TypeError(`execute: expected \`description\` to be a string, received ${typeof description}`);
  if (toolType !== undefined && typeof toolType !== "string")
    throw new TypeError(`execute: expected \`toolType\` to be a string, received ${typeof toolType}`);
}
