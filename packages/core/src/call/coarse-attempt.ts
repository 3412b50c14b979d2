import { abortReason } from "../clock.js";
import type { ToolContext } from "../config/options.js";
import type { CallInfo } from "../events/events.js";
import { keepShape } from "../internal/keep-shape.js";
import { callTool, cutOff } from "./attempt-parts.js";
import type { ToolFunction } from "./call-state.js";
import type { Group, Watched } from "./coarse-deadlines.js";
import type { Engine } from "./engine.js";

// An attempt under the default time limit (`attemptTimeoutMs` not set): no timer and no
// AbortController per call. The attempt joins the plugin's coarse deadlines (one timer for all);
// its context makes a signal of its own only if the tool reads `context.signal`, and that signal
// aborts at the limit. Past the limit the attempt fails with `TIMEOUT`, as a precise one does.

/** What `AttemptContext.ended` holds for an attempt that ended with no signal made and no reason to abort one. */
const NOT_ABORTED: unique symbol = Symbol("not aborted");

/**
 * A tool's context whose `signal` is made on first read: it follows the caller's and aborts at the
 * limit. Read only after the attempt ended, it is what it would have been if read at the start:
 * aborted with the timeout of an attempt cut off (or the caller's reason, if the caller aborted
 * first), else not aborted and no longer following the caller's.
 */
export class AttemptContext implements ToolContext {
  private own: AbortController | undefined = undefined;
  private onOuterAbort: (() => void) | undefined = undefined;
  /** Undefined while the attempt runs (or once its signal is made); once it ended first, the reason a signal made then aborts with, or `NOT_ABORTED`. */
  private ended: unknown = undefined;

  constructor(
    readonly attempt: number,
    private readonly outer: AbortSignal | undefined,
    readonly toolName: string,
    readonly callId: string | undefined,
    readonly idempotencyKey: string | undefined,
  ) {}

  get signal(): AbortSignal {
    if (this.own === undefined) {
      const own = new AbortController();
      this.own = own;
      const outer = this.outer;
      if (this.ended !== undefined) {
        if (this.ended !== NOT_ABORTED) own.abort(this.ended);
      } else if (outer?.aborted) own.abort(abortReason(outer));
      else if (outer !== undefined) {
        this.onOuterAbort = () => own.abort(abortReason(outer));
        outer.addEventListener("abort", this.onOuterAbort, { once: true });
      }
    }
    return this.own.signal;
  }

  /** The attempt was cut off: a signal the tool read aborts with the timeout (one read later is made aborted). */
  abort(reason: unknown): void {
    if (this.own !== undefined) this.own.abort(reason);
    else this.ended ??= this.outer?.aborted ? abortReason(this.outer) : reason;
  }

  /** The attempt ended: no listener is left on the caller's signal, and a signal first read later does not follow it. */
  release(): void {
    if (this.onOuterAbort !== undefined) this.outer?.removeEventListener("abort", this.onOuterAbort);
    this.onOuterAbort = undefined;
    if (this.own === undefined) this.ended ??= this.outer?.aborted ? abortReason(this.outer) : NOT_ABORTED;
  }
}

// One kept: see `keepShape`.
keepShape(new AttemptContext(1, undefined, "", undefined, undefined));

/** One attempt under watch: settles with the tool, or with `TIMEOUT` when its group's time passes. */
class CoarseAttempt<T> implements Watched {
  prev: Watched | undefined = undefined;
  next: Watched | undefined = undefined;
  group: Group | undefined = undefined;
  settled = false;
  tool: Promise<T> | undefined = undefined;

  constructor(
    private readonly engine: Engine,
    private readonly context: AttemptContext,
    private readonly write: boolean,
    private readonly info: CallInfo | undefined,
    private readonly resolve: (value: T) => void,
    private readonly reject: (error: unknown) => void,
  ) {}

  value(value: T): void {
    if (this.settle()) this.resolve(value);
  }

  failure(error: unknown): void {
    if (this.settle()) this.reject(error);
  }

  expire(): void {
    if (this.settled) return;
    this.settled = true;
    const { context } = this;
    const tool = this.tool as Promise<T>;
    const error = cutOff(
      this.engine,
      context.toolName,
      context.attempt,
      this.info,
      this.engine.deadlines.limitMs,
      this.write,
      tool,
      (cut) => context.abort(cut),
    );
    context.release();
    this.reject(error);
  }

  /** The tool settled first: true (and the watch left) unless the attempt already ended. */
  private settle(): boolean {
    if (this.settled) return false;
    this.settled = true;
    this.engine.deadlines.leave(this);
    this.context.release();
    return true;
  }
}

// One kept: see `keepShape`.
keepShape(
  new CoarseAttempt<unknown>(
    undefined as never,
    undefined as never,
    false,
    undefined,
    () => {},
    () => {},
  ),
);

/** Runs the tool once under the default limit: its result, or `TIMEOUT` past the limit (the tool may still be running). */
export function coarseAttempt<T>(
  engine: Engine,
  fn: ToolFunction<unknown, T>,
  self: unknown,
  args: unknown,
  context: AttemptContext,
  write: boolean,
  info: CallInfo | undefined,
): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const attempt = new CoarseAttempt<T>(engine, context, write, info, resolve, reject);
    engine.deadlines.watch(attempt);
    const tool = callTool(fn, self, args, context);
    attempt.tool = tool;
    tool.then(
      (value) => attempt.value(value),
      (error: unknown) => attempt.failure(error),
    );
  });
}
