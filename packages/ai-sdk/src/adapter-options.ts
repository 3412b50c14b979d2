import { InvalidOptionError } from "@retry-reflect/core";
import { type AnnotatedToolOptions, isRecord } from "@retry-reflect/core/adapter/options";
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

/**
 * Options of the adapter itself (the plugin's go in the second argument): `scope`, `namespace`,
 * `toolEffects` and `trustAnnotations` (see {@link AnnotatedToolOptions}); `scope` and `namespace`
 * functions get the call as a {@link ScopeInput}.
 */
export interface WithRetryReflectOptions extends AnnotatedToolOptions<(call: ScopeInput) => string> {}

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
