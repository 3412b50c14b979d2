import { ErrorCodes, type ToolError } from "@retry-reflect/core";
import {
  createToolError,
  errorJsonOfText,
  invalidArgumentsError,
  isZodError,
  ReturnedFailureError,
  structuredErrorOf,
  textOfContent,
} from "@retry-reflect/core/adapter/failures";
import { isRecord } from "@retry-reflect/core/adapter/options";
import { DEFAULT_SUGGESTED_ACTIONS } from "@retry-reflect/core/primitives";
import { RPC_INVALID_PARAMS, RPC_REQUEST_TIMEOUT } from "./mcp-types.js";

/** The suggested action of a server whose result breaks its own declared output. */
export const SERVER_FAULT_ACTION =
  "The tool's server returned a result that does not match what it declares; other arguments cannot fix this. Do not call it again for this task; tell the user the tool is not working.";

/**
 * The error an MCP result with `isError: true` stands for, when it holds no structured error. Its
 * message is the result's text; `result` is the `isError` result the server returned.
 */
export class ToolResultError extends ReturnedFailureError<unknown> {
  constructor(result: unknown, message: string) {
    super("ToolResultError", result, message);
  }
}

/** `MCP error -32602: ...`: what `McpError` makes of its message, and what `McpServer` returns for an `McpError` a tool threw. */
const MCP_ERROR_TEXT = /^MCP error (-?\d+): ([\s\S]*)$/;

/** The client's own checks of a result against the tool's output schema (reported as -32602 too), and the server's of its own result (`Invalid tools/call result`). */
const OUTPUT_CHECK = /output schema|structured content|output validation|tools\/call result/i;

function serverFault(message: string, cause: unknown): ToolError {
  return createToolError({ code: ErrorCodes.TOOL_FAILED, message, recoverable: false, suggestedAction: SERVER_FAULT_ACTION, cause });
}

/** What a JSON-RPC error code means to the plugin, or undefined to leave the error to the core's classifier. */
function failureOfCode(code: number, message: string, cause: unknown): ToolError | undefined {
  if (code === RPC_REQUEST_TIMEOUT) {
    return createToolError({
      code: ErrorCodes.TIMEOUT,
      message,
      recoverable: true,
      suggestedAction: DEFAULT_SUGGESTED_ACTIONS.TIMEOUT,
      kind: "transient",
      cause,
    });
  }
  if (code === RPC_INVALID_PARAMS) {
    return OUTPUT_CHECK.test(message) ? serverFault(message, cause) : invalidArgumentsError([], cause, message);
  }
  return undefined;
}

/** A message without the `MCP error -32602: ` prefix (protocol noise to the model: the code says it). */
function withoutPrefix(message: string): { code: number | undefined; message: string } {
  const match = MCP_ERROR_TEXT.exec(message);
  return match === null ? { code: undefined, message } : { code: Number(match[1]), message: match[2] ?? "" };
}

/**
 * The failure an MCP tool result stands for, or undefined for a success (no `isError: true`):
 * - `structuredContent` in the structured error shape (`{ error_code, message, recoverable, suggested_action, retry_after_ms? }`),
 *   or a text that is that shape as JSON: a `ToolError` keeping its code, `recoverable` and `retry_after_ms`;
 * - a text `MCP error -32602: ...` (what `McpServer` returns when the arguments fail the tool's input schema):
 *   `INVALID_ARGUMENTS`; `MCP error -32001: ...`: `TIMEOUT` (transient);
 * - any other text: a `ToolResultError` with that text, which the core classifies (`HTTP 503` is transient, ...).
 */
export function failureOfResult(result: unknown): Error | undefined {
  if (!isRecord(result) || result.isError !== true) return undefined;
  const text = textOfContent(result.content);
  const reported = structuredErrorOf(result.structuredContent, errorJsonOfText(text), result);
  if (reported !== undefined) return reported;
  const { code, message } = withoutPrefix(text);
  const cause = new ToolResultError(result, message || "The tool call failed.");
  return (code === undefined ? undefined : failureOfCode(code, message, cause)) ?? cause;
}

/**
 * What a thrown error of `callTool` means to the plugin (the caller's abort is handled before):
 * - an `McpError` -32001 (`RequestTimeout`: the SDK's request timeout): `TIMEOUT`, transient;
 * - an `McpError` -32602 (`InvalidParams`: the server rejected the arguments): `INVALID_ARGUMENTS`,
 *   unless it is the client's check of the result against the tool's output schema (a server fault);
 * - a zod error (`ZodError`, or `$ZodError` from zod 4 mini, as the SDK's own parse throws: the
 *   result did not parse as a `CallToolResult`): a server fault, not recoverable;
 * - anything else is left to the core's classifier, unchanged.
 */
export function failureOfThrown(error: unknown): unknown {
  if (isZodError(error)) return serverFault(`The tool's result is not a valid MCP result: ${error.message}`, error);
  if (!isRecord(error)) return error;
  const code = error.code;
  const rawMessage = typeof error.message === "string" ? error.message : "";
  if (typeof code === "number") return failureOfCode(code, withoutPrefix(rawMessage).message, error) ?? error;
  return error;
}
