// `@retry-reflect/core/adapter`: what every framework adapter needs, so that its own code is only
// glue: run a host's tool call under the plugin (with the healthy fast path), tell returned
// failures from results, and render schema failures for the model.
export { canCallDirectly, recordDirectSuccess, runToolCall, type DirectAttempt, type HostOutcome, type HostToolCall } from "./adapter/run-tool-call.js";
export {
  describeProblem,
  invalidArgumentsError,
  problemsFromIssues,
  problemsFromJsonSchemaErrors,
  INVALID_ARGUMENTS_ACTION,
  type ArgumentProblem,
} from "./adapter/schema-issues.js";
export { renderValue } from "./adapter/render-value.js";
export { isReturnedFailure } from "./classify/classify-error.js";
export { isToolErrorShape } from "./errors/tool-error.js";
