import type { ToolExecutionContext } from "@mastra/core/tools";
import type { ToolContext } from "@retry-reflect/core";
import { BoundToolCall, lendToolContext, type ScopedToolCallBinding, type ThrownReading } from "@retry-reflect/core/adapter";
import type { ToolCallInput } from "./adapter-options.js";
import { SuspendWatch, ToolSuspension } from "./suspension.js";

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
 * (`context.agent.toolCallId`) is the call id, the run's `abortSignal` the signal, the run Mastra
 * gives the tool the default scope and namespace, and the tool's own `execute` runs with the
 * attempt's signal and context in its context (`getToolContext(context)`). A call that suspends
 * (`context.agent.suspend()`) is passed through as Mastra's control flow: nothing stored, nothing
 * counted, and it runs again on resume.
 */
export class MastraToolCall extends BoundToolCall<(call: ToolCallInput) => string, ToolBinding> {
  readonly callId: string | undefined;
  readonly signal: AbortSignal | undefined;
  /** Whether the last attempt suspended the call (Mastra's `suspend`): what it threw then is Mastra's control flow. */
  private suspended = false;

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

  /** The run Mastra gives the tool (an agent's `generate`/`stream`, a workflow run); undefined for a call without one (a tool called by hand). */
  protected override runScope(): string | undefined {
    const runId = runIdOf(this.context);
    return runId === undefined ? undefined : `mastra/run/${runId}`;
  }

  async run(args: unknown, context: ToolContext): Promise<unknown> {
    const { tool, execute } = this.binding;
    const watch = SuspendWatch.of(this.context);
    this.suspended = false;
    let value: unknown;
    try {
      // Mastra's `Tool.execute` copies the context before its first `await`, and validates the input
      // again unless the context is the very object its builder validated it for: so the host's own
      // context goes in, lent the attempt's signal and context for that step (a copy lost the mark:
      // a transforming schema then failed its second validation).
      value = await lendToolContext(this.context ?? ({} as ToolExecutionContext), context, "abortSignal", (lent) =>
        execute.call(tool, args, lent),
      );
    } finally {
      if (watch !== undefined) {
        watch.end();
        this.suspended = watch.suspended;
      }
    }
    // A call that suspended (a confirmation asked inside `execute`) ends as control flow, whatever it returned or threw.
    if (this.suspended) throw new ToolSuspension(value);
    return value;
  }

  /** A suspension (and anything thrown once the tool suspended, such as Mastra's eager-execution bail-out) passes through, untouched and uncounted. */
  override async readThrown(error: unknown, args: unknown): Promise<ThrownReading> {
    if (error instanceof ToolSuspension || this.suspended) return { failure: error, passThrough: true };
    return super.readThrown(error, args);
  }
}

/** What a wrapped tool's `execute` resolves to when its call rejected: a suspension's value, handed back to Mastra; any other error as it is. */
export function settleSuspension(error: unknown): unknown {
  if (error instanceof ToolSuspension) return error.value;
  throw error;
}
