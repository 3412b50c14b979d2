import type { ToolEffect } from "@retry-reflect/core";
import { type AnnotatedToolOptions, type CheckedAnnotatedToolOptions, checkAnnotatedToolOptions } from "@retry-reflect/core/adapter";
import type { CallToolParams } from "./mcp-types.js";

/** What a `scope` function sees of a tool call. */
export interface McpCallInfo {
  /** `params.name`. */
  readonly toolName: string;
  /** `params.arguments`. */
  readonly args: Record<string, unknown> | undefined;
  /** The `callTool` params as given. */
  readonly params: CallToolParams;
}

/** Options of the adapter itself (the plugin's are the second argument of `withRetryReflect`). */
export interface RetryReflectMcpOptions extends AnnotatedToolOptions<(call: McpCallInfo) => string> {
  /**
   * The attempt-tracking scope of a call: a string, or a function of the call. Wrap a client per
   * agent run (or pass a function) to give each run its own retry budget.
   * @default one random scope per wrapped client (a new one for each `withRetryReflect` call)
   */
  readonly scope?: string | ((call: McpCallInfo) => string);
  /**
   * Whose writes these are: a stored write result is replayed only to a call of the same namespace
   * (pass the conversation, request or tenant id: a client wrapped once serves every user). A
   * string, or a function of the call (asked only for a `write`). @default the scope
   */
  readonly namespace?: string | ((call: McpCallInfo) => string);
  /** Effects per tool name; win over the plugin's `toolEffects`, tool policies and the server's annotations. @default {} */
  readonly toolEffects?: Readonly<Record<string, ToolEffect>>;
  /**
   * Read effects from the server's tool annotations (`readOnlyHint`, `idempotentHint`,
   * `destructiveHint`) for tools whose effect is configured nowhere. The MCP spec calls them hints
   * that an untrusted server may get wrong: set `false` for such a server (then `defaultEffect` applies).
   * @default true
   */
  readonly trustAnnotations?: boolean;
}

/** The adapter options, checked. */
export type CheckedOptions = CheckedAnnotatedToolOptions<(call: McpCallInfo) => string>;

/** Checks the adapter options once (the options every adapter of annotated tools takes); an invalid one throws `InvalidOptionError` naming it and the value. */
export function checkAdapterOptions(given: unknown): CheckedOptions {
  return checkAnnotatedToolOptions(given);
}
