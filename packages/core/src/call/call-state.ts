import type { Breaker } from "../breaker/breaker.js";
import type { ToolCall, ToolContext } from "../config/options.js";
import type { ResolvedPolicy } from "../config/policy.js";
import type { ResolvedOptions } from "../config/resolve.js";
import type { CallInfo } from "../events/events.js";
import { withoutField } from "../idempotency/fingerprint.js";
import type { GuardRefusal } from "../idempotency/guarded-call.js";
import type { ToolEffect } from "../outcome.js";
import { counterKey } from "../state/counters.js";
import { UNSERIALIZABLE } from "../texts/model-texts.js";
import type { Engine, ToolSetup } from "./engine.js";
import type { EngineCall } from "./tool-call.js";

// What one logical call carries through its stages (the engine's parts are in engine.ts), made
// once per call: the one owner of a call's state. Stages import this file and the parts below
// them, never the plugin class.

/** The tool function `execute` runs. */
export type ToolFunction<Args, T> = (args: Args, context: ToolContext) => T | Promise<T>;

/** Everything one logical call carries through its attempts. */
export interface CallRun {
  /** The call as hooks and the guard see it (scope and namespace resolved). */
  readonly call: ToolCall;
  /** A host adapter's call (`runToolCall`): the tool's `this`, and its own reading of what the tool did. */
  readonly host: EngineCall | undefined;
  readonly toolName: string;
  readonly scope: string;
  readonly effect: ToolEffect;
  /** The tool's settings (its policy, or the plugin's) and its breaker. */
  readonly policy: ResolvedPolicy;
  readonly breaker: Breaker<CallInfo>;
  /** The write's idempotency settings (the policy's), as the guard reads them. */
  readonly idempotency: ResolvedPolicy["idempotency"];
  readonly breakerKey: string;
  /** The key of its (scope, tool) attempt counter, made once per call. */
  readonly counterKey: string;
  /** The observers' view of the call. */
  readonly info: CallInfo;
  readonly signal: AbortSignal | undefined;
  /** When the call started (the clock's time): its patience counts from here. */
  readonly startedAt: number;
  /** Attempts made in this logical call (in-place retries included). */
  attempts: number;
  /** In-place retries this call has made. */
  inPlace: number;
  /** Whether the call waited for its circuit's recovery (the event is emitted once). */
  waitedForRecovery: boolean;
  /** The attempt number in its scope: provisional while an attempt runs, the failure's own once recorded (set by state/counters.ts only). */
  attempt: number;
  /** Set for a guarded write: the user's key, the store key derived from it, the fingerprint. */
  idempotencyKey: string | undefined;
  storeKey: string | undefined;
  fingerprint: string | undefined;
  /** What the idempotency guard found for a write (once per call). */
  prepared: "unguarded" | GuardRefusal | "guarded" | undefined;
  /** A host adapter's reading of the error its tool last threw (`readThrown`), with that error. */
  reading: HostReading | undefined;
}

/** A host adapter's reading of a thrown error (`HostToolCall.readThrown`), checked, kept with the error it is about. */
export interface HostReading {
  readonly thrown: unknown;
  readonly failure: unknown;
  readonly passThrough: boolean;
  readonly retryable: boolean | undefined;
}

export function newRun(
  call: ToolCall,
  host: EngineCall | undefined,
  scope: string,
  effect: ToolEffect,
  breakerKey: string,
  setup: ToolSetup,
  startedAt: number,
  info: CallInfo,
): CallRun {
  const idempotency = setup.policy.idempotency;
  return {
    // A write whose schema has no key argument never receives one (a model's stray key is removed).
    call: effect === "write" && call.declaresKey === false ? withoutKeyArgument(call, idempotency.keyField) : call,
    host,
    toolName: call.toolName,
    scope,
    effect,
    policy: setup.policy,
    breaker: setup.breaker,
    idempotency,
    breakerKey,
    counterKey: counterKey(scope, call.toolName),
    info,
    signal: call.signal,
    startedAt,
    attempts: 0,
    inPlace: 0,
    waitedForRecovery: false,
    attempt: 0,
    idempotencyKey: undefined,
    storeKey: undefined,
    fingerprint: undefined,
    prepared: undefined,
    reading: undefined,
  };
}

function withoutKeyArgument(call: ToolCall, keyField: string): ToolCall {
  let args: unknown;
  try {
    args = withoutField(call.args, keyField);
  } catch {
    return call; // arguments that cannot be read: the guard refuses them as it reads them
  }
  return args === call.args ? call : { ...call, args };
}

/** The observers' view of a call (for a `write`, its arguments without its key field). */
export function callInfo(engine: Engine, call: ToolCall, scope: string, effect: ToolEffect, setup: ToolSetup): CallInfo {
  const { options } = engine;
  // The tool's own key field (a policy may name another than the plugin's).
  const args = effect === "write" ? argsWithoutKey(call.args, setup.policy.idempotency.keyField) : call.args;
  return {
    toolName: call.toolName,
    callId: call.callId,
    scope,
    effect,
    args,
    startTime: options.clock.now(),
    description: call.description,
    toolType: call.toolType,
  };
}

/** A write's arguments as observers see them: without the key field; arguments that cannot be read (a throwing getter, a Proxy) as `[unserializable]` (the guard refuses them). */
function argsWithoutKey(args: unknown, keyField: string): unknown {
  try {
    return withoutField(args, keyField);
  } catch {
    return UNSERIALIZABLE;
  }
}

/** The attempt-tracking scope of a call. */
export function trackingScopeOf(options: ResolvedOptions, call: ToolCall): string {
  return options.trackingScope === "global" ? "global" : (call.scope ?? "default");
}

/**
 * The call as hooks, observers and the guard see it: `execute`'s as it is; a host call's with its
 * scope asked for, and its namespace for a write. Made once per call by `dispatch` and kept by the
 * run: a host's scope and namespace functions are asked once per call.
 */
export function resolvedCall(call: EngineCall, host: EngineCall | undefined, effect: ToolEffect): ToolCall {
  return host === undefined ? (call as ToolCall) : resolveHostCall(host, effect);
}

function resolveHostCall(host: EngineCall, effect: ToolEffect): ToolCall {
  // A host's control flow and retry mark come with its reading of each thrown error (`run.reading`), not as hooks.
  return {
    toolName: host.toolName,
    args: host.args,
    callId: host.callId,
    scope: typeof host.scope === "function" ? host.scope() : host.scope,
    namespace: effect !== "write" ? undefined : typeof host.namespace === "function" ? host.namespace() : host.namespace,
    signal: host.signal,
    effect: host.effect,
    // Read only for a write (the only effect whose guard reads it): a host may compute it from its schema.
    declaresKey: effect === "write" ? host.declaresKey : undefined,
    description: host.description,
    toolType: host.toolType,
  };
}
