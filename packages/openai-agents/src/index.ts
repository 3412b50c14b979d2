export { getToolContext, RetryReflectToolError } from "@retry-reflect/core/adapter";
export type { ScopeOption, ToolCallInput, WithRetryReflectOptions } from "./adapter-options.js";
export { SDK_DEFAULT_ERROR_TEXT, type ToolDefinition, withRetryReflect } from "./with-retry-reflect.js";
