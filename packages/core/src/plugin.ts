import { Circuits } from "./breaker/circuits.js";
import { createBuilder, type RetryReflectPluginBuilder } from "./builder.js";
import type { ToolFunction } from "./call/call-state.js";
import { breakersOf, createEngine, ENGINE, type Engine, setupOf } from "./call/engine.js";
import { runCall } from "./call/run-call.js";
import type { RetryReflectOptions, ToolCall } from "./config/options.js";
import { effectOf, isInScope, type ResolvedOptions, resolveOptions } from "./config/resolve.js";
import type { CircuitState, ExecuteOutcome, ToolEffect } from "./outcome.js";

export type { ToolFunction } from "./call/call-state.js";

/**
 * Decides, per tool failure, between an in-place retry after backoff, a reflection prompt for the
 * model, and a stop; with a circuit breaker per tool and an idempotency guard for writes.
 *
 * ```ts
 * const plugin = RetryReflectPlugin.builder().maxRetries(3).build();
 * const outcome = await plugin.execute({ toolName: "get_weather", args }, (args) => getWeather(args));
 * ```
 *
 * This class is the face: options, circuits and `execute`; a call's one path is `call/run-call.ts`
 * (src/README.md maps it). What happens after a failure lives in the stages beside it
 * (`failure.ts`, `decide.ts`, `outcome.ts`).
 */
export class RetryReflectPlugin {
  /** The options in force, defaults applied. */
  readonly options: ResolvedOptions;
  /** The circuits, one per tool (or per `circuitBreakerKey`): `state`, `isolate`, `reset`, `snapshot`, `restore`, `size`. */
  readonly circuits: Circuits;
  private readonly engine: Engine;

  /** Prefer `RetryReflectPlugin.create(options)` or `RetryReflectPlugin.builder()`. */
  constructor(options: RetryReflectOptions = {}) {
    const resolved = resolveOptions(options);
    this.options = resolved;
    this.engine = createEngine(resolved);
    this.circuits = new Circuits(breakersOf(this.engine), (key: string) => setupOf(this.engine, key).breaker);
    Object.defineProperty(this, ENGINE, { value: this.engine });
  }

  /** A plugin from an options object; throws `InvalidOptionError` for an invalid option. */
  static create(options: RetryReflectOptions = {}): RetryReflectPlugin {
    return new RetryReflectPlugin(options);
  }

  /** An immutable builder whose methods map 1:1 to the options. */
  static builder(): RetryReflectPluginBuilder {
    return createBuilder((options) => new RetryReflectPlugin(options));
  }

  /** Is `toolName` handled (not excluded, and included when `includeTools` is not empty)? */
  isInScope(toolName: string): boolean {
    return isInScope(this.options, toolName);
  }

  /** The effect of a tool: `toolEffects[toolName]`, else `defaultEffect`. */
  effectOf(toolName: string): ToolEffect {
    return effectOf(this.options, toolName);
  }

  /** The circuit state of a tool (or breaker key); reading it changes nothing. Same as `circuits.state`. */
  circuitState(toolName: string): CircuitState {
    return this.circuits.state(toolName);
  }

  /**
   * Where `toolName` is stopped because its retries are exhausted: each scope, and how long until
   * its next call runs again (`retryAfterMs`, from `exhaustedResetMs`; `undefined` when the stop
   * lasts the scope's life). A circuit reads `closed` through this: it is per scope, not per tool.
   */
  exhausted(toolName: string): ReadonlyArray<{ readonly scope: string; readonly retryAfterMs: number | undefined }> {
    const { tracker, options } = this.engine;
    const resetMs = setupOf(this.engine, toolName).policy.exhaustedResetMs;
    const now = options.clock.now();
    return tracker
      .exhaustedScopes(toolName)
      .map(({ scope, at }) => ({ scope, retryAfterMs: resetMs === 0 ? undefined : Math.max(0, at + resetMs - now) }));
  }

  /** Forgets the attempt counters of a scope (call it when an agent run ends, or to start a task afresh). */
  resetScope(scope: string): void {
    this.engine.tracker.clearScope(scope);
  }

  /**
   * Runs a tool call under the policy. For an in-scope tool it never throws for a tool failure:
   * it returns `success`, `reflect` (give `message` to the model) or `failed` (stop using the tool).
   * It rejects with the caller's abort reason and what `call.passThrough` selects, with `TypeError`
   * for a malformed call, and with `RetriesExhaustedError` when `onExhausted` is `"throw"`. An
   * out-of-scope tool is called once, and its error is rethrown untouched.
   */
  execute<Args, T>(call: ToolCall<Args>, fn: ToolFunction<Args, T>): Promise<ExecuteOutcome<T>> {
    return runCall(this.engine, call, fn);
  }
}
