export {
  retryReflectMiddleware,
  DEFAULT_MIDDLEWARE_NAME,
  type RetryReflectMiddleware,
  type RetryReflectMiddlewareConfig,
  type RetryReflectMiddlewareOptions,
  type ScopeInput,
} from "./retry-reflect-middleware.js";
export { withRetryReflect, RetryReflectTool, type ToolScopeInput, type WithRetryReflectOptions } from "./with-retry-reflect.js";
export { getToolContext } from "./tool-context.js";
export type { ToolContextMode } from "./run-guarded.js";
export { outcomeToolMessage } from "./tool-message.js";
export { effectOf } from "./tool-effect.js";
export {
  describeProblem,
  invalidArgumentsError,
  problemsFromIssues,
  INVALID_ARGUMENTS_ACTION,
  type ArgumentProblem,
} from "./invalid-arguments.js";
export { toFailure, failureOfResult, ToolMessageError } from "./to-failure.js";
