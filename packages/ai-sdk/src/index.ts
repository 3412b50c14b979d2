export { RetryReflectToolError } from "@retry-reflect/core/adapter";
export type { ScopeInput, WithRetryReflectOptions } from "./adapter-options.js";
export { availableTools } from "./available-tools.js";
export { getToolContext } from "./tool-context.js";
export type { ToolExecutionOptionsLike, ToolLike, ToolSetLike } from "./tool-types.js";
export { withRetryReflect } from "./with-retry-reflect.js";
