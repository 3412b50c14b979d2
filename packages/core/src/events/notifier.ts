import type { Clock } from "../clock.js";
import { type CallEnd, type CallInfo, EVENT_MESSAGES, type RetryReflectEvent, type RetryReflectObserver } from "./events.js";

const noop = (): void => {};

/**
 * An observer hook's returned promise may reject: handled here, so that it never becomes an
 * unhandled rejection. `except` is a promise the caller handles itself (the tool's own).
 */
export function swallow(value: unknown, except?: unknown): void {
  if (value === except || typeof value !== "object" || value === null) return;
  try {
    const then = (value as { then?: unknown }).then;
    if (typeof then === "function") (then as (onFulfilled: unknown, onRejected: () => void) => unknown).call(value, undefined, noop);
  } catch {
    // A hostile thenable.
  }
}

/**
 * The observers of one plugin: events, call start/end, and the context each attempt runs in. A
 * hook that throws or returns a rejected promise is ignored; with no observer, nothing is built.
 */
export class Notifier {
  readonly observed: boolean;
  /**
   * Does any observer follow calls (`onCallStart`, `runInContext`, `onCallEnd`)? Without one, no
   * call is told of its start or end, even when events are observed (`consoleLogger`).
   */
  readonly callHooks: boolean;
  private readonly observers: readonly RetryReflectObserver[];
  private readonly contextHooks: readonly RetryReflectObserver[];

  constructor(
    observers: readonly RetryReflectObserver[],
    private readonly clock: Clock,
  ) {
    this.observers = observers;
    this.observed = observers.length > 0;
    this.callHooks = observers.some(
      (observer) => observer.onCallStart !== undefined || observer.runInContext !== undefined || observer.onCallEnd !== undefined,
    );
    this.contextHooks = observers.filter((observer) => typeof observer.runInContext === "function");
  }

  /** Builds and delivers one event (only when someone listens). */
  emit<K extends RetryReflectEvent["type"]>(
    type: K,
    toolName: string,
    call: CallInfo | undefined,
    fields: Extract<RetryReflectEvent, { type: K }>["fields"],
  ): void {
    if (!this.observed) return;
    const meta = EVENT_MESSAGES[type];
    const event = { type, level: meta.level, message: meta.message, toolName, time: this.clock.now(), call, fields } as RetryReflectEvent;
    for (const observer of this.observers) {
      try {
        swallow(observer.onEvent?.(event));
      } catch {
        // An observer that throws never breaks a tool call.
      }
    }
  }

  callStart(call: CallInfo): void {
    for (const observer of this.observers) {
      try {
        swallow(observer.onCallStart?.(call));
      } catch {
        // ignored
      }
    }
  }

  callEnd(call: CallInfo, end: CallEnd): void {
    for (const observer of this.observers) {
      try {
        swallow(observer.onCallEnd?.(call, end));
      } catch {
        // ignored
      }
    }
  }

  /**
   * `runTool` inside every observer's context. The tool runs at most once, and its own promise is
   * the attempt's result: whatever a hook returns, throws or rejects afterwards never changes the
   * outcome; a hook that never runs it gets the tool run without its context.
   */
  inContext<T>(call: CallInfo, runTool: () => Promise<T>): Promise<T> {
    const hooks = this.contextHooks;
    // One observer with a context (the usual telemetry setup): its hook runs the tool, no wrapper between.
    if (hooks.length === 1) return runInHook(hooks[0] as RetryReflectObserver, call, runTool);
    let run = runTool;
    for (const observer of hooks) {
      const inner = run;
      run = () => runInHook(observer, call, inner);
    }
    return run();
  }
}

/** `run` inside one observer's `runInContext`: the tool's own promise, started at most once (by the hook, or after it). */
function runInHook<T>(observer: RetryReflectObserver, call: CallInfo, run: () => Promise<T>): Promise<T> {
  let started: Promise<T> | undefined;
  const runOnce = () => (started ??= run());
  try {
    swallow((observer.runInContext as NonNullable<RetryReflectObserver["runInContext"]>).call(observer, call, runOnce), started);
  } catch {
    // An observer's own failure: ignored.
  }
  return started ?? runOnce();
}
