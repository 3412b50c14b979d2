import { InvalidOptionError, type ToolEffect } from "@retry-reflect/core";
import type { ToolContextMode } from "./run-tool.js";

const EFFECTS: readonly ToolEffect[] = ["read", "idempotent", "write"];
const TOOL_CONTEXT_MODES: readonly ToolContextMode[] = ["writes", "all"];

/** The adapter's own options, checked once; an invalid one throws `InvalidOptionError` naming it and the value. */
export function checkAdapterOptions(options: {
  name?: unknown;
  scope?: unknown;
  namespace?: unknown;
  toolContext?: unknown;
  effect?: unknown;
  hideOpenCircuitTools?: unknown;
}): void {
  const { name, scope, namespace, toolContext, effect, hideOpenCircuitTools } = options;
  if (name !== undefined && (typeof name !== "string" || name.length === 0))
    throw new InvalidOptionError("name", name, "a non-empty string");
  if (scope !== undefined && typeof scope !== "function") throw new InvalidOptionError("scope", scope, "a function");
  if (namespace !== undefined && typeof namespace !== "function") throw new InvalidOptionError("namespace", namespace, "a function");
  if (toolContext !== undefined && !TOOL_CONTEXT_MODES.includes(toolContext as ToolContextMode)) {
    throw new InvalidOptionError("toolContext", toolContext, `one of ${TOOL_CONTEXT_MODES.map((mode) => `"${mode}"`).join(", ")}`);
  }
  if (effect !== undefined && !EFFECTS.includes(effect as ToolEffect)) {
    throw new InvalidOptionError("effect", effect, `one of ${EFFECTS.map((each) => `"${each}"`).join(", ")}`);
  }
  if (hideOpenCircuitTools !== undefined && typeof hideOpenCircuitTools !== "boolean") {
    throw new InvalidOptionError("hideOpenCircuitTools", hideOpenCircuitTools, "a boolean");
  }
}
