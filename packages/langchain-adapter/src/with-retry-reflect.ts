import type { CallbackManagerForToolRun } from "@langchain/core/callbacks/manager";
import type { ToolCall as LangChainToolCall } from "@langchain/core/messages/tool";
import { StructuredTool, type StructuredToolCallInput, type ToolReturnType, type ToolRunnableConfig } from "@langchain/core/tools";
import type { RetryReflectOptions, RetryReflectPlugin, ToolEffect } from "@retry-reflect/core";
import { pluginOf } from "@retry-reflect/core/adapter/options";
import { checkAdapterOptions } from "./adapter-options.js";
import { LangChainHostCall, langChainBinding, type ToolContextMode } from "./run-tool.js";
import { runMarkerOfState, threadIdOf } from "./scope.js";
import { effectOf } from "./tool-effect.js";

/** What a custom `scope` function of `withRetryReflect` sees. */
export interface ToolScopeInput {
  /** `configurable.thread_id` of the config the tool was invoked with. */
  readonly threadId: string | undefined;
  /** The run marker found in the graph state passed to the tool (see README), if any. */
  readonly runId: string | undefined;
  /** The config the tool was invoked with. */
  readonly config: ToolRunnableConfig | undefined;
}

/** A `scope` or `namespace` option of `withRetryReflect`: one non-empty string, or a function of the call. */
export type ToolScopeOption = string | ((input: ToolScopeInput) => string);

export interface WithRetryReflectOptions {
  /** The tool's effect; wins over the plugin's `toolEffects` and the tool's `metadata.effect`. */
  readonly effect?: ToolEffect;
  /**
   * The attempt-tracking scope of a call: a string shared by every call, or a function of the call.
   * @default `${threadId}/${runId}` on a thread; a random scope per run without a thread (told by its human message object); a random scope per call when there is neither
   */
  readonly scope?: ToolScopeOption;
  /**
   * Whose writes these are: a stored write result is replayed only within it. A string, or a
   * function of the call (asked only for a `write`). @default `thread/${threadId}` when the call has a thread id, else the scope
   */
  readonly namespace?: ToolScopeOption;
  /** Whether the tool can read `getToolContext()`: `"writes"` (only when its effect is `write`) or `"all"`. @default "writes" */
  readonly toolContext?: ToolContextMode;
}

/** The tool `withRetryReflect` returns: the wrapped tool's name, description, schema and metadata. */
export class RetryReflectTool<
  SchemaT = unknown,
  SchemaOutputT = unknown,
  SchemaInputT = unknown,
  ToolOutputT = unknown,
> extends StructuredTool<SchemaT, SchemaOutputT, SchemaInputT, ToolOutputT> {
  static override lc_name(): string {
    return "RetryReflectTool";
  }

  name: string;
  description: string;
  schema: SchemaT;
  /** The wrapped tool. */
  readonly tool: StructuredTool<SchemaT, SchemaOutputT, SchemaInputT, ToolOutputT>;
  readonly plugin: RetryReflectPlugin;
  private readonly wrapOptions: WithRetryReflectOptions;

  /** @internal The `effect` option. */
  get effectOption(): ToolEffect | undefined {
    return this.wrapOptions.effect;
  }

  /** @internal The `scope` option. */
  get scopeOption(): WithRetryReflectOptions["scope"] {
    return this.wrapOptions.scope;
  }

  /** @internal The `namespace` option. */
  get namespaceOption(): WithRetryReflectOptions["namespace"] {
    return this.wrapOptions.namespace;
  }

  /** @internal The `toolContext` option. */
  get toolContextOption(): ToolContextMode | undefined {
    return this.wrapOptions.toolContext;
  }

  constructor(
    tool: StructuredTool<SchemaT, SchemaOutputT, SchemaInputT, ToolOutputT>,
    plugin: RetryReflectPlugin,
    options: WithRetryReflectOptions = {},
  ) {
    super({
      metadata: tool.metadata,
      responseFormat: tool.responseFormat,
      verboseParsingErrors: tool.verboseParsingErrors,
      tags: tool.tags,
      extras: tool.extras,
    });
    this.name = tool.name;
    this.description = tool.description;
    this.schema = tool.schema;
    this.returnDirect = tool.returnDirect;
    this.tool = tool;
    this.plugin = plugin;
    this.wrapOptions = options;
  }

  /**
   * `invoke` (inherited) lands here with the tool call, if any, in `config.toolCall`. Runs the
   * wrapped tool through the plugin: its own result on success; on `reflect`/`failed`, an error
   * `ToolMessage` when invoked with a tool call (as `ToolNode` and `createAgent` do), else the
   * outcome's message as a string. Interrupts and aborts are rethrown untouched.
   */
  override async call<TArg extends StructuredToolCallInput<SchemaT, SchemaInputT>, TConfig extends ToolRunnableConfig | undefined>(
    arg: TArg,
    configArg?: TConfig,
  ): Promise<ToolReturnType<TArg, TConfig, ToolOutputT>> {
    const config =
      typeof configArg === "object" && configArg !== null && !Array.isArray(configArg)
        ? (configArg as ToolRunnableConfig & { toolCall?: LangChainToolCall; toolCallId?: unknown; state?: unknown })
        : undefined;
    const { toolCall, ...innerConfig } = config ?? {};
    const args: unknown = arg;
    const callId = toolCall?.id ?? (typeof config?.toolCallId === "string" ? config.toolCallId : undefined);
    const wrapped = new WrappedToolCall(this, args, callId, config, toolCall, innerConfig);
    const output = await wrapped.result(toolCall !== undefined);
    return output as ToolReturnType<TArg, TConfig, ToolOutputT>;
  }

  /** Not reached through `invoke`/`call` (overridden above); runs the wrapped tool as `call` does. */
  protected async _call(
    arg: SchemaOutputT,
    _runManager?: CallbackManagerForToolRun,
    parentConfig?: ToolRunnableConfig,
  ): Promise<ToolOutputT> {
    return (await this.call(arg as unknown as StructuredToolCallInput<SchemaT, SchemaInputT>, parentConfig)) as ToolOutputT;
  }
}

/**
 * Wraps any LangChain tool so that its calls go through the plugin, for LangGraph's prebuilt
 * `ToolNode` and other agents that run tools themselves. The returned tool keeps the name,
 * description, schema and metadata of `tool`; it is a new `StructuredTool` (`RetryReflectTool`).
 *
 * ```ts
 * const tools = [withRetryReflect(getWeather, plugin), withRetryReflect(sendEmail, plugin, { effect: "write" })];
 * const graph = new StateGraph(MessagesAnnotation).addNode("tools", new ToolNode(tools)) // ...
 * ```
 */
export function withRetryReflect<SchemaT, SchemaOutputT, SchemaInputT, ToolOutputT>(
  tool: StructuredTool<SchemaT, SchemaOutputT, SchemaInputT, ToolOutputT>,
  pluginOrOptions: RetryReflectPlugin | RetryReflectOptions,
  options: WithRetryReflectOptions = {},
): RetryReflectTool<SchemaT, SchemaOutputT, SchemaInputT, ToolOutputT> {
  if (typeof tool !== "object" || tool === null || typeof tool.invoke !== "function" || typeof tool.name !== "string") {
    throw new TypeError(
      `withRetryReflect: expected a LangChain tool (with name and invoke), received ${tool === null ? "null" : typeof tool}`,
    );
  }
  checkAdapterOptions(options);
  return new RetryReflectTool(tool, pluginOf(pluginOrOptions), options);
}

type WrappedConfig = ToolRunnableConfig & { toolCall?: LangChainToolCall; toolCallId?: unknown; state?: unknown };

/** One call of a `RetryReflectTool`: the wrapped tool is invoked with the (maybe corrected) arguments. */
class WrappedToolCall extends LangChainHostCall<unknown, (input: ToolScopeInput) => string> {
  constructor(
    private readonly owner: RetryReflectTool<unknown, unknown, unknown, unknown>,
    args: unknown,
    callId: string | undefined,
    private readonly config: WrappedConfig | undefined,
    private readonly toolCall: LangChainToolCall | undefined,
    private readonly innerConfig: ToolRunnableConfig,
  ) {
    const { plugin, name: toolName, tool } = owner;
    const effect = owner.effectOption ?? effectOf(toolName, tool, plugin.options.toolEffects) ?? plugin.effectOf(toolName);
    const binding = langChainBinding(
      plugin,
      { toolName, description: owner.description, effect, schema: tool.schema },
      { scope: owner.scopeOption, namespace: owner.namespaceOption },
    );
    super(plugin, binding, args, callId, config?.signal, tool.schema, owner.toolContextOption);
  }

  protected threadId(): string | undefined {
    return threadIdOf(this.config?.configurable);
  }

  protected graphState(): unknown {
    return this.config?.state;
  }

  protected ask(fn: (input: ToolScopeInput) => string): string {
    return fn({ threadId: this.threadId(), runId: runMarkerOfState(this.config?.state).id, config: this.config });
  }

  protected invoke(args: unknown): Promise<unknown> {
    const input = this.toolCall !== undefined ? { ...this.toolCall, args } : args;
    return this.owner.tool.invoke(input as never, this.innerConfig) as Promise<unknown>;
  }
}
