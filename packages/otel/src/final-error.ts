import type { Exception } from "@opentelemetry/api";
import type { CallEnd } from "@retry-reflect/core";
import { ERROR_TYPE_VALUE_OTHER } from "./semconv.js";

/** `error.type` of a call that finally failed; undefined for success, reflect (the model retries) and aborts. */
export function finalErrorType(end: CallEnd): string | undefined {
  if (end.status === "failed") return end.error?.code ?? ERROR_TYPE_VALUE_OTHER;
  if (end.status === "error") {
    const thrown = end.thrown;
    return thrown instanceof Error && thrown.name ? thrown.name : ERROR_TYPE_VALUE_OTHER;
  }
  return undefined;
}

/** The status description of a final failure: the cleaned tool error text, or the thrown message. */
export function statusMessage(end: CallEnd): string {
  if (end.error) return end.error.message;
  return end.thrown instanceof Error ? end.thrown.message : String(end.thrown);
}

/** What `recordException` receives for a thrown value. */
export function toException(thrown: unknown): Exception {
  if (thrown instanceof Error) return thrown;
  return { name: ERROR_TYPE_VALUE_OTHER, message: String(thrown) };
}
