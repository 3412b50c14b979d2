import type { ToolContext, ToolEffect } from "@retry-reflect/core";
import { type HostToolCall, isRecord, withToolContext, zodArgumentsError } from "@retry-reflect/core/adapter";
import type { ScopeInput } from "./adapter-options.js";
import type { ToolExecutionOptionsLike } from "./tool-types.js";

/** A tool's `execute`, as the AI SDK calls it. */
export type Execute = (input: unknown, options: ToolExecutionOptionsLike) => unknown;

/** What one wrapped tool knows once, for all its calls. */
export interface ToolBinding {
  readonly toolName: string;
  /** The original tool: `this` of its `execute`. */
  readonly tool: object;
  readonly execute: Execute;
  readonly description: string | undefined;
  /** `"function"`, or `"extension"` for a provider tool run here (`gen_ai.tool.type`). */
  readonly toolType: string;
  /** The adapter's `toolEffects[toolName]`; undefined lets the plugin decide. */
  readonly effect: ToolEffect | undefined;
  readonly scope: string | ((call: ScopeInput) => string);
  /** The adapter's `namespace`; undefined: the scope. */
  readonly namespace: string | ((call: ScopeInput) => string) | undefined;
  /** Whether the tool's `inputSchema` declares the idempotency key argument (undefined: it cannot be told). */
  readonly declaresKey: boolean | undefined;
}

function isAsyncIterable(value: unknown): value is AsyncIterable<unknown> {
  return isRecord(value) && typeof (value as { [Symbol.asyncIterator]?: unknown })[Symbol.asyncIterator] === "function";
}

/** A streaming tool's final output (its last value): a failure while it streams is the attempt's failure. */
async function lastOf(stream: AsyncIterable<unknown>): Promise<unknown> {
  let last: unknown;
  for await (const value of stream) last = value;
  return last;
}

/**
 * One AI SDK tool call, as the seam (`runToolCall` of `@retry-reflect/core/adapter`) runs it: the
 * model's tool-call id is the call id, the run's `abortSignal` the signal, and the tool's own
 * `execute` runs with the attempt's signal and context in its execution options. A class, so that
 * a call costs one object and no closure.
 */
export class AiSdkToolCall implements HostToolCall<unknown> {
  readonly toolName: string;
  readonly callId: string;
  readonly signal: AbortSignal | undefined;
  readonly description: string | undefined;
  readonly toolType: string;
  readonly effect: ToolEffect | undefined;
  readonly namespace: string | (() => string) | undefined;

  constructor(
    private readonly binding: ToolBinding,
    readonly args: unknown,
    private readonly options: ToolExecutionOptionsLike,
  ) {
    this.toolName = binding.toolName;
    this.callId = options.toolCallId;
    this.signal = options.abortSignal;
    this.description = binding.description;
    this.toolType = binding.toolType;
    this.effect = binding.effect;
    const namespace = binding.namespace;
    // A closure only when the namespace is a function of the call (asked for writes only).
    this.namespace =
      typeof namespace === "function"
        ? () => namespace({ toolName: this.toolName, toolCallId: this.callId, input: this.args, options: this.options })
        : namespace;
  }

  /** Read once per tool from its `inputSchema`: a write without the key argument gets a derived key. On the prototype: no field per call. */
  get declaresKey(): boolean | undefined {
    return this.binding.declaresKey;
  }

  /** The attempt-tracking scope, asked only when the plugin needs it. */
  scope(): string {
    const scope = this.binding.scope;
    if (typeof scope === "string") return scope;
    return scope({ toolName: this.toolName, toolCallId: this.callId, input: this.args, options: this.options });
  }

  run(args: unknown, context: ToolContext): unknown {
    const { tool, execute } = this.binding;
    const result = execute.call(tool, args, withToolContext(this.options, context, "abortSignal"));
    return isAsyncIterable(result) ? lastOf(result) : result;
  }

  /** A `ZodError` the tool threw itself names the bad fields (`INVALID_ARGUMENTS`); anything else is classified as it is. */
  failureOfThrown(error: unknown, args: unknown): unknown {
    return zodArgumentsError(error, args) ?? error;
  }
}
