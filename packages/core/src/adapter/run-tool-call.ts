import { ENGINE, type Engine, type EngineCall, type ThrownReading } from "../call/call.js";
import { runHostCall } from "../call/run-call.js";
import type { ToolContext } from "../config/options.js";
import { isInScope } from "../config/resolve.js";
import type { FailedOutcome, ReflectOutcome, SuccessOutcome, ToolEffect } from "../outcome.js";
import type { RetryReflectPlugin } from "../plugin.js";

/** One tool call of a host framework, as an adapter hands it over: the tool's `this` and its hooks'. */
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
  /**
   * Whether the host tool's argument schema declares the idempotency key argument (`ToolCall.declaresKey`):
   * `false` gives a write a derived key and never asks the model for one. @default undefined (the plugin's rule)
   */
  readonly declaresKey?: boolean;
  /** The attempt-tracking scope (one agent run); a function is called only when the plugin needs a scope. */
  readonly scope?: string | (() => string);
  /**
   * Whose writes these are (`ToolCall.namespace`): a stored write result is replayed only within it.
   * A function is called only for a `write`. @default the scope
   */
  readonly namespace?: string | (() => string);
  /**
   * A returned value that reports a failure (an error tool message): the failure to classify, else
   * undefined. When given, it replaces the core's own test of returned failures (`isReturnedFailure`):
   * it should recognise those shapes too if the host's tools can return them.
   */
  readonly failureOfResult?: (result: NoInfer<R>) => unknown;
  /**
   * What the host makes of an error its tool threw, read once per failed attempt, as one value: the
   * failure to classify (a schema error with its fields named), whether the error is the host's
   * control flow (an interrupt: rethrown untouched, never counted), and the host's own "retry or
   * not" mark (LangChain's `getRetryable`: the default of the policy's `shouldRetry`). Not asked
   * about the core's own attempt timeout. A reader that rejects leaves the error as thrown.
   * @default the error as thrown, no control flow, no mark
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
 * Runs a host's tool call under the plugin; the adapter's own code is then only glue. The call
 * takes the core's one path, as every call does. What the host threw or returned is read by the
 * call's own hooks (`failureOfResult`, `readThrown`); control flow is rethrown as the host threw it.
 *
 * With `present`, the promise resolves to `present(outcome, call)` (the host's result: its tool
 * message, its value) instead of the outcome. `present` can be one function made once: it gets the
 * call.
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
  if (isInScope(engine.options, call.toolName)) return runHostCall(engine, call as EngineCall, call.run as never, present as never);
  // A tool the plugin does not handle: one plain call, its result as it is, its error untouched.
  const value = await call.run(call.args, { attempt: 1, signal: call.signal, toolName: call.toolName, callId: call.callId });
  const outcome: HostOutcome<R> = { status: "passthrough", value };
  return present === undefined ? outcome : present(outcome, call);
}
