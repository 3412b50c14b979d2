import type { ToolError } from "../errors/tool-error.js";

/** Consecutive failures of one tool in one scope. */
export interface TrackedAttempts {
  failures: number;
  /** No attempt starts before this time (`failedAt + backoff` after a reflection). */
  readyAt: number;
  /** The last delay used, for decorrelated jitter. */
  lastDelayMs: number | undefined;
  /** Set once retries are exhausted in this scope: later calls stop at once with this error. */
  exhausted: ToolError | undefined;
}

/**
 * Attempt counters per (scope, tool). Nothing is stored for a tool that has not failed, so the
 * success path only reads. Scopes are kept in least-recently-used order, at most `maxScopes`.
 */
export class AttemptTracker {
  private readonly scopes = new Map<string, Map<string, TrackedAttempts>>();

  constructor(private readonly maxScopes: number) {}

  get(scope: string, toolName: string): TrackedAttempts | undefined {
    return this.scopes.get(scope)?.get(toolName);
  }

  /** The entry to record a failure in (created, and its scope marked recently used). */
  entry(scope: string, toolName: string): TrackedAttempts {
    let tools = this.scopes.get(scope);
    if (tools === undefined) {
      tools = new Map();
    } else {
      this.scopes.delete(scope);
    }
    this.scopes.set(scope, tools);
    if (this.scopes.size > this.maxScopes) {
      const oldest = this.scopes.keys().next().value;
      if (oldest !== undefined) this.scopes.delete(oldest);
    }
    let tracked = tools.get(toolName);
    if (tracked === undefined) {
      tracked = { failures: 0, readyAt: 0, lastDelayMs: undefined, exhausted: undefined };
      tools.set(toolName, tracked);
    }
    return tracked;
  }

  /** A success: the tool's count starts again. */
  clear(scope: string, toolName: string): void {
    const tools = this.scopes.get(scope);
    if (tools === undefined) return;
    tools.delete(toolName);
    if (tools.size === 0) this.scopes.delete(scope);
  }

  /** Forgets a whole scope (an agent run that ended). */
  clearScope(scope: string): void {
    this.scopes.delete(scope);
  }

  get size(): number {
    return this.scopes.size;
  }
}
