import {
  type AnnotatedToolOptions,
  type CheckedAnnotatedToolOptions,
  checkAnnotatedToolOptions,
} from "@retry-reflect/core/adapter/options";
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

/**
 * Options of the adapter itself (the plugin's are the second argument of `withRetryReflect`):
 * `scope`, `namespace`, `toolEffects` and `trustAnnotations` (see {@link AnnotatedToolOptions});
 * `scope` and `namespace` functions get the call as an {@link McpCallInfo}. The default scope is one
 * random scope per wrapped client: wrap a client per agent run, or pass a function, for per-run budgets.
 */
export interface RetryReflectMcpOptions extends AnnotatedToolOptions<(call: McpCallInfo) => string> {
  /**
   * Whose writes these are: a stored write result is replayed only to a call of the same namespace
   * (pass the conversation, request or tenant id: one wrapped client may serve every user). A
   * non-empty string, or a function of the call (asked only for a `write`).
   * @default the `scope` option's scope when it is given; else each call's own (nothing replayed across calls: the client tells no caller)
   */
  readonly namespace?: string | ((call: McpCallInfo) => string);
}

/** The adapter options, checked. */
export type CheckedOptions = CheckedAnnotatedToolOptions<(call: McpCallInfo) => string>;

/** Checks the adapter options once (the options every adapter of annotated tools takes); an invalid one throws `InvalidOptionError` naming it and the value. */
export function checkAdapterOptions(given: unknown): CheckedOptions {
  return checkAnnotatedToolOptions(given);
}
