import type { ToolMessage } from "@langchain/core/messages";
import type { ToolCall as LangChainToolCall } from "@langchain/core/messages/tool";
import { type Command, getConfig } from "@langchain/langgraph";
import type { RetryReflectOptions, RetryReflectPlugin } from "@retry-reflect/core";
import type { ScopedToolCallBinding } from "@retry-reflect/core/adapter";
import { isPlugin, isRecord, pluginOf } from "@retry-reflect/core/adapter/options";
import { createMiddleware } from "langchain";
import { checkAdapterOptions } from "./adapter-options.js";
import { withoutOpenCircuitTools } from "./hide-open-circuits.js";
import { LangChainHostCall, langChainBinding, type ToolContextMode } from "./run-tool.js";
import { runMarkerOfState, threadIdOf } from "./scope.js";
import { effectOf, type ToolWithMetadata } from "./tool-effect.js";

/** What a custom `scope` function sees of a tool call. */
export interface ScopeInput {
  /** `configurable.thread_id` of the run, if the agent has a checkpointer. */
  readonly threadId: string | undefined;
  /** The run marker: the id of the run's latest human message (one per user turn; a resumed run keeps it). */
  readonly runId: string | undefined;
  /** The tool call being made. */
  readonly toolCall: LangChainToolCall;
  /** The run's context (`agent.invoke(input, { context })`, typed by `createAgent`'s `contextSchema`): where a tenant id lives. */
  readonly context: unknown;
}

/** A `scope` or `namespace` option: one non-empty string, or a function of the call. */
export type ScopeOption = string | ((input: ScopeInput) => string);

/** Options of the adapter itself (the rest configure the plugin). */
export interface RetryReflectMiddlewareOptions {
  /** The middleware's name; two instances in one agent need different names. @default "RetryReflectMiddleware" */
  readonly name?: string;
  /**
   * The attempt-tracking scope of a tool call: a string shared by every call, or a function of the call.
   * @default one agent run: `${threadId}/${runId}` on a thread (`runId` is the id of the run's latest human message); a random scope per run without a thread (told by its human message object); a random scope per call when there is neither
   */
  readonly scope?: ScopeOption;
  /**
   * Whose writes these are: a stored write result is replayed only to a call of the same namespace.
   * A string shared by every call, or a function of the call (asked only for a `write`): return the
   * tenant or conversation id when thread ids are not unique across users.
   * @default `thread/${threadId}` when the run has a thread id, else the scope
   */
  readonly namespace?: ScopeOption;
  /** Which tools can read `getToolContext()`: `"writes"` (tools whose effect is `write`) or `"all"`. @default "writes" */
  readonly toolContext?: ToolContextMode;
  /**
   * Leave tools whose circuit is open (or isolated by an operator) out of the model's request
   * (`wrapModelCall`), with a system note that names each one and about when it may be back.
   * Half-open counts as available, so that the probe can run. With `false` the middleware has no
   * `wrapModelCall` hook at all. @default false
   */
  readonly hideOpenCircuitTools?: boolean;
}

/** `retryReflectMiddleware(options)`: the plugin's options and the adapter's. */
export type RetryReflectMiddlewareConfig = RetryReflectOptions & RetryReflectMiddlewareOptions;

/** The default middleware name. */
export const DEFAULT_MIDDLEWARE_NAME = "RetryReflectMiddleware";

function splitConfig(config: RetryReflectMiddlewareConfig): { plugin: RetryReflectPlugin; adapter: RetryReflectMiddlewareOptions } {
  // Not an options object (`null`, a number, an array): `pluginOf` throws, naming `pluginOrOptions`.
  if (!isRecord(config) || Array.isArray(config)) return { plugin: pluginOf(config), adapter: {} };
  const { name, scope, namespace, toolContext, hideOpenCircuitTools, ...pluginOptions } = config as RetryReflectMiddlewareConfig;
  return { plugin: pluginOf(pluginOptions), adapter: { name, scope, namespace, toolContext, hideOpenCircuitTools } };
}

function currentThreadId(configurable: unknown): string | undefined {
  const fromRuntime = threadIdOf(configurable);
  if (fromRuntime !== undefined) return fromRuntime;
  try {
    return threadIdOf(getConfig().configurable);
  } catch {
    return undefined; // not inside a LangGraph run
  }
}

/**
 * The `createAgent` middleware: every tool call goes through the plugin.
 *
 * ```ts
 * const agent = createAgent({ model, tools, middleware: [retryReflectMiddleware({ maxRetries: 3 })] });
 * // or, to share a plugin (its breakers) between agents, or to read `circuitState()`:
 * const plugin = RetryReflectPlugin.builder().maxRetries(3).build();
 * const agent = createAgent({ model, tools, middleware: [retryReflectMiddleware(plugin)] });
 * ```
 *
 * - Scope (attempt tracking): one agent run on one thread: the thread id and the id of the run's
 *   latest human message (LangGraph gives nodes no run id); a run resumed after an interrupt keeps it.
 *   No graph node or state key is added.
 * - A thrown error and a returned `ToolMessage` with `status: "error"` are failures. Success
 *   passes the handler's result (a `ToolMessage` or a `Command`) through untouched.
 * - `reflect` / `failed` become a `ToolMessage` with `status: "error"`, the outcome's message as
 *   content and the structured error as `artifact`.
 * - LangChain's mark on a thrown error (`getRetryable`) is the default of `shouldRetry`: `false`
 *   stops the call, `true` makes it recoverable.
 * - Interrupts (`isGraphBubbleUp`) and aborts of the run are rethrown untouched, never counted.
 * - Effects: the plugin's `toolEffects`, else the tool's `metadata.effect`, else `defaultEffect`.
 * - `hideOpenCircuitTools: true`: a tool whose circuit is open is left out of the model's request,
 *   with a system note saying so; a request with no open circuit passes through untouched.
 *
 * The plugin is on the returned middleware as `.plugin`.
 */
export function retryReflectMiddleware(plugin: RetryReflectPlugin, options?: RetryReflectMiddlewareOptions): RetryReflectMiddleware;
export function retryReflectMiddleware(config?: RetryReflectMiddlewareConfig): RetryReflectMiddleware;
export function retryReflectMiddleware(
  pluginOrConfig: RetryReflectPlugin | RetryReflectMiddlewareConfig = {},
  options: RetryReflectMiddlewareOptions = {},
): RetryReflectMiddleware {
  const { plugin, adapter } = isPlugin(pluginOrConfig) ? { plugin: pluginOrConfig, adapter: options } : splitConfig(pluginOrConfig);
  checkAdapterOptions(adapter);
  return buildMiddleware(plugin, adapter);
}

/** The middleware `retryReflectMiddleware` returns: a LangChain `AgentMiddleware` with its `plugin`. */
export type RetryReflectMiddleware = ReturnType<typeof buildMiddleware>;

function buildMiddleware(plugin: RetryReflectPlugin, adapter: RetryReflectMiddlewareOptions) {
  const middleware = createMiddleware({
    name: adapter.name ?? DEFAULT_MIDDLEWARE_NAME,
    // Off (the default): no hook, so that LangChain does not even wrap the model call.
    wrapModelCall:
      adapter.hideOpenCircuitTools === true ? (request, handler) => handler(withoutOpenCircuitTools(plugin, request)) : undefined,
    wrapToolCall: (request, handler): Promise<ToolMessage | Command> => {
      const tool = request.tool as (ToolWithMetadata & { name?: string; schema?: unknown; description?: unknown }) | undefined;
      const toolName = typeof tool?.name === "string" ? tool.name : request.toolCall.name;
      const effect = effectOf(toolName, tool, plugin.options.toolEffects) ?? plugin.effectOf(toolName);
      const binding = langChainBinding(plugin, { toolName, description: tool?.description, effect, schema: tool?.schema }, adapter);
      const call = new MiddlewareToolCall(plugin, binding, tool?.schema, adapter.toolContext, request, handler);
      return call.result(true) as Promise<ToolMessage | Command>;
    },
  });
  return Object.assign(middleware, { plugin });
}

type WrapToolCall = NonNullable<Parameters<typeof createMiddleware>[0]["wrapToolCall"]>;
type ToolCallRequest = Parameters<WrapToolCall>[0];
type ToolCallHandler = Parameters<WrapToolCall>[1];

/** One tool call through the middleware: the handler runs the tool (or the rest of the chain). */
class MiddlewareToolCall extends LangChainHostCall<ToolMessage | Command, (input: ScopeInput) => string> {
  constructor(
    plugin: RetryReflectPlugin,
    binding: ScopedToolCallBinding<(input: ScopeInput) => string>,
    schema: unknown,
    toolContext: ToolContextMode | undefined,
    private readonly request: ToolCallRequest,
    private readonly handler: ToolCallHandler,
  ) {
    super(plugin, binding, request.toolCall.args, request.toolCall.id, request.runtime.signal, schema, toolContext);
  }

  protected threadId(): string | undefined {
    return currentThreadId(this.request.runtime.configurable);
  }

  protected graphState(): unknown {
    return this.request.state;
  }

  protected ask(fn: (input: ScopeInput) => string): string {
    const { request } = this;
    return fn({
      threadId: this.threadId(),
      runId: runMarkerOfState(request.state).id,
      toolCall: request.toolCall,
      context: request.runtime.context,
    });
  }

  /** The model's own arguments need no copy of the request; corrected ones (a retry) do. */
  protected invoke(args: unknown): ReturnType<ToolCallHandler> {
    const { request } = this;
    const toolCall = request.toolCall;
    return this.handler(
      args === toolCall.args ? request : { ...request, toolCall: { ...toolCall, args: args as LangChainToolCall["args"] } },
    );
  }
}
