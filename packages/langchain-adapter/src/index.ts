export {
  DEFAULT_MIDDLEWARE_NAME,
  type RetryReflectMiddleware,
  type RetryReflectMiddlewareConfig,
  type RetryReflectMiddlewareOptions,
  retryReflectMiddleware,
  type ScopeInput,
} from "./retry-reflect-middleware.js";
export type { ToolContextMode } from "./run-tool.js";
export { failureOfResult, ToolMessageError, toFailure } from "./to-failure.js";
export { getToolContext } from "./tool-context.js";
export { effectOf } from "./tool-effect.js";
export { outcomeToolMessage } from "./tool-message.js";
export { RetryReflectTool, type ToolScopeInput, type WithRetryReflectOptions, withRetryReflect } from "./with-retry-reflect.js";
