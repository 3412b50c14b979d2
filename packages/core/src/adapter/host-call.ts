import { ENGINE, type Engine, type EngineCall, isInScope, type ThrownReading } from "../call/call.js";
import { runHostCall } from "../call/run-call.js";
import type { ToolContext } from "../config/options.js";
import type { FailedOutcome, ReflectOutcome, SuccessOutcome, ToolEffect } from "../outcome.js";
import type { RetryReflectPlugin } from "../plugin.js";
import {
  type CheckedAnnotatedToolOptions,
  declaresField,
  type EffectHints,
  effectOfAnnotations,
  keyFieldOf,
  randomScope,
} from "./host-options.js";
import { zodArgumentsError } from "./tool-failures.js";

/** One tool call of a host framework, as an adapter hands it over: the tool's `this` and its hooks'. */
export interface HostToolCall<R> {
  readonly toolName: string;
  /** The model's arguments. */
  readonly args: unknown;
  /** The model's tool-call id. */
  readonly callId?: string;
  /** The run's signal: aborts waits; the run's abort reason is what an aborted call rejects with. */
  readonly signal?: AbortSignal;
  /** For telemetry (`gen_ai.tool.description`), when the host knows it. */
  readonly description?: string;
  /** For telemetry (`gen_ai.tool.type`: `"function"`, ...). */
  readonly toolType?: string;
  /** The tool's effect, when the host knows it (its metadata); else the plugin's `toolEffects` / `defaultEffect`. */
  readonly effect?: ToolEffect;
  /** Whether the tool's schema declares the idempotency key argument (`ToolCall.declaresKey`). @default undefined (the plugin's rule) */
  readonly declaresKey?: boolean;
  /** The attempt-tracking scope (one agent run); a function is called only when the plugin needs a scope. */
  readonly scope?: string | (() => string);
  /** Whose writes these are (`ToolCall.namespace`); a function is called only for a `write`. @default the scope */
  readonly namespace?: string | (() => string);
  /**
   * A returned value that reports a failure (an error tool message): the failure to classify, else
   * undefined. It replaces the core's own test of returned failures (`isReturnedFailure`): it should
   * recognise those shapes too if the host's tools can return them.
   */
  readonly failureOfResult?: (result: NoInfer<R>) => unknown;
  /**
   * What the host makes of an error its tool threw, read once per failed attempt (not for the core's
   * own attempt timeout): the failure to classify, whether it is the host's control flow (rethrown
   * untouched, never counted), and the host's "retry or not" mark (the default of `shouldRetry`).
   * A reader that rejects leaves the error as thrown. @default the error as thrown, no control flow, no mark
   */
  readonly readThrown?: (error: unknown, args: unknown) => Promise<ThrownReading>;
  /** Runs the host's tool once with these arguments (the model's, or corrected ones); called with the call as `this`. */
  readonly run: (args: unknown, context: ToolContext) => Promise<R> | R;
}

/**
 * - `success`: the tool's own result (`replayed` when the idempotency store answered);
 * - `passthrough`: the plugin does not handle this tool: the host's result goes back unchanged;
 * - `reflect` / `failed`: give `message` to the model as the tool's result.
 */
export type HostOutcome<R> = SuccessOutcome<R> | { readonly status: "passthrough"; readonly value: R } | ReflectOutcome | FailedOutcome;

/**
 * Runs a host's tool call under the plugin, on the core's one path; the adapter's own code is then
 * only glue. With `present`, the promise resolves to `present(outcome, call)` (the host's result:
 * its tool message, its value) instead of the outcome; `present` can be one function made once.
 */
export function runToolCall<R>(plugin: RetryReflectPlugin, call: HostToolCall<R>): Promise<HostOutcome<R>>;
export function runToolCall<R, P>(
  plugin: RetryReflectPlugin,
  call: HostToolCall<R>,
  present: (outcome: HostOutcome<R>, call: HostToolCall<R>) => P,
): Promise<P>;
export async function runToolCall<R, P>(
  plugin: RetryReflectPlugin,
  call: HostToolCall<R>,
  present?: (outcome: HostOutcome<R>, call: HostToolCall<R>) => P,
): Promise<HostOutcome<R> | P> {
  const engine = (plugin as unknown as { [ENGINE]?: Engine })[ENGINE];
  if (engine === undefined) throw new TypeError("runToolCall: expected a RetryReflectPlugin");
  // A tool the plugin does not handle: one plain call, its result as it is, its error untouched.
  const outcome: HostOutcome<R> = isInScope(engine.options, call.toolName)
    ? await runHostCall(engine, call as EngineCall, call.run)
    : {
        status: "passthrough",
        value: await call.run(call.args, { attempt: 1, signal: call.signal, toolName: call.toolName, callId: call.callId }),
      };
  return present === undefined ? outcome : present(outcome, call);
}

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
  /** The scope of a call whose run cannot be told (never a namespace). @default a random scope per call */
  readonly fallbackScope?: string | undefined;
}

/**
 * The binding of a host tool that may carry MCP annotations (an AI SDK tool, a Mastra tool), read
 * once when it is wrapped: its effect is the adapter's `toolEffects`, else the annotations when
 * trusted and the plugin's `toolEffects` does not name the tool, else the plugin's to decide (its
 * `tools[name].effect`, `defaultEffect`).
 */
export function annotatedBinding<Ask>(
  plugin: RetryReflectPlugin,
  options: CheckedAnnotatedToolOptions<Ask>,
  toolName: string,
  tool: { readonly description?: unknown; readonly inputSchema?: unknown },
  annotations: unknown,
): ToolCallBinding<Ask> {
  const hinted = options.trustAnnotations && plugin.options.toolEffects[toolName] === undefined;
  return {
    toolName,
    description: typeof tool.description === "string" ? tool.description : undefined,
    toolType: "function",
    effect: options.toolEffects[toolName] ?? (hinted ? effectOfAnnotations(annotations as EffectHints | undefined) : undefined),
    declaresKey: declaresField(tool.inputSchema, keyFieldOf(plugin, toolName)),
    namespace: options.namespace,
  };
}

/**
 * The base of every adapter's tool call: the binding's fields, the call's scope and namespace, and
 * a `ZodError` the tool threw read as `INVALID_ARGUMENTS`.
 *
 * So that one wrapper shared by every request never replays one user's write to another: the scope
 * is the `scope` option's, else the call's run's, else the wrapper's own (`fallbackScope`); the
 * namespace is the `namespace` option's, else the `scope` option's, else the call's run's
 * (`runNamespace`), else the call's own (random: nothing stored is shared). The options' functions
 * are asked only when the plugin needs them (the namespace for a write only), at most once per call.
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

  scope(): string {
    if (this.placedScope === undefined) {
      const option = this.binding.scope;
      if (option === undefined) this.placedScope = this.runScope() ?? this.binding.fallbackScope ?? randomScope("call");
      else this.placedScope = typeof option === "string" ? option : this.ask(option);
    }
    return this.placedScope;
  }

  namespace(): string {
    const { namespace, scope } = this.binding;
    if (namespace !== undefined) return typeof namespace === "string" ? namespace : this.ask(namespace);
    if (scope !== undefined) return this.scope();
    return this.runNamespace() ?? randomScope("call");
  }

  async readThrown(error: unknown, args: unknown): Promise<ThrownReading> {
    return { failure: zodArgumentsError(error, args) ?? error };
  }

  /**
   * The scope of the run the host tells this call belongs to (one agent run): the same for every
   * call of one run, never the same for two runs. @default undefined (it cannot be told)
   */
  protected runScope(): string | undefined {
    return undefined;
  }

  /** Whose writes the call's are when no option says (never the same for two runs). @default `runScope()` */
  protected runNamespace(): string | undefined {
    return this.runScope();
  }

  /** A `scope` or `namespace` function's answer for this call. */
  protected abstract ask(fn: Ask): string;
  /** Runs the host's tool once with these arguments (the model's, or corrected ones). */
  abstract run(args: unknown, context: ToolContext): Promise<unknown>;
}
