/** V8's `Error.stackTraceLimit` (this package is typed without Node's types). */
const V8Error = Error as ErrorConstructor & { stackTraceLimit?: unknown };

/**
 * V8's stack capture, paused around the construction of an error that is data (it stands for a
 * result a tool returned, not a place in code): a capture costs microseconds, measured at 45 % of
 * an MCP call that fails once and is retried in place. Such an error's `stack` is its first line
 * only (`ToolResultError: HTTP 503`). Synchronous: nothing else runs while stacks are paused.
 *
 * ```ts
 * const limit = pauseStackTraces();
 * try { super(message); } finally { resumeStackTraces(limit); }
 * ```
 *
 * Where `Error.stackTraceLimit` is not a number (not V8), or cannot be read or set (a frozen
 * `Error`, an accessor that throws), nothing is paused and the error gets its usual stack.
 */
export function pauseStackTraces(): number | undefined {
  try {
    const limit = V8Error.stackTraceLimit;
    if (typeof limit !== "number" || limit === 0) return undefined;
    V8Error.stackTraceLimit = 0;
    return V8Error.stackTraceLimit === 0 ? limit : undefined;
  } catch {
    return undefined; // a frozen `Error` (a hardened realm), or an accessor that throws: stacks stay on
  }
}

/** Restores what `pauseStackTraces` paused. Never throws. */
export function resumeStackTraces(limit: number | undefined): void {
  if (limit === undefined) return;
  try {
    V8Error.stackTraceLimit = limit;
  } catch {
    // It could be set a moment ago: nothing else is left to do.
  }
}
