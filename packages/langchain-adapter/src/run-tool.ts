import type { ToolMessage } from "@langchain/core/messages";
import type { RetryReflectPlugin, ToolContext, ToolEffect } from "@retry-reflect/core";
import { BoundToolCall, type HostOutcome, runToolCall, type ScopedToolCallBinding, type ThrownReading } from "@retry-reflect/core/adapter";
import { declaresKey } from "@retry-reflect/core/adapter/options";
import { runMarkerOfState, scopeKey } from "./scope.js";
import { failureOfResult, readThrown } from "./to-failure.js";
import { runWithToolContext } from "./tool-context.js";
import { outcomeToolMessage, readdressToolMessage } from "./tool-message.js";

/**
 * Which tools run with `getToolContext()` set. `"writes"` (the default): tools whose effect is
 * `write`, which need the idempotency key; `"all"`: every tool (an `AsyncLocalStorage` context per
 * call).
 */
export type ToolContextMode = "writes" | "all";

/** Does the tool's policy set an attempt limit of its own (`attemptTimeoutMs`, not 0), rather than the default limits? */
function hasAttemptTimeout(plugin: RetryReflectPlugin, toolName: string): boolean {
  const { options } = plugin;
  const policy = (options.tools.size === 0 ? undefined : options.tools.get(toolName)) ?? options;
  return !policy.defaultLimit && policy.attemptTimeoutsMs.length > 0;
}

/** What a LangChain tool is to the seam: a function tool whose effect is resolved, its description, the adapter's `scope` and `namespace` options. */
export function langChainBinding<Ask>(
  plugin: RetryReflectPlugin,
  tool: { readonly toolName: string; readonly description: unknown; readonly effect: ToolEffect; readonly schema: unknown },
  options: { readonly scope?: string | Ask | undefined; readonly namespace?: string | Ask | undefined },
): ScopedToolCallBinding<Ask> {
  const { toolName, effect } = tool;
  return {
    toolName,
    description: typeof tool.description === "string" ? tool.description : undefined,
    toolType: "function",
    effect,
    declaresKey: declaresKey(plugin, toolName, effect, tool.schema),
    scope: options.scope,
    namespace: options.namespace,
  };
}

/**
 * One LangChain tool call, as the seam (`@retry-reflect/core/adapter`) runs it: interrupts are
 * control flow, an error `ToolMessage` is a failure, a thrown schema error names the bad fields,
 * LangChain's retryable mark on a thrown error is the default of `shouldRetry` (the last three read
 * as one value, `readThrown`), and write tools, tools with `attemptTimeoutMs` (or all, with
 * `toolContext: "all"`) can read `getToolContext()`. The default scope is the agent run (its thread
 * and its latest human message), the default namespace the thread. The middleware and the tool
 * wrapper say how to invoke the tool and where the call's thread and graph state are.
 */
export abstract class LangChainHostCall<R, Ask = never> extends BoundToolCall<Ask> {
  constructor(
    readonly plugin: RetryReflectPlugin,
    binding: ScopedToolCallBinding<Ask>,
    args: unknown,
    readonly callId: string | undefined,
    readonly signal: AbortSignal | undefined,
    /** The tool's input schema, to name bad fields when the input does not parse. */
    private readonly schema: unknown,
    private readonly toolContext: ToolContextMode | undefined,
  ) {
    super(binding, args);
  }

  /** `configurable.thread_id` of the call's run, if any. */
  protected abstract threadId(): string | undefined;

  /** The graph state the call was made in: its latest human message marks the run. */
  protected abstract graphState(): unknown;

  /** Runs the tool (or the rest of the middleware chain) once with these arguments. */
  protected abstract invoke(args: unknown): Promise<R> | R;

  /** One agent run on one thread (see `scopeKey`). */
  protected override runScope(): string {
    return scopeKey(this.threadId(), runMarkerOfState(this.graphState()));
  }

  /** The `namespace` option's; else the thread (a request retried in a new run of the same thread replays), else the scope. */
  override namespace(): string {
    if (this.binding.namespace !== undefined) return super.namespace();
    const threadId = this.threadId();
    return threadId === undefined ? this.scope() : `thread/${threadId}`;
  }

  /** An error `ToolMessage` (or a structured error in one) is a failure. */
  failureOfResult(result: unknown): unknown {
    return failureOfResult(result);
  }

  /**
   * What the tool threw, read once: LangGraph control flow (an interrupt) is rethrown as thrown,
   * never a failure; a schema error names the bad fields; LangChain's mark (`getRetryable`) is the
   * default of `shouldRetry` (`false` stops the call, `true` makes it recoverable).
   */
  override readThrown(error: unknown, args: unknown): Promise<ThrownReading> {
    return readThrown(error, this.schema, args);
  }

  /** Write tools and tools with a time limit read `getToolContext()` (its key, its attempt's signal: LangChain gives the tool the run's), or all with `toolContext: "all"`. */
  async run(args: unknown, context: ToolContext): Promise<R> {
    const withContext = this.toolContext === "all" || this.effect === "write" || hasAttemptTimeout(this.plugin, this.toolName);
    return withContext ? runWithToolContext(context, () => this.invoke(args)) : this.invoke(args);
  }

  /** The outcome, for tests and hosts that branch on it. */
  outcome(): Promise<HostOutcome<R>> {
    return runToolCall(this.plugin, this) as Promise<HostOutcome<R>>;
  }

  /** What the host returns (`resultFor`): an error `ToolMessage` (`asMessage`) or text for `reflect` / `failed`. */
  async result(asMessage: boolean): Promise<R | ToolMessage | string> {
    return resultFor(await this.outcome(), this.toolName, this.callId, asMessage);
  }
}

/**
 * What the host gets back: the tool's own result on success (a replayed `ToolMessage` re-addressed
 * to this call); on `reflect` / `failed`, an error `ToolMessage` (`asMessage`) or the outcome's text.
 */
export function resultFor<R>(
  outcome: HostOutcome<R>,
  toolName: string,
  callId: string | undefined,
  asMessage: boolean,
): R | ToolMessage | string {
  switch (outcome.status) {
    case "success":
      return outcome.replayed ? readdressToolMessage(outcome.value, callId) : outcome.value;
    case "passthrough":
      return outcome.value;
    default:
      return asMessage ? outcomeToolMessage(outcome, toolName, callId) : outcome.message;
  }
}
