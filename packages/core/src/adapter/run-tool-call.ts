import { CLOSED_PERMIT } from "../breaker/circuit-breaker.js";
import { ENGINE, type Engine, setupOf } from "../call/call-state.js";
import { isReturnedFailure } from "../classify/classify-error.js";
import { abortReason } from "../clock.js";
import type { ToolContext } from "../config/options.js";
import type { ToolEffect } from "../events/events.js";
import type { FailedOutcome, ReflectOutcome, SuccessOutcome } from "../outcome.js";
import type { RetryReflectPlugin } from "../plugin.js";

/** One tool call of a host framework, as an adapter hands it over. */
export interface HostToolCall<R> {
  readonly toolName: string;
  /** The model's arguments. */
  readonly args: unknown;
  /** The model's tool-call id. */
  readonly callId?: string;
  /** The run's signal: aborts waits; the run's abort reason is what an aborted call rejects with. */
  readonly signal?: AbortSignal;
  /** The tool's description, for telemetry (`gen_ai.tool.description`), when the host knows it. */
  readonly description?: string;
  /** The tool's GenAI type (`"function"`, ...), for telemetry (`gen_ai.tool.type`). */
  readonly toolType?: string;
  /** The tool's effect, when the host knows it (its metadata); else the plugin's `toolEffects` / `defaultEffect`. */
  readonly effect?: ToolEffect;
  /** The attempt-tracking scope (one agent run); a function is called only when the plugin needs a scope. */
  readonly scope?: string | (() => string);
  /**
   * Whose writes these are (`ToolCall.namespace`): a stored write result is replayed only within it.
   * A function is called only for a `write`. @default the scope
   */
  readonly namespace?: string | (() => string);
  /** The host's control flow (an interrupt): rethrown untouched, never a failure. */
  readonly isControlFlow?: (error: unknown) => boolean;
  /**
   * A returned value that reports a failure (an error tool message): the failure to classify, else
   * undefined. When given, it replaces the core's own test of returned failures (`isReturnedFailure`)
   * on the direct path: it should recognise those shapes too if the host's tools can return them.
   */
  readonly failureOfResult?: (result: NoInfer<R>) => unknown;
  /** What a thrown error means to the plugin (a schema error with its fields named); may be async. */
  readonly failureOfThrown?: (error: unknown, args: unknown) => unknown;
  /**
   * The host's own "retry or not" mark on what its tool threw (LangChain's `getRetryable`): the
   * default of the policy's `shouldRetry`. It receives the host's original error. @default none
   */
  readonly retryable?: (error: unknown) => boolean | undefined;
  /** Runs the host's tool once with these arguments (the model's, or corrected ones). */
  readonly run: (args: unknown, context: ToolContext) => Promise<R> | R;
  /**
   * The attempt the host already made directly (after `canCallDirectly`), which failed: it
   * becomes attempt 1 of the policy instead of a first `run`.
   */
  readonly first?: DirectAttempt<R>;
}

/** What a direct attempt did: threw, or returned a failure result. */
export type DirectAttempt<R> = { readonly thrown: unknown } | { readonly returned: R };

/**
 * - `success`: the tool's own result (`replayed` when the idempotency store answered);
 * - `passthrough`: the plugin does not handle this tool (or the run was aborted after the tool
 *   returned an error result): the host's result goes back unchanged;
 * - `reflect` / `failed`: give `message` to the model as the tool's result.
 */
export type HostOutcome<R> = SuccessOutcome<R> | { readonly status: "passthrough"; readonly value: R } | ReflectOutcome | FailedOutcome;

type Original<R> = DirectAttempt<R>;

/**
 * Runs a host's tool call under the plugin; the adapter's own code is then only glue. A healthy
 * tool (no observer following calls, no failure of this tool in any scope, not a write, its circuit closed) is run
 * directly, as a bare wrapper would; a failure of that run becomes attempt 1 of the policy. What
 * the host threw or returned is normalised for classification, and the host's own error is what
 * gets rethrown when the plugin rethrows (control flow).
 *
 * With `present`, the promise resolves to the host's result instead of the outcome: the tool's own
 * value for a success made directly (no outcome object, no extra frame: the healthy path costs
 * what a bare wrapper does), `present(outcome, call)` for every other outcome (a success through
 * the policy, a replay, a pass-through, a reflection or a stop). `present` can be one function
 * made once: it gets the call.
 */
export function runToolCall<R>(plugin: RetryReflectPlugin, call: HostToolCall<R>): Promise<HostOutcome<R>>;
export function runToolCall<R, P>(
  plugin: RetryReflectPlugin,
  call: HostToolCall<R>,
  present: (outcome: HostOutcome<R>, call: HostToolCall<R>) => P,
): Promise<R | P>;
export async function runToolCall<R, P>(
  plugin: RetryReflectPlugin,
  call: HostToolCall<R>,
  present?: (outcome: HostOutcome<R>, call: HostToolCall<R>) => P,
): Promise<HostOutcome<R> | R | P> {
  const { toolName, signal } = call;
  if (!plugin.isInScope(toolName)) {
    const outcome: HostOutcome<R> = {
      status: "passthrough",
      value: await call.run(call.args, { attempt: 1, signal, toolName, callId: call.callId }),
    };
    return present === undefined ? outcome : present(outcome, call);
  }
  const effect = call.effect ?? plugin.effectOf(toolName);
  let first: Original<R> | undefined = call.first;
  const engine = engineOf(plugin);
  if (first === undefined && isDirect(engine, toolName, effect)) {
    try {
      const value = await call.run(call.args, { attempt: 1, signal, toolName, callId: call.callId });
      // The host's own test of a returned failure, when it has one (a LangChain error message), else the core's shapes.
      const failed = call.failureOfResult === undefined ? isReturnedFailure(value) : call.failureOfResult(value) !== undefined;
      if (!failed) {
        setupOf(engine, toolName).breaker.onSuccess(toolName, CLOSED_PERMIT);
        if (signal?.aborted) throw abortReason(signal);
        return present === undefined ? { status: "success", value, attempt: 1, replayed: false } : value;
      }
      first = { returned: value };
    } catch (error) {
      if (call.isControlFlow?.(error) || signal?.aborted) throw error;
      first = { thrown: error };
    }
  }

  let originals: Map<unknown, Original<R>> | undefined;
  const runTool = async (args: unknown, context: ToolContext): Promise<R> => {
    let result: R;
    try {
      if (first === undefined) result = await call.run(args, context);
      else {
        // The attempt already made directly: its failure is attempt 1.
        const made = first;
        first = undefined;
        if ("thrown" in made) throw made.thrown;
        result = made.returned;
      }
    } catch (error) {
      if (call.isControlFlow?.(error) || signal?.aborted) throw error;
      const failure = call.failureOfThrown === undefined ? error : await call.failureOfThrown(error, args);
      if (failure !== error) {
        originals ??= new Map();
        originals.set(failure, { thrown: error });
      }
      throw failure;
    }
    const failure = call.failureOfResult?.(result);
    if (failure !== undefined) {
      originals ??= new Map();
      originals.set(failure, { returned: result });
      throw failure;
    }
    return result;
  };

  let outcome: HostOutcome<R>;
  try {
    const scope = typeof call.scope === "function" ? call.scope() : call.scope;
    const namespace =
      effect !== "write" || call.namespace === undefined
        ? undefined
        : typeof call.namespace === "function"
          ? call.namespace()
          : call.namespace;
    outcome = await plugin.execute(
      {
        toolName,
        args: call.args,
        callId: call.callId,
        scope,
        namespace,
        signal,
        effect,
        passThrough: call.isControlFlow,
        description: call.description,
        toolType: call.toolType,
        retryable: call.retryable === undefined ? undefined : hostRetryable(call.retryable, () => originals),
      },
      runTool,
    );
  } catch (error) {
    const original = originals?.get(error);
    if (original === undefined) throw error;
    if ("thrown" in original) throw original.thrown;
    outcome = { status: "passthrough", value: original.returned };
  }
  return present === undefined ? outcome : present(outcome, call);
}

/** The host's mark, asked about the host's own error (not the failure it was normalised into). */
function hostRetryable<R>(retryable: (error: unknown) => boolean | undefined, originals: () => Map<unknown, Original<R>> | undefined) {
  return (failure: unknown): boolean | undefined => {
    const original = originals()?.get(failure);
    return retryable(original !== undefined && "thrown" in original ? original.thrown : failure);
  };
}

/**
 * True when a call of `toolName` needs nothing from the policy right now: in scope, no observer
 * that follows calls (`onCallStart`, `runInContext`, `onCallEnd`; an `onEvent` one is fine),
 * not a `write`, no failure of this tool tracked in any scope, no `circuitBreakerKey` function,
 * its circuit closed. Bookkeeping is per tool: a failure of another tool changes nothing here.
 */
export function canCallDirectly(plugin: RetryReflectPlugin, toolName: string, effect: ToolEffect = plugin.effectOf(toolName)): boolean {
  return plugin.isInScope(toolName) && isDirect(engineOf(plugin), toolName, effect);
}

/**
 * A direct call (after `canCallDirectly`) succeeded: a closed circuit forgets its failures. An
 * adapter that makes the direct call itself (to spare a frame on its hottest path) calls this,
 * and hands a failed direct attempt to `runToolCall` as `first`.
 */
export function recordDirectSuccess(plugin: RetryReflectPlugin, toolName: string): void {
  setupOf(engineOf(plugin), toolName).breaker.onSuccess(toolName, CLOSED_PERMIT);
}

/** `canCallDirectly` for a tool already known to be in scope. */
function isDirect(engine: Engine, toolName: string, effect: ToolEffect): boolean {
  return (
    !engine.notifier.callHooks &&
    effect !== "write" &&
    engine.options.circuitBreakerKey === undefined &&
    !engine.tracker.hasCounters(toolName) &&
    !setupOf(engine, toolName).policy.slowOnly &&
    setupOf(engine, toolName).policy.isFailure === undefined &&
    setupOf(engine, toolName).breaker.isClosed(toolName)
  );
}

function engineOf(plugin: RetryReflectPlugin): Engine {
  const engine = (plugin as unknown as { [ENGINE]?: Engine })[ENGINE];
  if (engine === undefined) throw new TypeError("runToolCall: expected a RetryReflectPlugin");
  return engine;
}
