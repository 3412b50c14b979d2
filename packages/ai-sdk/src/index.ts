export type { ScopeInput, WithRetryReflectOptions } from "./adapter-options.js";
export { availableTools } from "./available-tools.js";
export { RetryReflectToolError } from "./retry-reflect-tool-error.js";
export { getToolContext } from "./tool-context.js";
export type { ToolExecutionOptionsLike, ToolLike, ToolSetLike } from "./tool-types.js";
export { withRetryReflect } from "./with-retry-reflect.js";
