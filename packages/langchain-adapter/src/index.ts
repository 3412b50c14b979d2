export {
  DEFAULT_MIDDLEWARE_NAME,
  type RetryReflectMiddleware,
  type RetryReflectMiddlewareConfig,
  type RetryReflectMiddlewareOptions,
  retryReflectMiddleware,
  type ScopeInput,
  type ScopeOption,
} from "./retry-reflect-middleware.js";
export type { ToolContextMode } from "./run-tool.js";
export { failureOfResult, ToolMessageError, toFailure } from "./to-failure.js";
export { getToolContext } from "./tool-context.js";
export { effectOf } from "./tool-effect.js";
export { outcomeToolMessage } from "./tool-message.js";
export {
  RetryReflectTool,
  type ToolScopeInput,
  type ToolScopeOption,
  type WithRetryReflectOptions,
  withRetryReflect,
} from "./with-retry-reflect.js";
