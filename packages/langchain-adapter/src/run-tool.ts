import { isGraphBubbleUp } from "@langchain/langgraph";
import { ToolMessage } from "@langchain/core/messages";
import type { RetryReflectPlugin, ToolEffect } from "@retry-reflect/core";
import { runToolCall, type HostOutcome } from "@retry-reflect/core/adapter";
import { failureOfResult, toFailure } from "./to-failure.js";
import { runWithToolContext } from "./tool-context.js";
import { outcomeToolMessage, readdressToolMessage } from "./tool-message.js";

/**
 * Which tools run with `getToolContext()` set. `"writes"` (the default): tools whose effect is
 * `write`, which need the idempotency key; `"all"`: every tool (an `AsyncLocalStorage` context per
 * call, which costs about half a microsecond).
 */
export type ToolContextMode = "writes" | "all";

/** LangGraph control flow (interrupts, `Command` bubbling): never a tool failure. */
export const isControlFlow = (error: unknown): boolean => isGraphBubbleUp(error);

/** One LangChain tool call, as the middleware and the tool wrapper hand it over. */
export interface LangChainToolCall<R> {
  readonly plugin: RetryReflectPlugin;
  readonly toolName: string;
  readonly args: unknown;
  readonly callId: string | undefined;
  /** The attempt-tracking scope, computed only when the plugin needs it. */
  readonly scope: () => string;
  readonly signal: AbortSignal | undefined;
  readonly effect: ToolEffect | undefined;
  /** The tool's input schema, to name bad fields when the input does not parse. */
  readonly schema: unknown;
  readonly toolContext: ToolContextMode | undefined;
  /** Runs the tool (or the rest of the middleware chain) once with these arguments. */
  readonly invoke: (args: unknown) => Promise<R>;
}

/**
 * Runs one LangChain tool call under the plugin (`@retry-reflect/core/adapter` does the work):
 * interrupts are control flow, an error `ToolMessage` is a failure, a thrown schema error names
 * the bad fields, and write tools (or all, with `toolContext: "all"`) can read `getToolContext()`.
 */
export function runLangChainTool<R>(call: LangChainToolCall<R>): Promise<HostOutcome<R>> {
  const { invoke, schema } = call;
  const withContext = call.toolContext === "all" || (call.effect ?? call.plugin.effectOf(call.toolName)) === "write";
  return runToolCall<R>(call.plugin, {
    toolName: call.toolName,
    args: call.args,
    callId: call.callId,
    signal: call.signal,
    effect: call.effect,
    scope: call.scope,
    isControlFlow,
    failureOfResult,
    failureOfThrown: (error, args) => toFailure(error, schema, args),
    run: withContext ? (args, context) => runWithToolContext(context, () => invoke(args)) : invoke,
  });
}

/**
 * What the host gets back: the tool's own result on success (a replayed `ToolMessage` re-addressed
 * to this call); on `reflect` / `failed`, an error `ToolMessage` (`asMessage`) or the outcome's text.
 */
export function resultFor<R>(outcome: HostOutcome<R>, toolName: string, callId: string | undefined, asMessage: boolean): R | ToolMessage | string {
  switch (outcome.status) {
    case "success":
      return outcome.replayed ? readdressToolMessage(outcome.value, callId) : outcome.value;
    case "passthrough":
      return outcome.value;
    default:
      return asMessage ? outcomeToolMessage(outcome, toolName, callId) : outcome.message;
  }
}
