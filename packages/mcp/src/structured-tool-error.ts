import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { ToolError, type ToolErrorJSON } from "@retry-reflect/core";
import { classifyError, cleanErrorText, defaultRedactor, isToolErrorShape } from "@retry-reflect/core/primitives";

/** Longest message `structuredToolError` puts in a result (the core's default `maxErrorLength`). */
const MAX_MESSAGE_LENGTH = 1000;
/** What stands for `details` that cannot be written as JSON (as the core writes it). */
const UNSERIALIZABLE = "[unserializable]";

export interface StructuredToolErrorOptions {
  /**
   * Put the structured error in `structuredContent` too. Turn it off for a tool that declares an
   * `outputSchema` the error shape does not match: the SDK's `Client` checks `structuredContent`
   * against it even on an error result. The text block always holds the same JSON.
   * @default true
   */
  readonly structuredContent?: boolean;
}

/**
 * For MCP servers: turns what a tool handler caught into the `CallToolResult` of the seed's error
 * shape, so that clients (and the model) can branch on `error_code`:
 * ```ts
 * server.registerTool("get_weather", { inputSchema: { city: z.string() } }, async ({ city }) => {
 *   try {
 *     return { content: [{ type: "text", text: JSON.stringify(await weather(city)) }] };
 *   } catch (error) {
 *     return structuredToolError(error);
 *   }
 * });
 * ```
 * A `ToolError` (or the plain shape `{ error_code, message, recoverable, suggested_action }`) keeps
 * its code, `recoverable`, `suggested_action`, `retry_after_ms` and `details`; any other error is
 * classified as the core does (`HTTP 503` → `TRANSIENT`, a bad-input message → `INVALID_ARGUMENTS`,
 * else `TOOL_FAILED`). The message is cleaned (no stack lines, secrets redacted, at most 1000
 * characters); `details` that JSON cannot write become `{ truncated: "[unserializable]" }`. The result has `isError: true`, the structured error as JSON in its one text block
 * (the MCP spec's advice for structured content), and the same object as `structuredContent`.
 */
export function structuredToolError(error: unknown, options: StructuredToolErrorOptions = {}): CallToolResult {
  const toolError = ToolError.isInstance(error) ? error : isToolErrorShape(error) ? ToolError.fromJSON(error) : classifyError(error);
  let json: ToolErrorJSON = {
    ...toolError.toJSON(),
    message: cleanErrorText(toolError.message, { maxLength: MAX_MESSAGE_LENGTH, redact: defaultRedactor }),
  };
  let text: string;
  try {
    text = JSON.stringify(json);
  } catch {
    // `details` that JSON cannot write (a cycle, a BigInt, nested past the stack, a getter that throws): left out, said so.
    json = { ...json, details: { truncated: UNSERIALIZABLE } };
    text = JSON.stringify(json);
  }
  const result: CallToolResult = { content: [{ type: "text", text }], isError: true };
  if (options.structuredContent !== false) result.structuredContent = json as unknown as Record<string, unknown>;
  return result;
}
