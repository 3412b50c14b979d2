// `@retry-reflect/core/adapter`: what every framework adapter needs to run a host's tool call under
// the plugin, so that its own code is only glue; for a host that serves requests (an MCP server),
// the idempotency guard of its writes (`RequestGuard`). Option checks: `/adapter/options`; failures: `/adapter/failures`.

export {
  annotatedBinding,
  BoundToolCall,
  type HostOutcome,
  type HostToolCall,
  runToolCall,
  type ScopedToolCallBinding,
} from "./adapter/host-call.js";
export { RetryReflectToolError, valueOrToolError } from "./adapter/retry-reflect-tool-error.js";
export { getToolContext, lendToolContext, withToolContext } from "./adapter/tool-context.js";
export { availableToolNames, type ToolSetWrapper, toolSetWrapper } from "./adapter/tool-copy.js";
export type { ThrownReading } from "./call/call.js";
export { abortReason } from "./clock.js";
export { pauseStackTraces, resumeStackTraces } from "./errors/tool-error.js";
export type { RequestGuardOptions } from "./idempotency/request-guard.js";
export { RequestGuard } from "./idempotency/request-guard.js";
export { isolatedCircuitNote, openCircuitNote } from "./texts/model-texts.js";
