import type { ToolEffect } from "../outcome.js";
import type { RetryReflectPlugin } from "../plugin.js";

/** MCP tool annotations (all hints, per the MCP spec); adapters read the three effect hints. */
export interface EffectHints {
  readonly title?: string;
  readonly openWorldHint?: boolean;
  readonly readOnlyHint?: boolean;
  readonly destructiveHint?: boolean;
  readonly idempotentHint?: boolean;
}

/**
 * The effect MCP tool annotations suggest, or undefined when they say nothing:
 * `readOnlyHint: true` → `"read"`; else `idempotentHint: true` → `"idempotent"` (repeating it
 * changes nothing more, even when destructive); else `destructiveHint: true` or `readOnlyHint: false`
 * → `"write"` (the spec's defaults for a tool that is not read-only: destructive, not idempotent).
 * Anything that is not an object of hints says nothing.
 */
export function effectOfAnnotations(annotations: EffectHints | undefined): ToolEffect | undefined {
  if (typeof annotations !== "object" || annotations === null) return undefined;
  if (annotations.readOnlyHint === true) return "read";
  if (annotations.idempotentHint === true) return "idempotent";
  if (annotations.destructiveHint === true || annotations.readOnlyHint === false) return "write";
  return undefined;
}

/**
 * A host tool's effect, as an adapter hands it to the plugin: the adapter's own
 * `toolEffects[toolName]`; else, when the plugin's `toolEffects` does not name the tool and
 * annotations are trusted, what the tool's MCP annotations suggest; undefined lets the plugin
 * decide (its `tools[name].effect`, `defaultEffect`).
 */
export function hintedEffect(
  plugin: RetryReflectPlugin,
  adapterEffects: Readonly<Record<string, ToolEffect>>,
  trustAnnotations: boolean,
  toolName: string,
  annotations: unknown,
): ToolEffect | undefined {
  const given = adapterEffects[toolName];
  if (given !== undefined || !trustAnnotations || plugin.options.toolEffects[toolName] !== undefined) return given;
  return effectOfAnnotations(annotations as EffectHints | undefined);
}
