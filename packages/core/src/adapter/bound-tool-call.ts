import type { ToolContext } from "../config/options.js";
import type { ToolEffect } from "../outcome.js";
import type { HostToolCall } from "./run-tool-call.js";
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

/**
 * One host tool call, as an adapter hands it to the seam (`runToolCall`): the binding's fields,
 * the namespace (a closure only when the option is a function, asked for writes only), and a
 * `ZodError` the tool threw read as `INVALID_ARGUMENTS`. An adapter adds the call id, the signal,
 * its scope and how its tool runs. A class, so that a call costs one object.
 */
export abstract class BoundToolCall<Ask, B extends ToolCallBinding<Ask> = ToolCallBinding<Ask>> implements HostToolCall<unknown> {
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
    this.namespace = typeof namespace === "function" ? () => this.askNamespace(namespace as Ask) : (namespace as string | undefined);
  }

  /** Read once per tool: a write without the key argument gets a derived key. On the prototype: no field per call. */
  get declaresKey(): boolean | undefined {
    return this.binding.declaresKey;
  }

  /** A `ZodError` the tool threw itself names the bad fields (`INVALID_ARGUMENTS`); anything else is classified as it is. */
  failureOfThrown(error: unknown, args: unknown): unknown {
    return zodArgumentsError(error, args) ?? error;
  }

  /** The namespace option's answer for this call (asked only for a write). */
  protected abstract askNamespace(ask: Ask): string;
  /** The attempt-tracking scope, asked only when the plugin needs it. */
  abstract scope(): string;
  abstract run(args: unknown, context: ToolContext): unknown;
}
