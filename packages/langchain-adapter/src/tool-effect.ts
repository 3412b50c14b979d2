import type { ToolEffect } from "@retry-reflect/core";
import { isToolEffect } from "@retry-reflect/core/adapter/options";

/** A tool as far as its effect is concerned: LangChain tools carry free-form `metadata`. */
export interface ToolWithMetadata {
  readonly metadata?: Record<string, unknown> | undefined;
}

/**
 * The effect of a tool call: the `toolEffects` option when it names the tool, else the tool's
 * `metadata.effect` (`"read"`, `"idempotent"` or `"write"`), else undefined (the plugin's
 * `toolEffects` / `defaultEffect` decide).
 */
export function effectOf(
  toolName: string,
  tool: ToolWithMetadata | undefined,
  toolEffects: Readonly<Record<string, ToolEffect>> | undefined,
): ToolEffect | undefined {
  const configured = toolEffects?.[toolName];
  if (configured !== undefined) return configured;
  const declared = tool?.metadata?.effect;
  return isToolEffect(declared) ? declared : undefined;
}
