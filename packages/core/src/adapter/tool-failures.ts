import {
  createToolError,
  isToolErrorShape,
  pauseStackTraces,
  resumeStackTraces,
  type ToolError,
  toolErrorInitOf,
} from "../errors/tool-error.js";
import { isRecord } from "./host-options.js";
import { invalidArgumentsError, problemsFromIssues } from "./schema-issues.js";

/**
 * The error a host's failure result stands for when it holds no structured error: the result's
 * text is the message (which the core classifies: `HTTP 503` is transient), and the result is
 * kept. Adapters give it their own name (`ToolMessageError`, `ToolResultError`). No stack trace is
 * captured: its `stack` is its first line only.
 */
export class ReturnedFailureError<R = unknown> extends Error {
  /** The result the host returned. */
  readonly result: R;

  constructor(name: string, result: R, message: string) {
    const limit = pauseStackTraces();
    try {
      super(message);
    } finally {
      resumeStackTraces(limit);
    }
    this.name = name;
    this.result = result;
  }
}

/**
 * The text of a tool result's content: a string as it is; in an array (LangChain content blocks,
 * MCP `content`), the strings and the `text` of each block that has one, joined by newlines.
 */
export function textOfContent(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content
    .map((block) => (typeof block === "string" ? block : isRecord(block) && typeof block.text === "string" ? block.text : ""))
    .filter(Boolean)
    .join("\n");
}

/**
 * The JSON object a result's text holds when it reads as an error report: one JSON object that
 * mentions `"error_code"` (the structured error shape) or `"isError"` (an MCP result passed on as
 * text). Undefined otherwise: a success's text is not parsed.
 */
export function errorJsonOfText(text: string): Record<string, unknown> | undefined {
  if (!text.includes('"error_code"') && !text.includes('"isError"')) return undefined;
  const trimmed = text.trim();
  if (!trimmed.startsWith("{")) return undefined;
  try {
    const parsed: unknown = JSON.parse(trimmed);
    return isRecord(parsed) ? parsed : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The `ToolError` a failure result reports in the structured error shape (`{ error_code, message,
 * recoverable, ... }`): its structured member (LangChain's `artifact`, MCP's `structuredContent`)
 * when that has the shape, else the JSON object of its text (`errorJsonOfText`) when that has it;
 * `result` is the error's cause. Undefined when neither holds the shape.
 */
export function structuredErrorOf(structured: unknown, textJson: unknown, result: unknown): ToolError | undefined {
  if (isToolErrorShape(structured)) return createToolError(toolErrorInitOf(structured, result));
  return isToolErrorShape(textJson) ? createToolError(toolErrorInitOf(textJson, result)) : undefined;
}

/** A zod validation error with its `issues`: zod 3 and 4 (`ZodError`), zod 4 mini and core (`$ZodError`). */
export function isZodError(value: unknown): value is Error & { readonly issues: readonly unknown[] } {
  return (
    value instanceof Error &&
    (value.name === "ZodError" || value.name === "$ZodError") &&
    Array.isArray((value as { issues?: unknown }).issues)
  );
}

/**
 * The `INVALID_ARGUMENTS` error a zod error stands for (one line per bad field, read against `args`),
 * or undefined when `error` is none. Its cause: the zod error by default, or what the host threw when
 * the zod error comes from parsing the input again to name the fields.
 */
export function zodArgumentsError(error: unknown, args: unknown, cause: unknown = error): ToolError | undefined {
  return isZodError(error) ? invalidArgumentsError(problemsFromIssues(error.issues, args), cause) : undefined;
}
