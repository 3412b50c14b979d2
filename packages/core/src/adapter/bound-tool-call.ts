import type { ThrownReading } from "../call/tool-call.js";
import type { ToolContext } from "../config/options.js";
import type { ToolEffect } from "../outcome.js";
import type { RetryReflectPlugin } from "../plugin.js";
import { hintedEffect } from "./effect-hints.js";
import { type CheckedAnnotatedToolOptions, randomScope } from "./host-options.js";
import type { HostToolCall } from "./run-tool-call.js";
import { declaresField, keyFieldOf } from "./schema-fields.js";
import { zodArgumentsError } from "./tool-failures.js";

/** What one wrapped tool knows once, for all its calls: the part of an adapter's binding the seam reads. */
export interface ToolCallBinding<Ask> {
  readonly toolName: string;
  readonly description: string | undefined;
  /** The tool's GenAI type (`gen_ai.tool.type`). @default "function" */
  readonly toolType?: string;
  /** The adapter's effect for the tool; undefined lets the plugin decide. */
  readonly effect: ToolEffect | undefined;
  /** Whether the tool's schema declares the idempotency key argument (undefined: it cannot be told). */
  readonly declaresKey: boolean | undefined;
  /**
   * The adapter's `namespace` option: a string, a function of the call (`Ask`), or undefined (the
   * scope when the `scope` option or the call's run gives one; else the call's own, see {@link BoundToolCall}).
   */
  readonly namespace: string | Ask | undefined;
}

/** A binding with the adapter's `scope` option: what {@link BoundToolCall} needs to find a call's scope. */
export interface ScopedToolCallBinding<Ask> extends ToolCallBinding<Ask> {
  /** The adapter's `scope` option: a string, a function of the call (`Ask`), or undefined (the call's default scope). */
  readonly scope: string | Ask | undefined;
  /** The wrapper's own scope (a random one per wrapping): the attempt-tracking scope of a call whose run cannot be told. Never a namespace. */
  readonly fallbackScope: string;
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
    effect: hintedEffect(plugin, options.toolEffects, options.trustAnnotations, toolName, annotations),
    declaresKey: declaresField(tool.inputSchema, keyFieldOf(plugin, toolName)),
    namespace: options.namespace,
  };
}

/**
 * One host tool call, as an adapter hands it to the seam (`runToolCall`): the binding's fields,
 * the scope and the namespace (the options' functions asked about the call, `ask`, only when the
 * plugin needs them; the namespace for writes only), and a `ZodError` the tool threw read as
 * `INVALID_ARGUMENTS`. An adapter adds the call id, the signal, how its options' functions see the
 * call, the run its host tells the call belongs to (`runScope`), and how its tool runs. A class, so
 * that a call costs one object.
 *
 * Defaults, so that one wrapper made at start-up and shared by every request never replays one
 * user's write to another: the scope is the `scope` option's, else the call's run's (`runScope`),
 * else the wrapper's own (attempts of calls whose run cannot be told are counted together); the
 * namespace is the `namespace` option's, else the `scope` option's, else the call's run's
 * (`runNamespace`), else the call's own (a random one per call: no stored result, and no derived
 * key, is shared with any other call).
 */
export abstract class BoundToolCall<Ask, B extends ScopedToolCallBinding<Ask> = ScopedToolCallBinding<Ask>>
  implements HostToolCall<unknown>
{
  readonly toolName: string;
  readonly description: string | undefined;
  readonly toolType: string;
  readonly effect: ToolEffect | undefined;
  readonly namespace: string | (() => string) | undefined;
  abstract readonly callId: string | undefined;
  abstract readonly signal: AbortSignal | undefined;

  constructor(
    protected readonly binding: B,
    readonly args: unknown,
  ) {
    this.toolName = binding.toolName;
    this.description = binding.description;
    this.toolType = binding.toolType ?? "function";
    this.effect = binding.effect;
    const namespace = binding.namespace;
    this.namespace =
      typeof namespace === "function"
        ? () => this.ask(namespace as Ask)
        : namespace === undefined && binding.scope === undefined
          ? () => this.runNamespace() ?? randomScope("call")
          : (namespace as string | undefined);
  }

  /** Read once per tool: a write without the key argument gets a derived key. On the prototype: no field per call. */
  get declaresKey(): boolean | undefined {
    return this.binding.declaresKey;
  }

  /** A `ZodError` the tool threw itself names the bad fields (`INVALID_ARGUMENTS`); anything else is classified as it is. */
  readThrown(error: unknown, args: unknown): ThrownReading {
    return { failure: zodArgumentsError(error, args) ?? error };
  }

  /** The attempt-tracking scope, asked only when the plugin needs it: the `scope` option's, else the call's run's, else the wrapper's. */
  scope(): string {
    const scope = this.binding.scope;
    if (typeof scope === "string") return scope;
    return scope === undefined ? (this.runScope() ?? this.binding.fallbackScope) : this.ask(scope);
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

  /** A `scope` or `namespace` function's answer for this call (the namespace's asked only for a write). */
  protected abstract ask(fn: Ask): string;
  abstract run(args: unknown, context: ToolContext): unknown;
}
