export { type EffectHints, effectOfAnnotations } from "@retry-reflect/core/adapter/options";
export type { McpCallInfo, RetryReflectMcpOptions } from "./adapter-options.js";
export type { CallToolOptions, CallToolParams, CallToolResponse, McpClientLike } from "./mcp-types.js";
export { OUTCOME_META_KEY, outcomeResult, SERVER_STRUCTURED_CONTENT_META_KEY } from "./outcome-result.js";
export { type StructuredToolErrorOptions, structuredToolError } from "./structured-tool-error.js";
export { failureOfResult, failureOfThrown, SERVER_FAULT_ACTION, ToolResultError } from "./to-failure.js";
export { type IdempotencyExtra, REPLAYED_META_KEY, type WithIdempotencyOptions, withIdempotency } from "./with-idempotency.js";
export { IDEMPOTENCY_META_KEY, type RetryReflectClient, withRetryReflect } from "./with-retry-reflect.js";
