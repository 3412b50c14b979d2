// `@retry-reflect/core/adapter`: what every framework adapter needs, so that its own code is only
// glue: run a host's tool call under the plugin, check the options
// every adapter takes (plugin or options, scope, namespace, effects), tell returned failures from
// results, read the structured error out of a result's text, render schema failures for the
// model, write the notes for tools left out while their circuit is open, and reject an aborted
// call with the signal's reason; the error a host shows the model, and the attempt's context a tool reads;
// and, for a host that serves requests (an MCP server), the idempotency guard of its writes (`RequestGuard`).

export { availableToolNames } from "./adapter/available-tools.js";
export { annotatedBinding, BoundToolCall, type ScopedToolCallBinding, type ToolCallBinding } from "./adapter/bound-tool-call.js";
export { type EffectHints, effectOfAnnotations, hintedEffect } from "./adapter/effect-hints.js";
export {
  type AnnotatedToolOptions,
  type CheckedAnnotatedToolOptions,
  type CheckedScopedToolOptions,
  checkAdapterOptionKeys,
  checkAnnotatedToolOptions,
  checkBooleanOption,
  checkEffect,
  checkScopedToolOptions,
  checkScopeOption,
  checkToolEffects,
  isPlainObject,
  isRecord,
  isToolEffect,
  pluginOf,
  randomScope,
  type ScopeOptionForms,
  TOOL_EFFECTS,
} from "./adapter/host-options.js";
export { isPlugin } from "./adapter/is-plugin.js";
export { renderValue } from "./adapter/render-value.js";
export { RetryReflectToolError, valueOrToolError } from "./adapter/retry-reflect-tool-error.js";
export { type HostOutcome, type HostToolCall, runToolCall } from "./adapter/run-tool-call.js";
export { declaresField, declaresKey, keyFieldOf } from "./adapter/schema-fields.js";
export {
  type ArgumentProblem,
  describeProblem,
  INVALID_ARGUMENTS_ACTION,
  invalidArgumentsError,
  problemsFromIssues,
  problemsFromJsonSchemaErrors,
} from "./adapter/schema-issues.js";
export { getToolContext, lendToolContext, withToolContext } from "./adapter/tool-context.js";
export { type ToolSetHost, type ToolSetWrap, type ToolSetWrapper, toolSetWrapper } from "./adapter/tool-copy.js";
export {
  errorJsonOfText,
  isZodError,
  ReturnedFailureError,
  structuredErrorOf,
  textOfContent,
  zodArgumentsError,
} from "./adapter/tool-failures.js";
export type { ThrownReading } from "./call/tool-call.js";
export { isReturnedFailure } from "./classify/classify-error.js";
export { abortReason } from "./clock.js";
export { pauseStackTraces, resumeStackTraces } from "./errors/stack-traces.js";
export { createToolError, isToolErrorShape } from "./errors/tool-error.js";
export { type GuardedRequest, RequestGuard, type RequestGuardHost, type RequestOutcome } from "./idempotency/request-guard.js";
export { REQUEST_GUARD_DEFAULTS, type RequestGuardOptions } from "./idempotency/request-guard-options.js";
export { aboutDuration, isolatedCircuitNote, openCircuitNote } from "./texts/circuit-notes.js";
