import { CLOSED_PERMIT } from "../breaker/circuit-breaker.js";
import { abortReason } from "../clock.js";
import type { ToolCall } from "../config/options.js";
import type { CallInfo } from "../events/events.js";
import type { ExecuteOutcome, SuccessOutcome, ToolEffect } from "../outcome.js";
import { attemptOnce, limitOf, runAttempt } from "./attempt.js";
import { firstAttemptContext, readThrown, returnedFailure } from "./attempt-failure.js";
import { continueAfterFailure } from "./attempt-loop.js";
import { counterKey } from "./attempt-tracker.js";
import { endCall, ended } from "./call-end.js";
import { type CallRun, directRun, resolvedCall, type ToolFunction, trackingScopeOf } from "./call-state.js";
import type { Engine, ToolSetup } from "./engine.js";
import type { EngineCall } from "./tool-call.js";

// The one direct attempt of a healthy tool that is not a write: one attempt (`attemptOnce`: its
// limit, the caller's abort), its call's promise settled from it. A failure becomes attempt 1 of
// the policy (`failure`: the gate and the loop are behind it).

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
    run = directRun(
      engine,
      resolved ?? resolvedCall(call, host, effect),
      host,
      effect,
      breakerKey,
      setup,
      true,
      engine.options.clock.now(),
    );
    run.attempts = 1;
    engine.notifier.callStart(run.info as CallInfo);
  }
  const attempt = new DirectAttempt(
    engine,
    call,
    fn,
    host,
    present,
    effect,
    breakerKey,
    setup,
    run,
    run?.call ?? resolved,
    run?.startedAt ?? engine.options.clock.now(),
  );
  let tool: Promise<T>;
  if (run !== undefined) {
    try {
      tool = runAttempt(engine, run, fn);
    } catch (error) {
      tool = Promise.reject(error); // an observer's context threw
    }
  } else {
    tool = attemptOnce(engine, fn, host, call.args, {
      toolName: call.toolName,
      attempt: 1,
      callId: call.callId,
      idempotencyKey: undefined,
      signal: call.signal,
      limitMs: limitOf(setup.policy, 1),
      defaultLimit: setup.policy.defaultLimit,
      write: false,
      info: undefined,
    });
  }
  return tool.then(
    (value) => attempt.value(value),
    (error: unknown) => attempt.failure(error, true),
  );
}

class DirectAttempt<T, P> {
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
    /** When the call started: its patience counts from here. */
    private readonly startedAt: number,
  ) {}

  /** The call as hooks, observers and the guard see it, made once: a host call's scope is asked once per call. */
  resolved(): ToolCall {
    this.resolution ??= resolvedCall(this.call, this.host, this.effect);
    return this.resolution;
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
      run ??= directRun(engine, this.resolved(), host, effect, breakerKey, setup, engine.notifier.observed, this.startedAt);
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
}

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
    tracker.succeeded(counterKey(scope, call.toolName), call.toolName, engine.options.clock.now());
  }
  if (call.signal?.aborted) throw abortReason(call.signal);
}
