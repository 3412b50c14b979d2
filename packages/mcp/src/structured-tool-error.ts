import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { ToolError } from "@retry-reflect/core";
import { classifyError, cleanToolError, isToolErrorShape } from "@retry-reflect/core/primitives";

/** Longest `message` and `suggested_action`, and longest string in `details` (the core's default `maxErrorLength`). */
const MAX_TEXT_LENGTH = 1000;

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
 * else `TOOL_FAILED`). Every text is cleaned as the core cleans what reaches the model: `message`
 * and `suggested_action` without stack lines, control characters or secrets, at most 1000
 * characters each; `details` a plain copy, redacted, each string at most 1000 characters, at most 8
 * levels deep, with `"[unserializable]"` for what cannot be written (a cycle, a getter that throws,
 * nesting past the cap; BigInts as strings); an `error_code` that is not `UPPER_SNAKE_CASE` becomes
 * `TOOL_FAILED`. The result has `isError: true`, the structured error as JSON in its one text block
 * (the MCP spec's advice for structured content), and the same object as `structuredContent`.
 */
export function structuredToolError(error: unknown, options: StructuredToolErrorOptions = {}): CallToolResult {
  const toolError = ToolError.isInstance(error) ? error : isToolErrorShape(error) ? ToolError.fromJSON(error) : classifyError(error);
  const json = cleanToolError(toolError, { maxErrorLength: MAX_TEXT_LENGTH }).toJSON();
  const text = JSON.stringify(json);
  const result: CallToolResult = { content: [{ type: "text", text }], isError: true };
  if (options.structuredContent !== false) result.structuredContent = json as unknown as Record<string, unknown>;
  return result;
}
