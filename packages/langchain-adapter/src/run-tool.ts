import type { ToolMessage } from "@langchain/core/messages";
import type { RetryReflectPlugin, ToolContext, ToolEffect } from "@retry-reflect/core";
import { type HostOutcome, type HostToolCall, runToolCall, type ThrownReading } from "@retry-reflect/core/adapter";
import { declaresKey } from "@retry-reflect/core/adapter/options";
import { failureOfResult, readThrown } from "./to-failure.js";
import { runWithToolContext } from "./tool-context.js";
import { outcomeToolMessage, readdressToolMessage } from "./tool-message.js";

/**
 * Which tools run with `getToolContext()` set. `"writes"` (the default): tools whose effect is
 * `write`, which need the idempotency key; `"all"`: every tool (an `AsyncLocalStorage` context per
 * call, which costs about half a microsecond).
 */
export type ToolContextMode = "writes" | "all";

/** Does the tool's policy set an attempt limit of its own (`attemptTimeoutMs`, not 0), rather than the default limits? */
function hasAttemptTimeout(plugin: RetryReflectPlugin, toolName: string): boolean {
  const { options } = plugin;
  const policy = (options.tools.size === 0 ? undefined : options.tools.get(toolName)) ?? options;
  return !policy.defaultLimit && policy.attemptTimeoutsMs.length > 0;
}

/**
 * One LangChain tool call, as the seam (`@retry-reflect/core/adapter`) runs it: interrupts are
 * control flow, an error `ToolMessage` is a failure, a thrown schema error names the bad fields,
 * LangChain's retryable mark on a thrown error is the default of `shouldRetry` (the last three read
 * as one value, `readThrown`), and write tools,
 * tools with `attemptTimeoutMs` (or all, with `toolContext: "all"`) can read `getToolContext()`. A class, so that a call costs
 * one object and no closure: the middleware and the tool wrapper say how to invoke the tool and
 * find the scope.
 */
export abstract class LangChainHostCall<R> implements HostToolCall<R> {
  /** The tool's description, for telemetry (`gen_ai.tool.description`). */
  description: string | undefined = undefined;

  constructor(
    readonly plugin: RetryReflectPlugin,
    readonly toolName: string,
    readonly args: unknown,
    readonly callId: string | undefined,
    readonly signal: AbortSignal | undefined,
    /** Resolved by the adapter (the plugin's `toolEffects`, the tool's metadata, `defaultEffect`): the core need not ask again. */
    readonly effect: ToolEffect,
    /** The tool's input schema, to name bad fields when the input does not parse. */
    private readonly schema: unknown,
    private readonly toolContext: ToolContextMode | undefined,
  ) {}

  /** LangChain tools are functions the model calls (`gen_ai.tool.type`). On the prototype: no field per call. */
  get toolType(): string {
    return "function";
  }

  /** Whether a write tool's schema declares the idempotency key argument: without it, a derived key. Asked only for a write. */
  get declaresKey(): boolean | undefined {
    return declaresKey(this.plugin, this.toolName, this.effect, this.schema);
  }

  /** An error `ToolMessage` (or a structured error in one) is a failure. */
  failureOfResult(result: R): unknown {
    return failureOfResult(result);
  }

  /** The attempt-tracking scope, asked only when the plugin needs it. */
  abstract scope(): string;

  /** Whose writes these are (asked only for a `write`): replays happen only within it. */
  abstract namespace(): string;

  /** Runs the tool (or the rest of the middleware chain) once with these arguments. */
  protected abstract invoke(args: unknown): Promise<R> | R;

  /**
   * What the tool threw, read once: LangGraph control flow (an interrupt) is rethrown as thrown,
   * never a failure; a schema error names the bad fields; LangChain's mark (`getRetryable`) is the
   * default of `shouldRetry` (`false` stops the call, `true` makes it recoverable). A method: no
   * cost per call, asked only on a failure.
   */
  readThrown(error: unknown, args: unknown): ThrownReading | Promise<ThrownReading> {
    return readThrown(error, this.schema, args);
  }

  run(args: unknown, context: ToolContext): Promise<R> | R {
    return this.withContext() ? runWithToolContext(context, () => this.invoke(args)) : this.invoke(args);
  }

  /** Write tools and tools with a time limit read `getToolContext()` (its key, its attempt's signal: LangChain gives the tool the run's), or all with `toolContext: "all"`. */
  private withContext(): boolean {
    return this.toolContext === "all" || this.effect === "write" || hasAttemptTimeout(this.plugin, this.toolName);
  }

  /** The outcome, for tests and hosts that branch on it. */
  outcome(): Promise<HostOutcome<R>> {
    return runToolCall(this.plugin, this);
  }

  /**
   * What the host returns (`resultFor`): the tool's own result for a healthy call made directly
   * (no outcome object, no extra frame), an error `ToolMessage` (`asMessage`) or text otherwise.
   */
  result(asMessage: boolean): Promise<R | ToolMessage | string> {
    return runToolCall(this.plugin, this, asMessage ? presentAsMessage : presentAsText);
  }
}

const presentAsMessage = <R>(outcome: HostOutcome<R>, call: HostToolCall<R>) => resultFor(outcome, call.toolName, call.callId, true);
const presentAsText = <R>(outcome: HostOutcome<R>, call: HostToolCall<R>) => resultFor(outcome, call.toolName, call.callId, false);

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
