import { CLOSED_PERMIT } from "../breaker/circuit-breaker.js";
import { abortReason } from "../clock.js";
import type { ToolCall } from "../config/options.js";
import type { CallInfo } from "../events/events.js";
import { keepShape } from "../internal/keep-shape.js";
import type { ExecuteOutcome, SuccessOutcome, ToolEffect } from "../outcome.js";
import { runAttempt } from "./attempt.js";
import { firstAttemptContext, readThrown, returnedFailure } from "./attempt-failure.js";
import { continueAfterFailure } from "./attempt-loop.js";
import { callTool, cutOff } from "./attempt-parts.js";
import { counterKey } from "./attempt-tracker.js";
import { endCall, ended } from "./call-end.js";
import { type CallRun, directRun, resolvedCall, type ToolFunction, trackingScopeOf } from "./call-state.js";
import { AttemptContext } from "./coarse-attempt.js";
import type { Group, Watched } from "./coarse-deadlines.js";
import type { Engine, ToolSetup } from "./engine.js";
import type { EngineCall } from "./tool-call.js";

// The one direct attempt of a healthy tool that is not a write: run at once, as a bare wrapper
// would, its call's promise settled from the tool's. Under the default limit the plugin's coarse
// deadlines watch it (no timer of its own); past the limit it fails with `TIMEOUT`. A failure
// becomes attempt 1 of the policy (`failure`: the gate and the loop are behind it).

/** What a host makes of an outcome (its tool message, its result), made once per adapter: it gets the call. */
export type Present<T, P> = (outcome: ExecuteOutcome<T>, call: EngineCall) => P;

type Settled<T, P> = ExecuteOutcome<T> | T | P;

/** Runs the direct attempt: resolves to its outcome (or the tool's own value for a host call with `present`). */
export function direct<T, P>(
  engine: Engine,
  call: EngineCall,
  fn: ToolFunction<unknown, T>,
  host: EngineCall | undefined,
  present: Present<T, P> | undefined,
  effect: ToolEffect,
  breakerKey: string,
  setup: ToolSetup,
  resolved: ToolCall | undefined,
): Promise<Settled<T, P>> {
  // Observers that follow calls see it from its start; observers of events from its failure on.
  let run: CallRun | undefined;
  if (engine.notifier.callHooks) {
    run = directRun(engine, resolved ?? resolvedCall(call, host, effect), host, effect, breakerKey, setup, true);
    run.attempts = 1;
    engine.notifier.callStart(run.info as CallInfo);
  }
  const attempt = new DirectAttempt(engine, call, fn, host, present, effect, breakerKey, setup, run, run?.call ?? resolved);
  if (run === undefined && setup.policy.defaultLimit) return attempt.watched();
  let tool: Promise<T>;
  if (run !== undefined) {
    try {
      tool = runAttempt(engine, run, fn);
    } catch (error) {
      tool = Promise.reject(error); // an observer's context threw
    }
  } else {
    tool = callTool(fn, host, call.args, { attempt: 1, signal: call.signal, toolName: call.toolName, callId: call.callId });
  }
  // Nothing can end this attempt but its tool: the call's promise is the tool's, followed.
  return tool.then(
    (value) => attempt.value(value),
    (error: unknown) => attempt.failure(error, true),
  );
}

class DirectAttempt<T, P> implements Watched {
  prev: Watched | undefined = undefined;
  next: Watched | undefined = undefined;
  group: Group | undefined = undefined;
  /** Under the default limit: whether the attempt ended (the tool answered or the limit passed). */
  private settled = false;
  private context: AttemptContext | undefined = undefined;
  private tool: Promise<T> | undefined = undefined;
  private resolve: ((settled: Settled<T, P> | Promise<Settled<T, P>>) => void) | undefined = undefined;
  private reject: ((error: unknown) => void) | undefined = undefined;

  constructor(
    private readonly engine: Engine,
    private readonly call: EngineCall,
    private readonly fn: ToolFunction<unknown, T>,
    private readonly host: EngineCall | undefined,
    private readonly present: Present<T, P> | undefined,
    private readonly effect: ToolEffect,
    private readonly breakerKey: string,
    private readonly setup: ToolSetup,
    private readonly run: CallRun | undefined,
    /** The call resolved (`resolvedCall`), once someone needed it. */
    private resolution: ToolCall | undefined,
  ) {}

  /** The call as hooks, observers and the guard see it, made once: a host call's scope is asked once per call. */
  resolved(): ToolCall {
    this.resolution ??= resolvedCall(this.call, this.host, this.effect);
    return this.resolution;
  }

  /**
   * The attempt under the default limit: watched by the plugin's coarse deadlines, with a context
   * whose signal aborts at the limit; its promise settles with the tool or at the limit.
   */
  watched(): Promise<Settled<T, P>> {
    const { call } = this;
    // An arrow executor: measured faster than a shared module-level one handing them over (40-50 ns a call, Node 20 and 24).
    const promise = new Promise<Settled<T, P>>((resolve, reject) => {
      this.resolve = resolve;
      this.reject = reject;
    });
    const context = new AttemptContext(1, call.signal, call.toolName, call.callId, undefined);
    this.context = context;
    this.engine.deadlines.watch(this);
    const tool = callTool(this.fn, this.host, call.args, context);
    this.tool = tool;
    tool.then(
      (value) => this.answered(value),
      (error: unknown) => this.threw(error),
    );
    return promise;
  }

  /**
   * The tool answered: a failure its result reports goes on as one (attempt 1 of the policy);
   * otherwise the success. Throws what the caller's promise rejects with.
   */
  value(value: T): Settled<T, P> | Promise<Settled<T, P>> {
    const { engine, call, host, setup, run } = this;
    try {
      const context = setup.policy.isFailure === undefined ? undefined : firstAttemptContext(engine, call, this, run);
      const failure = returnedFailure(setup.policy, host, value, context);
      if (failure !== undefined) return this.failure(failure, false);
      succeeded(engine, call, this, setup, this.breakerKey, run);
    } catch (error) {
      if (run !== undefined) endCall(engine, run, undefined, error);
      throw error;
    }
    if (run === undefined && this.present !== undefined) return value;
    const outcome: SuccessOutcome<T> = { status: "success", value, attempt: 1, replayed: false };
    if (run !== undefined) endCall(engine, run, outcome);
    return this.present === undefined ? outcome : value;
  }

  /** The attempt failed (`threw`: what the tool threw, or a timeout; else the failure its result reports): attempt 1 of the policy, then the call's end. */
  async failure(thrown: unknown, threw: boolean): Promise<ExecuteOutcome<T> | P> {
    const { engine, call, fn, host, present, effect, breakerKey, setup } = this;
    let run = this.run;
    try {
      const reading = threw && host?.readThrown !== undefined ? await readThrown(host, thrown, call.args) : undefined;
      // The attempt that just failed is attempt 1 (as on every other path): classifyError sees it so.
      run ??= directRun(engine, this.resolved(), host, effect, breakerKey, setup, engine.notifier.observed);
      run.reading = reading;
      const next = continueAfterFailure(engine, run, fn, reading === undefined ? thrown : reading.failure, thrown);
      const end = ended(engine, run, next instanceof Promise ? await next : next);
      const outcome = end instanceof Promise ? await end : end; // no tick where the end is synchronous
      return present === undefined ? outcome : present(outcome, host as EngineCall);
    } catch (error) {
      if (run?.info !== undefined) endCall(engine, run, undefined, error);
      throw error;
    }
  }

  /** The default limit passed with the tool still running: the attempt fails with `TIMEOUT`. */
  expire(): void {
    if (this.settled) return;
    this.settled = true;
    const context = this.context as AttemptContext;
    const { engine } = this;
    const error = cutOff(engine, context.toolName, 1, undefined, engine.deadlines.limitMs, false, this.tool as Promise<T>, (cut) =>
      context.abort(cut),
    );
    context.release();
    this.settle(this.failure(error, true));
  }

  private answered(value: T): void {
    if (!this.ended()) return;
    let settled: Settled<T, P> | Promise<Settled<T, P>>;
    try {
      settled = this.value(value);
    } catch (error) {
      this.reject?.(error);
      return;
    }
    this.settle(settled);
  }

  private threw(error: unknown): void {
    if (this.ended()) this.settle(this.failure(error, true));
  }

  private settle(settled: Settled<T, P> | Promise<Settled<T, P>>): void {
    if (settled instanceof Promise)
      settled.then(this.resolve, this.reject); // followed: no thenable job
    else this.resolve?.(settled);
  }

  /** The tool settled under the default limit: true (the watch left) unless the limit already ended the attempt. */
  private ended(): boolean {
    if (this.settled) return false;
    this.settled = true;
    this.engine.deadlines.leave(this);
    (this.context as AttemptContext).release();
    return true;
  }
}

// One kept, so that full collections between calls leave the optimized path alone (see `keepShape`).
keepShape(
  new DirectAttempt(
    undefined as never,
    undefined as never,
    undefined as never,
    undefined,
    undefined,
    "read",
    "",
    undefined as never,
    undefined,
    undefined,
  ),
);

/** A direct attempt succeeded: a closed circuit forgets its failures; the caller's abort still wins. */
function succeeded(
  engine: Engine,
  call: EngineCall,
  attempt: { resolved(): ToolCall },
  setup: ToolSetup,
  breakerKey: string,
  run: CallRun | undefined,
): void {
  const { tracker } = engine;
  setup.breaker.onSuccess(breakerKey, CLOSED_PERMIT, run?.info);
  // A parallel call's failure may have started a row of this tool while this one ran.
  if (tracker.hasCounters(call.toolName)) {
    const scope = run?.scope ?? trackingScopeOf(engine.options, attempt.resolved());
    tracker.clearUnlessExhausted(counterKey(scope, call.toolName), call.toolName);
  }
  if (call.signal?.aborted) throw abortReason(call.signal);
}
