/** What the demo wants to know about each real run of a tool function. */
export interface ToolHooks {
  /** The tool function starts: one real execution (a replay or a fail-fast never gets here). */
  onExecute?(toolName: string, args: unknown): void;
  /** The tool function failed (threw, or returned a structured error), before any plugin decides. */
  onToolError?(toolName: string, message: string): void;
  /** The tool's signal aborted while it ran (the plugin cut the attempt off): the tool stops its work. */
  onAbort?(toolName: string, reason: unknown): void;
}

export function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * Runs `run` as one execution of `toolName`, telling `hooks` about the start and any failure.
 * With the attempt's `signal`: its abort is told to `hooks.onAbort`, and what the tool throws
 * once it is aborted is not reported as the tool's own failure (the plugin cut the attempt off).
 */
export async function observeExecution<T>(
  hooks: ToolHooks,
  toolName: string,
  args: unknown,
  run: () => Promise<T>,
  signal?: AbortSignal,
): Promise<T> {
  hooks.onExecute?.(toolName, args);
  const onAbort = () => hooks.onAbort?.(toolName, signal?.reason);
  signal?.addEventListener("abort", onAbort, { once: true });
  try {
    const result = await run();
    if (isStructuredError(result)) hooks.onToolError?.(toolName, `${result.error_code}: ${result.message}`);
    return result;
  } catch (error) {
    if (!signal?.aborted) hooks.onToolError?.(toolName, errorText(error));
    throw error;
  } finally {
    signal?.removeEventListener("abort", onAbort);
  }
}

/** A structured error a tool returned (`{ error_code, message, ... }`) instead of throwing. */
export function isStructuredError(value: unknown): value is { error_code: string; message: string } {
  if (typeof value !== "object" || value === null) return false;
  const candidate = value as Record<string, unknown>;
  return typeof candidate.error_code === "string" && typeof candidate.message === "string";
}
