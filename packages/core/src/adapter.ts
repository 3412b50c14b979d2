// `@retry-reflect/core/adapter`: what every framework adapter needs, so that its own code is only
// glue: run a host's tool call under the plugin (with the healthy fast path), tell returned
// failures from results, and render schema failures for the model.

export { randomScope } from "./adapter/host-options.js";
export { isPlugin } from "./adapter/is-plugin.js";
export { renderValue } from "./adapter/render-value.js";
export {
  canCallDirectly,
  type DirectAttempt,
  type HostOutcome,
  type HostToolCall,
  recordDirectSuccess,
  runToolCall,
} from "./adapter/run-tool-call.js";
export {
  type ArgumentProblem,
  describeProblem,
  INVALID_ARGUMENTS_ACTION,
  invalidArgumentsError,
  problemsFromIssues,
  problemsFromJsonSchemaErrors,
} from "./adapter/schema-issues.js";
export { isReturnedFailure } from "./classify/classify-error.js";
export { isToolErrorShape } from "./errors/tool-error.js";
