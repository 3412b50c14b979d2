import type { RunContext } from "@openai/agents";
import type { ToolContext } from "@retry-reflect/core";
import { BoundToolCall, type ScopedToolCallBinding, withToolContext } from "@retry-reflect/core/adapter";
import { randomScope } from "@retry-reflect/core/adapter/options";
import type { ScopeOption, ToolCallInput } from "./adapter-options.js";

/** A definition's `execute`, as the SDK calls it. */
export type Execute = (input: unknown, runContext: RunContext<unknown> | undefined, details: object | undefined) => unknown;

/** What one wrapped tool knows once, for all its calls. */
export interface ToolBinding extends ScopedToolCallBinding<AskOf> {
  toolName: string; // the SDK's own spelling, set once `tool()` has made it
  readonly execute: Execute;
}

/** The function form of the `scope` and `namespace` options. */
type AskOf = Extract<ScopeOption<unknown>, (...args: never[]) => string>;

/** The call details the runner passes `invoke` (and so `execute`). */
export interface CallDetails {
  readonly toolCall?: { readonly callId?: string };
  readonly signal?: AbortSignal;
}

/** One scope per run: a `RunContext` is the run's (a resumed run keeps it). */
const runScopes = new WeakMap<object, string>();

function runScopeOf(runContext: RunContext<unknown> | undefined): string | undefined {
  if (runContext === undefined || runContext === null) return undefined;
  let scope = runScopes.get(runContext);
  if (scope === undefined) {
    scope = randomScope("openai-agents/run");
    runScopes.set(runContext, scope);
  }
  return scope;
}

/**
 * One OpenAI Agents SDK function-tool call, as the seam (`runToolCall`) runs it: the model's call id
 * is the call id, the run's `details.signal` the signal, and the definition's own `execute` runs
 * with the attempt's signal and context in its details (`getToolContext(details)`).
 */
export class OpenAiAgentsToolCall extends BoundToolCall<AskOf, ToolBinding> {
  readonly callId: string | undefined;
  readonly signal: AbortSignal | undefined;

  constructor(
    binding: ToolBinding,
    args: unknown,
    private readonly runContext: RunContext<unknown> | undefined,
    private readonly details: CallDetails | undefined,
  ) {
    super(binding, args);
    this.callId = details?.toolCall?.callId;
    this.signal = details?.signal;
  }

  private input(): ToolCallInput {
    return { toolName: this.toolName, callId: this.callId, input: this.args };
  }

  protected ask(fn: AskOf): string {
    return fn(this.input(), this.runContext);
  }

  /** The run's scope (one per `RunContext`); undefined for a call made without one (a tool called by hand). */
  protected override runScope(): string | undefined {
    return runScopeOf(this.runContext);
  }

  async run(args: unknown, context: ToolContext): Promise<unknown> {
    return this.binding.execute(args, this.runContext, withToolContext(this.details ?? {}, context, "signal"));
  }
}
