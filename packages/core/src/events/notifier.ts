import type { Clock } from "../clock.js";
import {
  type CallEnd,
  type CallInfo,
  EVENT_MESSAGES,
  type FieldValue,
  type RetryReflectEvent,
  type RetryReflectObserver,
} from "./events.js";

// How observers are told: the `Notifier` of a plugin, and `consoleLogger`, the observer that prints.

const noop = (): void => {};

/**
 * An observer hook's returned promise may reject: handled here, so that it never becomes an
 * unhandled rejection. `except` is a promise the caller handles itself (the tool's own).
 */
function swallow(value: unknown, except?: unknown): void {
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

export interface ConsoleLoggerOptions {
  /** Where each line goes. @default console.warn for WARN (stderr in Node), console.info for INFO (stdout in Node) */
  readonly write?: (line: string, event: RetryReflectEvent) => void;
  /** The target shown after the level. @default "retry_reflect" */
  readonly target?: string;
}

const BARE = /^[\w.:/@+-]+$/;

function formatValue(key: string, value: FieldValue): string {
  if (typeof value !== "string") return String(value);
  return key === "error" || !BARE.test(value) ? JSON.stringify(value) : value;
}

/** One event in the documented line format: `WARN retry_reflect: tool call failed, retrying tool_name=get_weather attempt=1 ...`. */
export function formatEvent(event: RetryReflectEvent, target = "retry_reflect"): string {
  let line = `${event.level} ${target}: ${event.message}`;
  for (const [key, value] of Object.entries(event.fields as Record<string, FieldValue>)) {
    line += ` ${key}=${formatValue(key, value)}`;
  }
  return line;
}

/**
 * An observer that prints every event as one line in the documented format: WARN lines with
 * `console.warn` (stderr in Node), INFO lines with `console.info` (stdout in Node), or every line to
 * `write` when given.
 */
export function consoleLogger(options: ConsoleLoggerOptions = {}): RetryReflectObserver {
  const target = options.target ?? "retry_reflect";
  const write =
    options.write ??
    ((line: string, event: RetryReflectEvent) => {
      if (event.level === "WARN") console.warn(line);
      else console.info(line);
    });
  const logger: RetryReflectObserver = {
    onEvent(event) {
      write(formatEvent(event, target), event);
    },
  };
  CONSOLE_LOGGERS.add(logger);
  return logger;
}

/** The observers `consoleLogger` made: `DEBUG=retry-reflect` adds none where one is given already. */
const CONSOLE_LOGGERS = new WeakSet<RetryReflectObserver>();

/**
 * `observers`, plus a `consoleLogger()` when the `DEBUG` environment variable names retry-reflect
 * (the Node convention: names separated by commas or spaces, `*` as a wildcard, `-name` to leave one
 * out; `DEBUG=retry-reflect`, `DEBUG=*`) and none of them is one already. Nothing changes where there
 * is no `process` (a browser, an edge runtime).
 */
export function withDebugLogger(observers: readonly RetryReflectObserver[]): readonly RetryReflectObserver[] {
  const debug = (globalThis as { process?: { env?: Record<string, string | undefined> } }).process?.env?.DEBUG;
  if (!debugNames(debug, "retry-reflect") || observers.some((observer) => CONSOLE_LOGGERS.has(observer))) return observers;
  return [...observers, consoleLogger()];
}

/** Whether a `DEBUG` value names `name`: a pattern matches it, and no `-pattern` leaves it out. */
export function debugNames(debug: string | undefined, name: string): boolean {
  if (typeof debug !== "string") return false;
  const matches = (pattern: string) => new RegExp(`^${pattern.replace(/[.+?^${}()|[\]\\]/g, "\\$&").replace(/\*/g, ".*")}$`).test(name);
  const patterns = debug.split(/[\s,]+/).filter((pattern) => pattern !== "");
  if (patterns.some((pattern) => pattern.startsWith("-") && matches(pattern.slice(1)))) return false;
  return patterns.some((pattern) => !pattern.startsWith("-") && matches(pattern));
}
