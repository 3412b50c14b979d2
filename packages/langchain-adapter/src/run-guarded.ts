import { isGraphBubbleUp } from "@langchain/langgraph";
import type { FailedOutcome, ReflectOutcome, RetryReflectPlugin, SuccessOutcome, ToolEffect } from "@retry-reflect/core";
import { failureOfResult, toFailure } from "./to-failure.js";
import { runWithToolContext } from "./tool-context.js";

/** One LangChain tool call, as the adapter hands it to the plugin. */
export interface GuardedCall<R> {
  readonly plugin: RetryReflectPlugin;
  readonly toolName: string;
  readonly args: unknown;
  readonly callId: string | undefined;
  readonly scope: string;
  /** The run's signal: aborting it stops backoff waits and is rethrown untouched. */
  readonly signal: AbortSignal | undefined;
  readonly effect: ToolEffect | undefined;
  /** The tool's input schema, to name bad fields when the input does not parse. */
  readonly schema: unknown;
  /** Runs the tool (or the rest of the middleware chain) once with these arguments. */
  readonly invoke: (args: unknown) => Promise<R>;
  /** Which tools can read `getToolContext()`: only `write` tools (the default), or all. */
  readonly toolContext?: ToolContextMode;
  /** A first attempt the caller already made directly (`plugin.canCallDirectly`) and that failed. */
  readonly first?: Original<R>;
}

/**
 * Which tools run with `getToolContext()` set. `"writes"` (the default): tools whose effect is
 * `write`, which need the idempotency key; `"all"`: every tool (an `AsyncLocalStorage` context per
 * call, which costs about half a microsecond).
 */
export type ToolContextMode = "writes" | "all";

/**
 * - `success`: the tool's own result (`replayed` when the idempotency store answered);
 * - `passthrough`: the plugin does not handle this tool: its result goes back unchanged;
 * - `reflect` / `failed`: the core's outcome, to be turned into an error tool message.
 */
export type GuardedResult<R> =
  | SuccessOutcome<R>
  | { readonly status: "passthrough"; readonly value: R }
  | ReflectOutcome
  | FailedOutcome;

/** What a tool call did: threw, or returned. */
export type Original<R> = { readonly thrown: unknown } | { readonly returned: R };

/** LangGraph control flow (interrupts, `Command` bubbling): never a tool failure. */
export const isControlFlow = (error: unknown): boolean => isGraphBubbleUp(error);

/**
 * Runs one tool call through the plugin.
 *
 * Control flow is never a tool failure: a LangGraph interrupt (anything `isGraphBubbleUp`) is
 * handed to the plugin as a `passThrough` error, and an error thrown after the run's signal
 * aborted is the plugin's own abort case: either way the plugin rethrows that very error without
 * counting it, retrying it or waiting. No `AbortController` or listener is created per call.
 *
 * Failures are normalised before the plugin classifies them (`toFailure`, `failureOfResult`);
 * when the plugin rethrows a normalised failure (the run aborted after the tool failed), the
 * original error is rethrown instead.
 */
export async function runGuarded<R>(call: GuardedCall<R>): Promise<GuardedResult<R>> {
  // Out of scope (`excludeTools`, or not in `includeTools`): a plain call, errors untouched.
  if (!call.plugin.isInScope(call.toolName)) return { status: "passthrough", value: await call.invoke(call.args) };
  const outer = call.signal;
  let originals: Map<unknown, Original<R>> | undefined;
  const withContext = call.toolContext === "all" || (call.effect ?? call.plugin.effectOf(call.toolName)) === "write";

  let first = call.first;
  const invoke = (args: unknown): Promise<R> => {
    if (first === undefined) return call.invoke(args);
    // The attempt the caller already made: its failure is attempt 1, normalised and classified below.
    const made = first;
    first = undefined;
    return "thrown" in made ? Promise.reject(made.thrown) : Promise.resolve(made.returned);
  };
  const runTool = async (args: unknown, context: Parameters<typeof runWithToolContext>[0]): Promise<R> => {
    let result: R;
    try {
      result = await (withContext ? runWithToolContext(context, () => invoke(args)) : invoke(args));
    } catch (error) {
      if (isControlFlow(error) || outer?.aborted === true) throw error;
      const failure = await toFailure(error, call.schema, args);
      if (failure !== error) (originals ??= new Map()).set(failure, { thrown: error });
      throw failure;
    }
    const failure = failureOfResult(result);
    if (failure !== undefined) {
      (originals ??= new Map()).set(failure, { returned: result });
      throw failure;
    }
    return result;
  };

  try {
    const outcome = await call.plugin.execute(
      {
        toolName: call.toolName,
        args: call.args,
        callId: call.callId,
        scope: call.scope,
        signal: outer,
        passThrough: isControlFlow,
        effect: call.effect,
      },
      runTool,
    );
    return outcome;
  } catch (error) {
    const original = originals?.get(error);
    if (original === undefined) throw error;
    if ("thrown" in original) throw original.thrown;
    return { status: "passthrough", value: original.returned };
  }
}
