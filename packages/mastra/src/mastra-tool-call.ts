import type { ToolExecutionContext } from "@mastra/core/tools";
import type { ToolContext } from "@retry-reflect/core";
import { BoundToolCall, keepShape, lendToolContext, type ScopedToolCallBinding } from "@retry-reflect/core/adapter";
import type { ToolCallInput } from "./adapter-options.js";

/** A Mastra tool's `execute`, as Mastra calls it. */
export type Execute = (input: unknown, context: ToolExecutionContext | undefined) => unknown;

/** What one wrapped tool knows once, for all its calls. */
export interface ToolBinding extends ScopedToolCallBinding<(call: ToolCallInput) => string> {
  /** The original tool: `this` of its `execute`. */
  readonly tool: object;
  readonly execute: Execute;
}

/** The run a call belongs to: a workflow's run id, else the agent run's (Mastra passes `runId` to the tool). */
function runIdOf(context: ToolExecutionContext | undefined): string | undefined {
  const runId = context?.workflow?.runId ?? (context as { runId?: unknown } | undefined)?.runId;
  return typeof runId === "string" && runId !== "" ? runId : undefined;
}

/**
 * One Mastra tool call, as the seam (`runToolCall`) runs it: the model's tool-call id
 * (`context.agent.toolCallId`) is the call id, the run's `abortSignal` the signal, and the tool's
 * own `execute` runs with the attempt's signal and context in its context (`getToolContext(context)`).
 */
export class MastraToolCall extends BoundToolCall<(call: ToolCallInput) => string, ToolBinding> {
  readonly callId: string | undefined;
  readonly signal: AbortSignal | undefined;

  constructor(
    binding: ToolBinding,
    args: unknown,
    private readonly context: ToolExecutionContext | undefined,
  ) {
    super(binding, args);
    this.callId = context?.agent?.toolCallId || undefined;
    this.signal = context?.abortSignal;
  }

  private input(): ToolCallInput {
    return { toolName: this.toolName, callId: this.callId, input: this.args, context: this.context };
  }

  protected ask(fn: (call: ToolCallInput) => string): string {
    return fn(this.input());
  }

  /** Without a `scope` option: the run's, or the wrapper's for a call made without a run id (a tool called by hand). */
  protected override defaultScope(): string {
    const runId = runIdOf(this.context);
    return runId === undefined ? this.binding.fallbackScope : `mastra/run/${runId}`;
  }

  run(args: unknown, context: ToolContext): unknown {
    const { tool, execute } = this.binding;
    // Mastra's `Tool.execute` copies the context before its first `await`, and validates the input
    // again unless the context is the very object its builder validated it for: so the host's own
    // context goes in, lent the attempt's signal and context for that step (a copy lost the mark:
    // a transforming schema then failed its second validation).
    return lendToolContext(this.context ?? ({} as ToolExecutionContext), context, "abortSignal", (lent) => execute.call(tool, args, lent));
  }
}

// One kept, built as a wrapped tool's calls are (see `keepShape` of `@retry-reflect/core/adapter`).
keepShape(
  new MastraToolCall(
    { toolName: "", description: undefined, effect: undefined, declaresKey: undefined, namespace: undefined } as unknown as ToolBinding,
    undefined,
    undefined,
  ),
);
