import type { ToolContext } from "@retry-reflect/core";
import { BoundToolCall, type ScopedToolCallBinding, withToolContext } from "@retry-reflect/core/adapter";
import { isRecord } from "@retry-reflect/core/adapter/options";
import type { ScopeInput } from "./adapter-options.js";
import { runOfMessages } from "./run-of-messages.js";
import type { ToolExecutionOptionsLike } from "./tool-types.js";

/** A tool's `execute`, as the AI SDK calls it. */
export type Execute = (input: unknown, options: ToolExecutionOptionsLike) => unknown;

/** What one wrapped tool knows once, for all its calls. */
export interface ToolBinding extends ScopedToolCallBinding<(call: ScopeInput) => string> {
  /** The original tool: `this` of its `execute`. */
  readonly tool: object;
  readonly execute: Execute;
  /** `"function"`, or `"extension"` for a provider tool run here (`gen_ai.tool.type`). */
  readonly toolType: string;
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
 * model's tool-call id is the call id, the run's `abortSignal` the signal, the run told by the
 * step's messages the default namespace, and the tool's own `execute` runs with the
 * attempt's signal and context in its execution options.
 */
export class AiSdkToolCall extends BoundToolCall<(call: ScopeInput) => string, ToolBinding> {
  readonly callId: string;
  readonly signal: AbortSignal | undefined;

  constructor(
    binding: ToolBinding,
    args: unknown,
    private readonly options: ToolExecutionOptionsLike,
  ) {
    super(binding, args);
    this.callId = options.toolCallId;
    this.signal = options.abortSignal;
  }

  private input(): ScopeInput {
    return { toolName: this.toolName, toolCallId: this.callId, input: this.args, options: this.options };
  }

  protected ask(fn: (call: ScopeInput) => string): string {
    return fn(this.input());
  }

  /**
   * Whose writes the call's are by default: its `generateText` / `streamText` run's, told by the
   * step's messages (`runOfMessages`); undefined (the call's own) when none can be told. Attempts stay
   * counted per wrapper: the messages keep runs apart, but do not always keep one run together
   * (Mastra hands an AI SDK tool its run's messages made anew for each call).
   */
  protected override runNamespace(): string | undefined {
    return runOfMessages(this.options.messages);
  }

  async run(args: unknown, context: ToolContext): Promise<unknown> {
    const { tool, execute } = this.binding;
    const result = await execute.call(tool, args, withToolContext(this.options, context, "abortSignal"));
    return isAsyncIterable(result) ? lastOf(result) : result;
  }
}
