import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import {
  InvalidOptionError,
  type RetryReflectOptions,
  type RetryReflectPlugin,
  type ToolContext,
  type ToolEffect,
} from "@retry-reflect/core";
import {
  abortReason,
  BoundToolCall,
  type HostOutcome,
  type HostToolCall,
  runToolCall,
  type ScopedToolCallBinding,
  type ThrownReading,
  withToolContext,
} from "@retry-reflect/core/adapter";
import { declaresKey, isRecord, pluginOf, randomScope } from "@retry-reflect/core/adapter/options";
import { checkAdapterOptions, type McpCallInfo, type RetryReflectMcpOptions } from "./adapter-options.js";
import type { CallToolOptions, CallToolParams, CallToolResponse, CallToolResultSchema, McpClientLike } from "./mcp-types.js";
import { outcomeResult } from "./outcome-result.js";
import { failureOfResult, failureOfThrown } from "./to-failure.js";
import { ToolHints } from "./tool-annotations.js";

/** The `_meta` key under which a call's idempotency key is forwarded to the server. */
export const IDEMPOTENCY_META_KEY = "io.retry-reflect/idempotency-key";

/** The MCP error code of `UrlElicitationRequiredError`: the server asks the client to act, not a tool failure. */
const URL_ELICITATION_REQUIRED = -32042;

/** What `withRetryReflect` returns: `callTool` under the plugin, `listTools` passed through. */
export interface RetryReflectClient<C extends McpClientLike = Client> {
  /**
   * `Client.callTool`, run under the plugin: a success is the server's result, untouched; a
   * `reflect` / `failed` outcome is an `isError: true` result whose text is the outcome's message
   * and whose `structuredContent` is the structured error, keeping the other content blocks,
   * `_meta` and `structuredContent` of the server's failed result (see `outcomeResult`). Rejects
   * only with the caller's abort reason, errors of tools the plugin does not handle, and control
   * flow (URL elicitation).
   */
  readonly callTool: Client["callTool"];
  /** `Client.listTools`, passed through; what it returns also refreshes the cached tool annotations. */
  readonly listTools: Client["listTools"];
  /** The wrapped client, for everything else (resources, prompts, `close()`). */
  readonly client: C;
  /** The plugin the calls run under (its circuits: `plugin.circuits.state(name)`). */
  readonly plugin: RetryReflectPlugin;
}

/**
 * Wraps an MCP `Client` so that its tool calls recover from failure the way a careful engineer
 * would: a transient failure (a timeout, HTTP 503 in the error text) is retried in place after a
 * backoff; bad arguments come back as a reflection prompt so that the model corrects them; a broken
 * tool trips its circuit breaker; a retried write never runs twice.
 *
 * ```ts
 * const tools = withRetryReflect(client, { maxRetries: 3 });
 * const result = await tools.callTool({ name: "get_weather", arguments: { city: "nyc" } });
 * ```
 *
 * - `isError` results are failures (a `structuredContent` in the structured error shape keeps its
 *   `error_code`, `recoverable` and `retry_after_ms`); `InvalidParams` (-32602) is `INVALID_ARGUMENTS`;
 *   `RequestTimeout` (-32001) is a transient `TIMEOUT`, unless the caller's `options.signal` aborted.
 * - Effects: `adapterOptions.toolEffects`, else the plugin's `toolEffects` / tool policies, else the
 *   server's tool annotations (fetched with `listTools` on first need), else `defaultEffect`.
 * - Scope: one random scope per wrapped client unless `adapterOptions.scope` says otherwise. Write
 *   results are replayed within `adapterOptions.namespace`; without it, within the `scope` option's
 *   scope, and with neither option each call is its own namespace: a client wrapped once and
 *   shared by every user never replays one user's write to another (pass the conversation or
 *   tenant as `namespace` to replay a re-issued write).
 */
export function withRetryReflect<C extends McpClientLike>(
  client: C,
  pluginOrOptions: RetryReflectPlugin | RetryReflectOptions = {},
  adapterOptions?: RetryReflectMcpOptions,
): RetryReflectClient<C> {
  if (!isRecord(client) || typeof client.callTool !== "function" || typeof client.listTools !== "function") {
    throw new InvalidOptionError("client", client, "an MCP Client (an object with callTool and listTools)");
  }
  const plugin = pluginOf(pluginOrOptions);
  const options = checkAdapterOptions(adapterOptions);
  const hints = options.trustAnnotations ? new ToolHints(client) : undefined;
  const defaultScope = randomScope("mcp");

  const run = (
    params: CallToolParams,
    resultSchema: CallToolResultSchema,
    requestOptions: CallToolOptions,
    effect: ToolEffect | undefined,
  ) => {
    const toolName = params.name;
    const binding: ScopedToolCallBinding<ScopeFunction> = {
      toolName,
      effect,
      // Does the listed `inputSchema` hold the key argument? (Read by the core for a write only.)
      declaresKey: declaresKey(plugin, toolName, effect ?? plugin.effectOf(toolName), hints?.schemaOf(toolName)),
      scope: options.scope,
      namespace: options.namespace,
      fallbackScope: defaultScope,
    };
    return runToolCall(plugin, new McpToolCall(binding, client, params, resultSchema, requestOptions), present);
  };

  const callTool = async (params: CallToolParams, resultSchema?: CallToolResultSchema, requestOptions?: CallToolOptions) => {
    const toolName = isRecord(params) ? params.name : undefined;
    // Not ours to handle (or not a call the client will accept): the client's own behaviour, errors included.
    if (typeof toolName !== "string" || !plugin.isInScope(toolName)) return client.callTool(params, resultSchema, requestOptions);
    const known = options.toolEffects[toolName] ?? plugin.options.toolEffects[toolName];
    if (known !== undefined || hints === undefined) return run(params, resultSchema, requestOptions, known);
    return run(params, resultSchema, requestOptions, await hints.effectOf(toolName, requestOptions?.signal));
  };

  const listTools: Client["listTools"] = async (params, requestOptions) => {
    const listed = await client.listTools(params, requestOptions);
    hints?.remember(listed, params?.cursor === undefined);
    return listed;
  };

  return { callTool: callTool as Client["callTool"], listTools, client, plugin };
}

/** A `scope` or `namespace` option's function form. */
type ScopeFunction = (info: McpCallInfo) => string;

/** The caller gets the server's result on success, an `isError` result for reflect/failed (keeping what the server's failed result carried). */
function present(outcome: HostOutcome<CallToolResponse>, call: HostToolCall<CallToolResponse>): CallToolResponse {
  if (outcome.status === "success" || outcome.status === "passthrough") return outcome.value;
  return outcomeResult(outcome, (call as McpToolCall).returned);
}

function isControlFlow(error: unknown): boolean {
  return isRecord(error) && error.code === URL_ELICITATION_REQUIRED;
}

/**
 * One `callTool` as the seam (`@retry-reflect/core/adapter`) runs it. An MCP client tells no runs
 * and no callers, and one wrapped client may serve every user of a process: the default scope is
 * the client's own (`fallbackScope`), never a namespace, so that no write's stored result (and no
 * key derived from a call) is shared with another call unless the options say whose calls share it.
 */
class McpToolCall extends BoundToolCall<ScopeFunction> {
  readonly callId = undefined;
  readonly signal: AbortSignal | undefined;
  /** What the call's last attempt returned (undefined while it runs, or when it threw): the caller keeps its content on a failure. */
  returned: unknown = undefined;

  constructor(
    binding: ScopedToolCallBinding<ScopeFunction>,
    private readonly client: McpClientLike,
    private readonly params: CallToolParams,
    private readonly resultSchema: CallToolResultSchema,
    private readonly requestOptions: CallToolOptions,
  ) {
    super(binding, params.arguments);
    this.signal = requestOptions?.signal;
  }

  protected ask(fn: ScopeFunction): string {
    return fn({ toolName: this.toolName, args: this.params.arguments, params: this.params });
  }

  /** Calls the tool once: the attempt's signal cancels the request (`notifications/cancelled`). */
  async run(args: unknown, context: ToolContext): Promise<CallToolResponse> {
    this.returned = undefined;
    try {
      return await this.client.callTool(
        this.paramsFor(args, context.idempotencyKey),
        this.resultSchema,
        withToolContext(this.requestOptions, context, "signal"),
      );
    } catch (error) {
      // The SDK rejects an aborted request with an `McpError` -32001, as it does a timeout: the caller's abort wins.
      if (this.signal?.aborted) throw abortReason(this.signal);
      throw error;
    }
  }

  /** A URL elicitation the server requires is the client's control flow, rethrown as thrown; other errors are read by `failureOfThrown`. */
  override async readThrown(error: unknown): Promise<ThrownReading> {
    return isControlFlow(error) ? { failure: error, passThrough: true } : { failure: failureOfThrown(error) };
  }

  /** Every returned value is read here first (before the plugin's `isFailure`): it is remembered as the last attempt's. */
  failureOfResult(result: CallToolResponse): Error | undefined {
    this.returned = result;
    return failureOfResult(result);
  }

  private paramsFor(args: unknown, idempotencyKey: string | undefined): CallToolParams {
    const { params } = this;
    if (args === params.arguments && idempotencyKey === undefined) return params;
    const next: CallToolParams = { ...params, arguments: args as CallToolParams["arguments"] };
    if (idempotencyKey !== undefined) next._meta = { ...params._meta, [IDEMPOTENCY_META_KEY]: idempotencyKey };
    return next;
  }
}
