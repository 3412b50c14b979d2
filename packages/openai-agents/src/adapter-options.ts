import type { RunContext } from "@openai/agents";
import { InvalidOptionError, type ToolEffect } from "@retry-reflect/core";
import { type CheckedScopedToolOptions, checkScopedToolOptions, isRecord } from "@retry-reflect/core/adapter/options";

/** What a `scope` or `namespace` function sees of a tool call. */
export interface ToolCallInput {
  /** The tool's name, as the model calls it. */
  readonly toolName: string;
  /** The model's call id (`details.toolCall.callId`), when the runner gave one. */
  readonly callId: string | undefined;
  /** The tool's input, as the SDK parsed it. */
  readonly input: unknown;
}

/** A `scope` or `namespace` option: one non-empty string, or a function of the call and the run's context. */
export type ScopeOption<Context> = string | ((call: ToolCallInput, runContext: RunContext<Context> | undefined) => string);

/** Options of the adapter itself (the plugin's go in the second argument). */
export interface WithRetryReflectOptions<Context = unknown> {
  /**
   * The attempt-tracking scope of a call: retries, reflections and the backoff gate are counted per
   * (scope, tool). @default one scope per run (per `RunContext`, a random id): a resumed run (an
   * approval) keeps its scope, a new `run()` starts afresh
   */
  readonly scope?: ScopeOption<Context>;
  /**
   * Whose writes these are: a stored write result is replayed only to a call of the same namespace
   * (pass the conversation or tenant id from your context: `(call, runContext) => runContext.context.tenantId`).
   * Asked only for a `write`. @default the scope (so one namespace per run: two runs never share a replay)
   */
  readonly namespace?: ScopeOption<Context>;
  /**
   * `"read"`, `"idempotent"` or `"write"` per tool name; wins over the plugin's `toolEffects`,
   * `tools[name].effect` and `defaultEffect`. @default {}
   */
  readonly toolEffects?: Readonly<Record<string, ToolEffect>>;
  /**
   * Hide a tool from the model while its circuit is open (through the SDK's `isEnabled`, and'ed
   * with the definition's own): the model stops seeing a broken tool and sees it again once its
   * circuit may be probed (half-open). Off by default: the SDK ends a run with a
   * `ModelBehaviorError` ("Tool … not found") when a model still calls a tool it was not offered
   * (one that saw the tool earlier in the run may), where a visible tool's call waits for its
   * circuit's probe or is told to call again later. @default false
   */
  readonly hideOpenCircuits?: boolean;
}

/** The adapter options, checked. */
export type CheckedOptions<Context> = CheckedScopedToolOptions<
  (call: ToolCallInput, runContext: RunContext<Context> | undefined) => string,
  "hideOpenCircuits"
>;

/** Checks the adapter options once; an invalid one throws `InvalidOptionError` naming it and the value. */
export function checkAdapterOptions<Context>(given: unknown): CheckedOptions<Context> {
  return checkScopedToolOptions(given, "hideOpenCircuits", false);
}

/** Checks that `definitions` is an array of tool definitions (what one passes to the SDK's `tool()`). */
export function checkDefinitions(definitions: unknown): asserts definitions is ReadonlyArray<Record<string, unknown>> {
  if (!Array.isArray(definitions)) {
    throw new InvalidOptionError("definitions", definitions, "an array of tool definitions (the objects one passes to tool())");
  }
  definitions.forEach((definition: unknown, index) => {
    if (!isRecord(definition) || typeof (definition as { invoke?: unknown }).invoke === "function") {
      throw new InvalidOptionError(
        `definitions[${index}]`,
        definition,
        "a tool definition ({ name, description, parameters, execute }), not a built tool: a built tool turns every error into text before a wrapper sees it",
      );
    }
    const execute: unknown = (definition as { execute?: unknown }).execute;
    if (typeof execute !== "function") throw new InvalidOptionError(`definitions[${index}].execute`, execute, "a function");
  });
}
