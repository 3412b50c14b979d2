import type { Exception } from "@opentelemetry/api";
import type { CallEnd } from "@retry-reflect/core/events";
import { cleanErrorText, defaultRedactor } from "@retry-reflect/core/primitives";
import { ERROR_TYPE_VALUE_OTHER } from "./semconv.js";
import type { ErrorTextMode } from "./types.js";

/** Longest thrown message put on a span (as the core's default `maxErrorLength`). */
const MAX_THROWN_MESSAGE = 1000;
/** Longest thrown stack put on an exception event. */
const MAX_THROWN_STACK = 8192;

const ERROR_NAME = /^[A-Za-z][A-Za-z0-9_.]{0,63}$/;

/** A bounded `error.type`: the error's class name when it looks like one, else `_OTHER`. */
export function errorTypeOf(error: unknown): string {
  const name = error instanceof Error ? error.name : undefined;
  return typeof name === "string" && ERROR_NAME.test(name) ? name : ERROR_TYPE_VALUE_OTHER;
}

/** `error.type` of a call that finally failed; undefined for success, reflect (the model retries) and aborts. */
export function finalErrorType(end: CallEnd): string | undefined {
  if (end.status === "failed") return end.error?.code ?? ERROR_TYPE_VALUE_OTHER;
  if (end.status === "error") return errorTypeOf(end.thrown);
  return undefined;
}

/**
 * The status description of a final failure, `"redacted"`: the tool error's text (cleaned by the
 * core already), or the thrown message cleaned as the core cleans a tool's text (stack lines and
 * control characters removed, `defaultRedactor`, at most 1000 characters).
 */
export function statusMessage(end: CallEnd): string {
  if (end.error) return end.error.message;
  return cleanThrown(thrownMessage(end.thrown));
}

/**
 * What `recordException` receives for a thrown value: its type (the error's code when it has a
 * short one, else its bounded name) and, `"redacted"`, its cleaned message and redacted stack;
 * `"code-only"`, nothing else. Never the thrown object itself.
 */
export function toException(thrown: unknown, errorText: ErrorTextMode): Exception {
  const name = errorTypeOf(thrown);
  const code = codeOf(thrown);
  const exception: Exception = code === undefined ? { name } : { name, code };
  if (errorText === "code-only") return exception;
  exception.message = cleanThrown(thrownMessage(thrown));
  const stack = stackOf(thrown);
  if (stack !== undefined) exception.stack = redactStack(stack);
  return exception;
}

function cleanThrown(text: string): string {
  return cleanErrorText(text, { maxLength: MAX_THROWN_MESSAGE, redact: defaultRedactor });
}

/** A stack keeps its frames: only redacted (control characters removed) and cut, after redaction. */
function redactStack(stack: string): string {
  const window = MAX_THROWN_STACK * 4;
  const redacted = defaultRedactor(stack.length > window ? stack.slice(0, window) : stack);
  return redacted.length > MAX_THROWN_STACK ? `${redacted.slice(0, MAX_THROWN_STACK)}…[truncated]` : redacted;
}

function thrownMessage(thrown: unknown): string {
  try {
    return thrown instanceof Error ? String(thrown.message) : String(thrown);
  } catch {
    return ERROR_TYPE_VALUE_OTHER;
  }
}

function stackOf(thrown: unknown): string | undefined {
  try {
    const stack = thrown instanceof Error ? thrown.stack : undefined;
    return typeof stack === "string" ? stack : undefined;
  } catch {
    return undefined;
  }
}

function codeOf(thrown: unknown): string | number | undefined {
  try {
    const code = typeof thrown === "object" && thrown !== null ? (thrown as { code?: unknown }).code : undefined;
    if (typeof code === "number" && Number.isFinite(code)) return code;
    return typeof code === "string" && ERROR_NAME.test(code) ? code : undefined;
  } catch {
    return undefined;
  }
}
