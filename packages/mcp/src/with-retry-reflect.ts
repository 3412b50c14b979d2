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
  type HostOutcome,
  type HostToolCall,
  runToolCall,
  type ThrownReading,
  withToolContext,
} from "@retry-reflect/core/adapter";
import { declaresKey, isRecord, pluginOf, randomScope } from "@retry-reflect/core/adapter/options";
import { type CheckedOptions, checkAdapterOptions, type McpCallInfo, type RetryReflectMcpOptions } from "./adapter-options.js";
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

  // Asked by the core for a write only: does the listed `inputSchema` hold the key argument?
  const keyDeclared = (toolName: string, effect: ToolEffect | undefined): boolean | undefined =>
    declaresKey(plugin, toolName, effect ?? plugin.effectOf(toolName), hints?.schemaOf(toolName));

  const run = (
    params: CallToolParams,
    resultSchema: CallToolResultSchema,
    requestOptions: CallToolOptions,
    effect: ToolEffect | undefined,
  ) =>
    runToolCall(
      plugin,
      new McpToolCall(
        client,
        params,
        resultSchema,
        requestOptions,
        effect,
        scopeOf(options.scope, defaultScope, params),
        namespaceOf(options, params),
        keyDeclared,
      ),
      present,
    );

  // Not an async function: a healthy call whose effect is known (given, or its listing loaded) goes
  // straight to the seam, with no frame of its own waiting on a lookup.
  const callTool = (params: CallToolParams, resultSchema?: CallToolResultSchema, requestOptions?: CallToolOptions) => {
    try {
      const toolName = isRecord(params) ? params.name : undefined;
      // Not ours to handle (or not a call the client will accept): the client's own behaviour, errors included.
      if (typeof toolName !== "string" || !plugin.isInScope(toolName)) return client.callTool(params, resultSchema, requestOptions);
      const known = options.toolEffects[toolName] ?? plugin.options.toolEffects[toolName];
      if (known !== undefined || hints === undefined || hints.loaded)
        return run(params, resultSchema, requestOptions, known ?? hints?.cached(toolName));
      return hints.effectOf(toolName, requestOptions?.signal).then((effect) => run(params, resultSchema, requestOptions, effect));
    } catch (error) {
      return Promise.reject(error);
    }
  };

  const listTools: Client["listTools"] = async (params, requestOptions) => {
    const listed = await client.listTools(params, requestOptions);
    hints?.remember(listed, params?.cursor === undefined);
    return listed;
  };

  return { callTool: callTool as Client["callTool"], listTools, client, plugin };
}

/** A scope (or namespace) option as the seam reads it: a string, or a function asked only when needed. */
function scopeOf(scope: CheckedOptions["scope"], defaultScope: string, params: CallToolParams): string | (() => string) {
  if (scope === undefined) return defaultScope;
  if (typeof scope === "string") return scope;
  return () => scope({ toolName: params.name, args: params.arguments, params } satisfies McpCallInfo);
}

/**
 * A call's namespace as the seam reads it (asked only for a write): the `namespace` option's; else
 * undefined, the scope, when the `scope` option gives one; else the call's own, a random one. An MCP
 * client tells no runs and no callers, and one wrapped client may serve every user of a process:
 * its own scope is never a namespace, so that no write's stored result (and no key derived from a
 * call) is shared with another call unless the options say whose calls share it.
 */
function namespaceOf(options: CheckedOptions, params: CallToolParams): string | (() => string) | undefined {
  if (options.namespace !== undefined) return scopeOf(options.namespace, "", params);
  return options.scope === undefined ? ownNamespace : undefined;
}

/** The namespace of a call no option places: its own. */
function ownNamespace(): string {
  return randomScope("mcp/call");
}

/** The caller gets the server's result on success, an `isError` result for reflect/failed (keeping what the server's failed result carried). */
function present(outcome: HostOutcome<CallToolResponse>, call: HostToolCall<CallToolResponse>): CallToolResponse {
  if (outcome.status === "success" || outcome.status === "passthrough") return outcome.value;
  return outcomeResult(outcome, (call as McpToolCall).returned);
}

function isControlFlow(error: unknown): boolean {
  return isRecord(error) && error.code === URL_ELICITATION_REQUIRED;
}

/** One `callTool` as the seam (`@retry-reflect/core/adapter`) runs it. */
class McpToolCall implements HostToolCall<CallToolResponse> {
  readonly toolName: string;
  readonly args: unknown;
  readonly signal: AbortSignal | undefined;
  /** What the call's last attempt returned (undefined while it runs, or when it threw): the caller keeps its content on a failure. */
  returned: unknown = undefined;

  constructor(
    private readonly client: McpClientLike,
    private readonly params: CallToolParams,
    private readonly resultSchema: CallToolResultSchema,
    private readonly requestOptions: CallToolOptions,
    readonly effect: ToolEffect | undefined,
    readonly scope: string | (() => string),
    readonly namespace: string | (() => string) | undefined,
    private readonly keyDeclared: (toolName: string, effect: ToolEffect | undefined) => boolean | undefined,
  ) {
    this.toolName = params.name;
    this.args = params.arguments;
    this.signal = requestOptions?.signal;
  }

  /** Whether the server's listed `inputSchema` declares the idempotency key argument: without it, a write gets a derived key. */
  get declaresKey(): boolean | undefined {
    return this.keyDeclared(this.toolName, this.effect);
  }

  /** Calls the tool once: the attempt's signal cancels the request (`notifications/cancelled`); the caller's abort wins over what the SDK reports. */
  run(args: unknown, context: ToolContext): Promise<CallToolResponse> {
    this.returned = undefined;
    // The attempt's signal as `options.signal` (under the default limit, made only when the client reads it).
    const sent = this.client.callTool(
      this.paramsFor(args, context.idempotencyKey),
      this.resultSchema,
      withToolContext(this.requestOptions, context, "signal"),
    );
    // No caller's signal to check afterwards: the client's promise as it is, no frame of ours.
    return this.signal === undefined ? sent : this.callerAbortWins(sent, this.signal);
  }

  /** A URL elicitation the server requires is the client's control flow, rethrown as thrown; other errors are read by `failureOfThrown`. */
  readThrown(error: unknown): ThrownReading {
    return isControlFlow(error) ? { failure: error, passThrough: true } : { failure: failureOfThrown(error) };
  }

  /** Every returned value is read here first (before the plugin's `isFailure`): it is remembered as the last attempt's. */
  failureOfResult(result: CallToolResponse): Error | undefined {
    this.returned = result;
    return failureOfResult(result);
  }

  /** The SDK rejects an aborted request with an `McpError` -32001, as it does a timeout: the caller's abort is checked first. */
  private async callerAbortWins(sent: Promise<CallToolResponse>, callerSignal: AbortSignal): Promise<CallToolResponse> {
    try {
      return await sent;
    } catch (error) {
      if (callerSignal.aborted) throw abortReason(callerSignal);
      throw error;
    }
  }

  private paramsFor(args: unknown, idempotencyKey: string | undefined): CallToolParams {
    const { params } = this;
    if (args === params.arguments && idempotencyKey === undefined) return params;
    const next: CallToolParams = { ...params, arguments: args as CallToolParams["arguments"] };
    if (idempotencyKey !== undefined) next._meta = { ...params._meta, [IDEMPOTENCY_META_KEY]: idempotencyKey };
    return next;
  }
}
