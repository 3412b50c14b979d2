// `@retry-reflect/core/adapter`: what every framework adapter needs to run a host's tool call under
// the plugin, so that its own code is only glue: the call itself (`runToolCall`, and
// `BoundToolCall`, the base of every adapter's call), the error a host shows the model, the attempt's context a
// tool reads, a tool set wrapped once, the notes for tools left out while their circuit is open,
// an aborted call's reason, and, for a host that serves requests (an MCP server), the idempotency
// guard of its writes (`RequestGuard`). Checking the options every adapter takes is in
// `/adapter/options`; telling returned failures from results and rendering schema failures, in
// `/adapter/failures`.

export { annotatedBinding, BoundToolCall, type ScopedToolCallBinding } from "./adapter/bound-tool-call.js";
export { RetryReflectToolError, valueOrToolError } from "./adapter/retry-reflect-tool-error.js";
export { type HostOutcome, type HostToolCall, runToolCall } from "./adapter/run-tool-call.js";
export { getToolContext, lendToolContext, withToolContext } from "./adapter/tool-context.js";
export { availableToolNames, type ToolSetWrapper, toolSetWrapper } from "./adapter/tool-copy.js";
export type { ThrownReading } from "./call/call.js";
export { abortReason } from "./clock.js";
export { pauseStackTraces, resumeStackTraces } from "./errors/tool-error.js";
export { RequestGuard } from "./idempotency/request-guard.js";
export type { RequestGuardOptions } from "./idempotency/request-guard-options.js";
export { isolatedCircuitNote, openCircuitNote } from "./texts/model-texts.js";
