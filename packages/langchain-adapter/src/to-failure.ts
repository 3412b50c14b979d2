import { getRetryable } from "@langchain/core/errors";
import { ToolMessage } from "@langchain/core/messages";
import { ToolInputParsingException } from "@langchain/core/tools";
import { interopSafeParseAsync, isInteropZodSchema } from "@langchain/core/utils/types";
import { isGraphBubbleUp } from "@langchain/langgraph";
import type { ThrownReading } from "@retry-reflect/core/adapter";
import {
  errorJsonOfText,
  invalidArgumentsError,
  ReturnedFailureError,
  structuredErrorOf,
  textOfContent,
  zodArgumentsError,
} from "@retry-reflect/core/adapter/failures";

/** The members of LangChain's errors read here (`~brand` names the class across package copies). */
type LangChainErrorMembers = { readonly "~brand"?: unknown; readonly cause?: unknown; readonly toolError?: unknown } | null;

/** LangChain's `MiddlewareError` (thrown by an inner middleware) hides the real error in `cause`. */
function unwrapMiddlewareErrors(error: unknown): unknown {
  let current = error;
  for (let depth = 0; depth < 10 && typeof current === "object"; depth++) {
    const members = current as LangChainErrorMembers;
    if (members?.["~brand"] !== "MiddlewareError" || members.cause === undefined) break;
    current = members.cause;
  }
  return current;
}

/**
 * LangChain's own "retry or not" mark on a thrown error (`stampRetryable` / `getRetryable` of
 * `@langchain/core/errors`, which `toolRetryMiddleware` honours): `false` for an error that fails
 * the same way again (LangChain marks aborts and 4xx answers of model calls so), `true` for one
 * worth repeating, undefined when unmarked. The first mark on the error or on the errors that an
 * inner middleware's `MiddlewareError` wraps counts.
 */
export function retryableMark(error: unknown): boolean | undefined {
  let current = error;
  for (let depth = 0; depth < 10; depth++) {
    const mark = getRetryable(current);
    const members = typeof current === "object" ? (current as LangChainErrorMembers) : null;
    if (mark !== undefined || members?.["~brand"] !== "MiddlewareError") return mark;
    current = members.cause;
  }
  return undefined;
}

const PARSING_MESSAGE = "Received tool input did not match expected schema";

function isParsingException(error: unknown): boolean {
  return error instanceof ToolInputParsingException || (error instanceof Error && error.message.startsWith(PARSING_MESSAGE));
}

/**
 * Turns what a LangChain tool call threw into the failure the core classifies:
 * - `ToolInvocationError` (what `createAgent`'s ToolNode throws for bad input) and
 *   `ToolInputParsingException` become `INVALID_ARGUMENTS`, naming each bad field, its allowed
 *   values and what was received (the schema is re-checked to recover the details);
 * - a `ZodError` thrown by the tool itself likewise;
 * - inner middleware's `MiddlewareError` is unwrapped;
 * - anything else is returned unchanged.
 */
export async function toFailure(thrown: unknown, schema: unknown, args: unknown): Promise<unknown> {
  return (await readThrown(thrown, schema, args)).failure;
}

/**
 * What the core reads of an error a LangChain tool call threw (`HostToolCall.readThrown`), as one
 * value: LangGraph control flow (an interrupt, `Command` bubbling) passes through untouched; else the
 * failure `toFailure` describes, with LangChain's retryable mark (`retryableMark`).
 */
export async function readThrown(thrown: unknown, schema: unknown, args: unknown): Promise<ThrownReading> {
  if (isGraphBubbleUp(thrown)) return { failure: thrown, passThrough: true };
  const retryable = retryableMark(thrown);
  let error = unwrapMiddlewareErrors(thrown);
  const members = typeof error === "object" ? (error as LangChainErrorMembers) : null;
  if (members?.["~brand"] === "ToolInvocationError" && members.toolError !== undefined) error = members.toolError;
  if (isParsingException(error)) return { failure: await parsingFailure(error, schema, args), retryable };
  return { failure: zodArgumentsError(error, args) ?? error, retryable };
}

/** The input did not parse: the schema is parsed again to name each bad field (the failure's cause stays what was thrown). */
async function parsingFailure(error: unknown, schema: unknown, args: unknown): Promise<unknown> {
  if (isInteropZodSchema(schema)) {
    try {
      const result = await interopSafeParseAsync(schema, args);
      const failure = result.success ? undefined : zodArgumentsError(result.error, args, error);
      if (failure !== undefined) return failure;
    } catch {
      // fall through to the generic message
    }
  }
  const message = error instanceof Error ? error.message.replace(/\n\s+at [\s\S]*$/, "") : String(error);
  return invalidArgumentsError([], error, message);
}

/** The error a returned error `ToolMessage` stands for. Its message is the tool message's text. */
export class ToolMessageError extends ReturnedFailureError<ToolMessage> {
  constructor(toolMessage: ToolMessage, message: string) {
    super("ToolMessageError", toolMessage, message);
  }

  /** The tool message that reported the failure (also `result`). */
  get toolMessage(): ToolMessage {
    return this.result;
  }
}

/**
 * The failure a tool's returned result stands for, or undefined for a success:
 * - a `ToolMessage` with `status: "error"` (tool not found, another middleware's error message):
 *   its artifact or content when they hold the structured error shape, else its text;
 * - a `ToolMessage` whose content is the structured error shape `{error_code, message, recoverable}`
 *   or an MCP result with `isError: true` (a tool that returned its error instead of throwing).
 */
export function failureOfResult(result: unknown): Error | undefined {
  if (!ToolMessage.isInstance(result)) return undefined;
  const text = textOfContent(result.content);
  const json = errorJsonOfText(text);
  const reported = structuredErrorOf(result.artifact, json, result);
  if (reported !== undefined) return reported;
  if (json?.isError === true) return new ToolMessageError(result, textOfContent(json.content) || text);
  if (result.status === "error") return new ToolMessageError(result, text || "The tool call failed.");
  return undefined;
}
