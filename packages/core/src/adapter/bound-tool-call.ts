import type { ThrownReading } from "../call/call.js";
import type { ToolContext } from "../config/options.js";
import type { ToolEffect } from "../outcome.js";
import type { RetryReflectPlugin } from "../plugin.js";
import { type CheckedAnnotatedToolOptions, randomScope } from "./host-options.js";
import type { HostToolCall } from "./run-tool-call.js";
import { declaresField, hintedEffect, keyFieldOf } from "./tool-declarations.js";
import { zodArgumentsError } from "./tool-failures.js";

/** What an adapter knows of a tool: once per wrapped tool, or once per call for a host that hands the tool over with each call. */
export interface ToolCallBinding<Ask> {
  readonly toolName: string;
  readonly description?: string | undefined;
  /** The tool's GenAI type (`gen_ai.tool.type`: `"function"`, `"extension"`). @default none */
  readonly toolType?: string | undefined;
  /** The adapter's effect for the tool; undefined lets the plugin decide. */
  readonly effect?: ToolEffect | undefined;
  /** Whether the tool's schema declares the idempotency key argument (undefined: it cannot be told). */
  readonly declaresKey?: boolean | undefined;
  /** The adapter's `namespace` option: a string, a function of the call (`Ask`), or undefined (see {@link BoundToolCall}). */
  readonly namespace?: string | Ask | undefined;
}

/** A binding with the adapter's `scope` option: all {@link BoundToolCall} needs to place a call. */
export interface ScopedToolCallBinding<Ask> extends ToolCallBinding<Ask> {
  /** The adapter's `scope` option: a string, a function of the call (`Ask`), or undefined (the call's run's scope). */
  readonly scope?: string | Ask | undefined;
  /**
   * The scope of a call whose run cannot be told: the wrapper's own (a random one per wrapping), so
   * that such calls are counted together. Never a namespace. @default a random scope per call
   */
  readonly fallbackScope?: string | undefined;
}

/**
 * The binding of a host tool that may carry MCP annotations (an AI SDK tool, a Mastra tool), read
 * once when it is wrapped: its description, its effect (the adapter's `toolEffects`, else the
 * annotations when trusted, else the plugin decides), the adapter's `namespace`, and whether its
 * `inputSchema` declares the idempotency key argument.
 */
export function annotatedBinding<Ask>(
  plugin: RetryReflectPlugin,
  options: CheckedAnnotatedToolOptions<Ask>,
  toolName: string,
  tool: { readonly description?: unknown; readonly inputSchema?: unknown },
  annotations: unknown,
): ToolCallBinding<Ask> {
  return {
    toolName,
    description: typeof tool.description === "string" ? tool.description : undefined,
    toolType: "function",
    effect: hintedEffect(plugin, options.toolEffects, options.trustAnnotations, toolName, annotations),
    declaresKey: declaresField(tool.inputSchema, keyFieldOf(plugin, toolName)),
    namespace: options.namespace,
  };
}

/**
 * The base of every adapter's tool call, as the adapter hands it to the seam (`runToolCall`): the
 * binding's fields, the call's scope and namespace, and a `ZodError` the tool threw read as
 * `INVALID_ARGUMENTS`. An adapter adds the call id, the signal, how its options' functions see the
 * call (`ask`), the run its host tells the call belongs to (`runScope`), and how its tool runs.
 *
 * Defaults, so that one wrapper made at start-up and shared by every request never replays one
 * user's write to another: the scope is the `scope` option's, else the call's run's (`runScope`),
 * else the wrapper's own (`fallbackScope`: attempts of calls whose run cannot be told are counted
 * together); the namespace is the `namespace` option's, else the `scope` option's, else the call's
 * run's (`runNamespace`), else the call's own (a random one per call: no stored result, and no
 * derived key, is shared with any other call). The options' functions are asked only when the
 * plugin needs them (the namespace for a write only), each at most once per call.
 */
export abstract class BoundToolCall<Ask, B extends ScopedToolCallBinding<Ask> = ScopedToolCallBinding<Ask>>
  implements HostToolCall<unknown>
{
  readonly toolName: string;
  readonly description: string | undefined;
  readonly toolType: string | undefined;
  readonly effect: ToolEffect | undefined;
  readonly declaresKey: boolean | undefined;
  abstract readonly callId: string | undefined;
  abstract readonly signal: AbortSignal | undefined;
  private placedScope: string | undefined = undefined;

  constructor(
    protected readonly binding: B,
    readonly args: unknown,
  ) {
    this.toolName = binding.toolName;
    this.description = binding.description;
    this.toolType = binding.toolType;
    this.effect = binding.effect;
    this.declaresKey = binding.declaresKey;
  }

  /** The attempt-tracking scope: the `scope` option's, else the call's run's, else the wrapper's. */
  scope(): string {
    if (this.placedScope === undefined) {
      const option = this.binding.scope;
      if (option === undefined) this.placedScope = this.runScope() ?? this.binding.fallbackScope ?? randomScope("call");
      else this.placedScope = typeof option === "string" ? option : this.ask(option);
    }
    return this.placedScope;
  }

  /** Whose writes these are: the `namespace` option's, else the `scope` option's, else the call's run's, else the call's own. */
  namespace(): string {
    const { namespace, scope } = this.binding;
    if (namespace !== undefined) return typeof namespace === "string" ? namespace : this.ask(namespace);
    if (scope !== undefined) return this.scope();
    return this.runNamespace() ?? randomScope("call");
  }

  /** A `ZodError` the tool threw itself names the bad fields (`INVALID_ARGUMENTS`); anything else is classified as it is. */
  async readThrown(error: unknown, args: unknown): Promise<ThrownReading> {
    return { failure: zodArgumentsError(error, args) ?? error };
  }

  /**
   * The scope of the run the host tells this call belongs to (one agent run), or undefined when it
   * cannot be told (a tool called by hand). The same for every call of one run, never the same for
   * two runs. @default undefined: an adapter whose host has runs tells them
   */
  protected runScope(): string | undefined {
    return undefined;
  }

  /**
   * Whose writes the call's are when no option says: the run's, or undefined when it cannot be told
   * (then the call's own). Never the same for two runs. @default the `runScope()`: an adapter whose
   * host tells runs apart only well enough to keep writes apart (the AI SDK) tells it here alone
   */
  protected runNamespace(): string | undefined {
    return this.runScope();
  }

  /** A `scope` or `namespace` function's answer for this call. */
  protected abstract ask(fn: Ask): string;
  /** Runs the host's tool once with these arguments (the model's, or corrected ones). */
  abstract run(args: unknown, context: ToolContext): Promise<unknown>;
}
