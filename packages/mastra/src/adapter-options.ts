import type { ToolExecutionContext } from "@mastra/core/tools";
import { InvalidOptionError, type ToolEffect } from "@retry-reflect/core";
import { type AnnotatedToolOptions, isRecord } from "@retry-reflect/core/adapter/options";

/** What a `scope` or `namespace` function sees of a tool call. */
export interface ToolCallInput {
  /** The tool's name: its key in the tools object. */
  readonly toolName: string;
  /** The model's tool-call id (`context.agent.toolCallId`), when an agent made the call. */
  readonly callId: string | undefined;
  /** The tool's input, as Mastra validated it. */
  readonly input: unknown;
  /**
   * Mastra's execution context of the call: `agent` (`threadId`, `resourceId`), `workflow`
   * (`runId`), `requestContext`; undefined for a tool called by hand without one.
   */
  readonly context: ToolExecutionContext | undefined;
}

/** A `scope` or `namespace` option: one non-empty string, or a function of the call. */
export type ScopeOption = string | ((call: ToolCallInput) => string);

/** Options of the adapter itself (the plugin's go in the second argument). */
export interface WithRetryReflectOptions extends AnnotatedToolOptions<(call: ToolCallInput) => string> {
  /**
   * The attempt-tracking scope of a call: retries, reflections and the backoff gate are counted per
   * (scope, tool). @default one scope per run: the run id Mastra gives the tool (an agent's
   * `generate`/`stream`, a workflow run); for a call without one (a tool called by hand), one
   * scope per `withRetryReflect` call
   */
  readonly scope?: ScopeOption;
  /**
   * Whose writes these are: a stored write result is replayed only to a call of the same namespace
   * (pass the user or tenant: `({ context }) => context?.agent?.resourceId ?? "anonymous"`, or a
   * value of your `requestContext`). Asked only for a `write`. @default the scope (so one namespace
   * per run: two runs never share a replay)
   */
  readonly namespace?: ScopeOption;
  /**
   * `"read"`, `"idempotent"` or `"write"` per tool name; wins over the plugin's `toolEffects`,
   * `tools[name].effect` and `defaultEffect`. @default {}
   */
  readonly toolEffects?: Readonly<Record<string, ToolEffect>>;
  /**
   * Read a tool's effect from its MCP annotations (`mcp.annotations`: `readOnlyHint`,
   * `idempotentHint`, `destructiveHint`) when neither `toolEffects` nor the plugin's `toolEffects`
   * names it. The MCP spec calls them hints that an untrusted server may get wrong: set `false`
   * for such tools (then the plugin's `defaultEffect` applies). @default true
   */
  readonly trustAnnotations?: boolean;
}

/** Mastra's mark on its tools (`createTool`), which its own check (`isMastraTool`) reads. */
const MASTRA_TOOL_MARKER = Symbol.for("mastra.core.tool.Tool");

/**
 * Checks that `tools` is an object of Mastra tools (what `createTool` returns), each with an
 * `execute`. An AI SDK tool is refused with the adapter to use instead: Mastra calls it with the AI
 * SDK's options, not its own context.
 */
export function checkTools(tools: unknown): asserts tools is Record<string, Record<string, unknown>> {
  if (!isRecord(tools) || Array.isArray(tools)) {
    throw new InvalidOptionError("tools", tools, "an object of Mastra tools (what createTool returns), by name");
  }
  for (const [name, tool] of Object.entries(tools)) {
    if (!isRecord(tool) || !(MASTRA_TOOL_MARKER in tool)) {
      throw new InvalidOptionError(
        `tools.${name}`,
        tool,
        "a Mastra tool (what createTool returns); wrap AI SDK tools with withRetryReflect of @retry-reflect/ai-sdk, which Mastra agents accept as they are",
      );
    }
    const execute: unknown = (tool as { execute?: unknown }).execute;
    if (typeof execute !== "function") throw new InvalidOptionError(`tools.${name}.execute`, execute, "a function");
  }
}
