import { InvalidOptionError, type ToolEffect } from "@retry-reflect/core";
import { type AnnotatedToolOptions, isRecord } from "@retry-reflect/core/adapter";
import type { ToolExecutionOptionsLike } from "./tool-types.js";

/** What a `scope` function sees of a tool call. */
export interface ScopeInput {
  /** The tool's name: its key in the `ToolSet`. */
  readonly toolName: string;
  /** The model's tool-call id. */
  readonly toolCallId: string;
  /** The tool's input, as the AI SDK parsed it. */
  readonly input: unknown;
  /** The AI SDK's execution options (`messages`, `abortSignal`, `experimental_context` ...). */
  readonly options: ToolExecutionOptionsLike;
}

/** Options of the adapter itself (the plugin's go in the second argument). */
export interface WithRetryReflectOptions extends AnnotatedToolOptions<(call: ScopeInput) => string> {
  /**
   * The attempt-tracking scope of a call: retries, reflections and the backoff gate are counted per
   * (scope, tool). A string, or a function of the call (asked only when the plugin needs a scope).
   * @default one scope per `withRetryReflect` call (a random id): wrap the tools per agent run for per-run budgets
   */
  readonly scope?: string | ((call: ScopeInput) => string);
  /**
   * Whose writes these are: a stored write result is replayed only to a call of the same namespace
   * (pass the conversation, request or tenant id). A string, or a function of the call (asked only
   * for a `write`). @default the scope (so, by default, one random namespace per `withRetryReflect` call)
   */
  readonly namespace?: string | ((call: ScopeInput) => string);
  /**
   * `"read"`, `"idempotent"` or `"write"` per tool name; wins over the plugin's `toolEffects`,
   * `tools[name].effect` and `defaultEffect`.
   * @default {}
   */
  readonly toolEffects?: Readonly<Record<string, ToolEffect>>;
  /**
   * Read a tool's effect from the MCP annotations it carries (`metadata.annotations` of the tools
   * `@ai-sdk/mcp`'s `createMCPClient().tools()` returns: `readOnlyHint`, `idempotentHint`,
   * `destructiveHint`) when neither `toolEffects` nor the plugin's `toolEffects` names it. The MCP
   * spec calls them hints that an untrusted server may get wrong: set `false` for such a server
   * (then the plugin's `defaultEffect` applies). @default true
   */
  readonly trustAnnotations?: boolean;
}

/** Checks that `tools` is an AI SDK `ToolSet`: an object of tools, each `execute` a function when present. */
export function checkTools(tools: unknown): asserts tools is Record<string, Record<string, unknown>> {
  if (!isRecord(tools) || Array.isArray(tools)) {
    throw new InvalidOptionError("tools", tools, "an object of AI SDK tools (a ToolSet)");
  }
  for (const [name, tool] of Object.entries(tools)) {
    if (!isRecord(tool)) throw new InvalidOptionError(`tools.${name}`, tool, "an AI SDK tool (an object)");
    const execute: unknown = (tool as { execute?: unknown }).execute;
    if (execute !== undefined && execute !== null && typeof execute !== "function") {
      throw new InvalidOptionError(`tools.${name}.execute`, execute, "a function");
    }
  }
}
