import type { RetryReflectPlugin } from "../plugin.js";

/** A `RetryReflectPlugin` (from any copy of the core), as opposed to an options object: what an adapter's `pluginOrOptions` holds. */
export function isPlugin(value: unknown): value is RetryReflectPlugin {
  return (
    typeof value === "object" &&
    value !== null &&
    typeof (value as RetryReflectPlugin).execute === "function" &&
    typeof (value as RetryReflectPlugin).isInScope === "function" &&
    typeof (value as RetryReflectPlugin).circuitState === "function"
  );
}
