import { InvalidOptionError } from "@retry-reflect/core";
import { checkEffect, checkScopeOption } from "@retry-reflect/core/adapter/options";
import type { ToolContextMode } from "./run-tool.js";

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
  checkScopeOption("scope", scope, "string or function");
  checkScopeOption("namespace", namespace, "string or function");
  if (toolContext !== undefined && !TOOL_CONTEXT_MODES.includes(toolContext as ToolContextMode)) {
    throw new InvalidOptionError("toolContext", toolContext, `one of ${TOOL_CONTEXT_MODES.map((mode) => `"${mode}"`).join(", ")}`);
  }
  if (effect !== undefined) checkEffect("effect", effect);
  if (hideOpenCircuitTools !== undefined && typeof hideOpenCircuitTools !== "boolean") {
    throw new InvalidOptionError("hideOpenCircuitTools", hideOpenCircuitTools, "a boolean");
  }
}
