import type { Clock } from "../clock.js";
import { type CallInfo, EVENT_MESSAGES, type FieldValue, type RetryReflectEvent, type RetryReflectObserver } from "./events.js";

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

/** The observers of one plugin (see `RetryReflectObserver` for what they are promised). */
export class Notifier {
  /** Does any observer follow calls? Without one, no call is told of its start or end, even when events are observed. */
  readonly callHooks: boolean;
  private readonly contextHooks: readonly RetryReflectObserver[];

  constructor(
    private readonly observers: readonly RetryReflectObserver[],
    private readonly clock: Clock,
  ) {
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
    if (this.observers.length === 0) return;
    const meta = EVENT_MESSAGES[type];
    const event = { type, level: meta.level, message: meta.message, toolName, time: this.clock.now(), call, fields } as RetryReflectEvent;
    this.tell((observer) => observer.onEvent?.(event));
  }

  /** Each observer's hook (an event, a call's start or end): one that throws or rejects never breaks a tool call. */
  tell(hook: (observer: RetryReflectObserver) => unknown): void {
    for (const observer of this.observers) {
      try {
        swallow(hook(observer));
      } catch {
        // ignored
      }
    }
  }

  /** `runTool` inside every observer's context (`RetryReflectObserver.runInContext`): its own promise is the attempt's result. */
  inContext<T>(call: CallInfo, runTool: () => Promise<T>): Promise<T> {
    let run = runTool;
    for (const observer of this.contextHooks) {
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
  const fields = Object.entries(event.fields as Record<string, FieldValue>).map(([key, value]) => ` ${key}=${formatValue(key, value)}`);
  return `${event.level} ${target}: ${event.message}${fields.join("")}`;
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
