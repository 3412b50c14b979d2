import type { RunContext } from "@openai/agents";
import type { ToolContext, ToolEffect } from "@retry-reflect/core";
import { type HostToolCall, randomScope, withToolContext, zodArgumentsError } from "@retry-reflect/core/adapter";
import type { ScopeOption, ToolCallInput } from "./adapter-options.js";

/** A definition's `execute`, as the SDK calls it. */
export type Execute = (input: unknown, runContext: RunContext<unknown> | undefined, details: object | undefined) => unknown;

/** What one wrapped tool knows once, for all its calls. */
export interface ToolBinding {
  toolName: string;
  readonly execute: Execute;
  readonly description: string | undefined;
  /** The adapter's `toolEffects[toolName]`; undefined lets the plugin decide. */
  readonly effect: ToolEffect | undefined;
  /** The adapter's `scope`; undefined: one per run. */
  readonly scope: ScopeOption<unknown> | undefined;
  /** The adapter's `namespace`; undefined: the scope. */
  readonly namespace: ScopeOption<unknown> | undefined;
  /** Whether the definition's `parameters` declare the idempotency key argument (undefined: it cannot be told). */
  readonly declaresKey: boolean | undefined;
  /** The wrapper's scope for calls made without a run context (a tool invoked by hand). */
  readonly fallbackScope: string;
}

/** The call details the runner passes `invoke` (and so `execute`). */
export interface CallDetails {
  readonly toolCall?: { readonly callId?: string };
  readonly signal?: AbortSignal;
}

/** One scope per run: a `RunContext` is the run's (a resumed run keeps it). */
const runScopes = new WeakMap<object, string>();

function runScope(runContext: RunContext<unknown> | undefined, fallback: string): string {
  if (runContext === undefined || runContext === null) return fallback;
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
export class OpenAiAgentsToolCall implements HostToolCall<unknown> {
  readonly toolName: string;
  readonly callId: string | undefined;
  readonly signal: AbortSignal | undefined;
  readonly description: string | undefined;
  readonly toolType = "function";
  readonly effect: ToolEffect | undefined;
  /** Undefined (the core's default: the scope) unless the adapter's `namespace` is given. */
  readonly namespace: string | (() => string) | undefined;

  constructor(
    private readonly binding: ToolBinding,
    readonly args: unknown,
    private readonly runContext: RunContext<unknown> | undefined,
    private readonly details: CallDetails | undefined,
  ) {
    this.toolName = binding.toolName;
    this.callId = details?.toolCall?.callId;
    this.signal = details?.signal;
    this.description = binding.description;
    this.effect = binding.effect;
    const namespace = binding.namespace;
    // A closure only when the namespace is a function of the call (asked for writes only).
    this.namespace = typeof namespace === "function" ? () => namespace(this.input(), this.runContext) : namespace;
  }

  get declaresKey(): boolean | undefined {
    return this.binding.declaresKey;
  }

  private input(): ToolCallInput {
    return { toolName: this.toolName, callId: this.callId, input: this.args };
  }

  /** The attempt-tracking scope, asked only when the plugin needs it. */
  scope(): string {
    const scope = this.binding.scope;
    if (typeof scope === "string") return scope;
    if (scope === undefined) return runScope(this.runContext, this.binding.fallbackScope);
    return scope(this.input(), this.runContext);
  }

  run(args: unknown, context: ToolContext): unknown {
    return this.binding.execute(args, this.runContext, withToolContext(this.details ?? {}, context, "signal"));
  }

  /** A `ZodError` the tool threw itself names the bad fields (`INVALID_ARGUMENTS`); anything else is classified as it is. */
  failureOfThrown(error: unknown, args: unknown): unknown {
    return zodArgumentsError(error, args) ?? error;
  }
}
