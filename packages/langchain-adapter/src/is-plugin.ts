import type { RetryReflectPlugin } from "@retry-reflect/core";

/** A `RetryReflectPlugin` (from any copy of the core), as opposed to an options object. */
export function isPlugin(value: unknown): value is RetryReflectPlugin {
  return (
    typeof value === "object" &&
    value !== null &&
    typeof (value as RetryReflectPlugin).execute === "function" &&
    typeof (value as RetryReflectPlugin).isInScope === "function"
  );
}
