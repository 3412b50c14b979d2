export { getToolContext, RetryReflectToolError } from "@retry-reflect/core/adapter";
export type { ScopeOption, ToolCallInput, WithRetryReflectOptions } from "./adapter-options.js";
export { availableTools } from "./available-tools.js";
export { withRetryReflect } from "./with-retry-reflect.js";
