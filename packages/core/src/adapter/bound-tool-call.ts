import type { ThrownReading } from "../call/tool-call.js";
import type { ToolContext } from "../config/options.js";
import type { ToolEffect } from "../outcome.js";
import type { RetryReflectPlugin } from "../plugin.js";
import { hintedEffect } from "./effect-hints.js";
import type { CheckedAnnotatedToolOptions } from "./host-options.js";
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
  /** The adapter's `namespace` option: a string, a function of the call (`Ask`), or undefined (the core's default: the scope). */
  readonly namespace: string | Ask | undefined;
}

/** A binding with the adapter's `scope` option: what {@link BoundToolCall} needs to find a call's scope. */
export interface ScopedToolCallBinding<Ask> extends ToolCallBinding<Ask> {
  /** The adapter's `scope` option: a string, a function of the call (`Ask`), or undefined (the call's default scope). */
  readonly scope: string | Ask | undefined;
  /** The wrapper's own scope (a random one per wrapping): the default of a call that has no run to be scoped by. */
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
 * call, its default scope where its host has runs, and how its tool runs. A class, so that a call
 * costs one object.
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
    this.namespace = typeof namespace === "function" ? () => this.ask(namespace as Ask) : (namespace as string | undefined);
  }

  /** Read once per tool: a write without the key argument gets a derived key. On the prototype: no field per call. */
  get declaresKey(): boolean | undefined {
    return this.binding.declaresKey;
  }

  /** A `ZodError` the tool threw itself names the bad fields (`INVALID_ARGUMENTS`); anything else is classified as it is. */
  readThrown(error: unknown, args: unknown): ThrownReading {
    return { failure: zodArgumentsError(error, args) ?? error };
  }

  /** The attempt-tracking scope, asked only when the plugin needs it: the `scope` option's, else the call's default. */
  scope(): string {
    const scope = this.binding.scope;
    if (typeof scope === "string") return scope;
    return scope === undefined ? this.defaultScope() : this.ask(scope);
  }

  /** The scope of a call without a `scope` option: the wrapper's own. An adapter whose host has runs gives one per run. */
  protected defaultScope(): string {
    return this.binding.fallbackScope;
  }

  /** A `scope` or `namespace` function's answer for this call (the namespace's asked only for a write). */
  protected abstract ask(fn: Ask): string;
  abstract run(args: unknown, context: ToolContext): unknown;
}
