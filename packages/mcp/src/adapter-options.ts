import type { ToolEffect } from "@retry-reflect/core";
import { checkAdapterOptionKeys, checkBooleanOption, checkScopeOption, checkToolEffects } from "@retry-reflect/core/adapter";
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
export interface RetryReflectMcpOptions {
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

/** The adapter's options, checked once. */
export interface CheckedOptions {
  readonly scope: RetryReflectMcpOptions["scope"];
  readonly namespace: RetryReflectMcpOptions["namespace"];
  /** No prototype: a tool named `toString` is not an effect. */
  readonly toolEffects: Readonly<Record<string, ToolEffect>>;
  readonly trustAnnotations: boolean;
}

const OPTION_NAMES: readonly string[] = Object.keys({
  scope: true,
  namespace: true,
  toolEffects: true,
  trustAnnotations: true,
} satisfies Record<keyof RetryReflectMcpOptions, true>);

/** Checks the adapter's options; an invalid one throws `InvalidOptionError` naming it and the value. */
export function checkAdapterOptions(given: unknown): CheckedOptions {
  const options = checkAdapterOptionKeys(given, OPTION_NAMES) ?? {};
  const { scope, namespace, toolEffects, trustAnnotations } = options;
  checkScopeOption("scope", scope, "string or function");
  checkScopeOption("namespace", namespace, "string or function");
  return {
    scope: scope as CheckedOptions["scope"],
    namespace: namespace as CheckedOptions["namespace"],
    toolEffects: checkToolEffects(toolEffects),
    trustAnnotations: checkBooleanOption("trustAnnotations", trustAnnotations, true),
  };
}
