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
export type { ToolContextMode } from "./run-tool.js";
export { outcomeToolMessage } from "./tool-message.js";
export { effectOf } from "./tool-effect.js";
export { toFailure, failureOfResult, ToolMessageError } from "./to-failure.js";
