import { AsyncLocalStorage } from "node:async_hooks";
import type { ToolContext } from "@retry-reflect/core";

const storage = new AsyncLocalStorage<ToolContext>();

/**
 * The retry-reflect context of the tool call running now, read from inside a tool that runs
 * under `retryReflectMiddleware` or `withRetryReflect`: `{ attempt, signal, idempotencyKey,
 * toolName, callId }`. Undefined outside such a call (or for a tool the plugin does not handle).
 *
 * A `write` tool forwards `idempotencyKey` downstream, e.g. as an `Idempotency-Key` header, so
 * that a retry the guard lets through cannot act twice at the service either:
 * ```ts
 * const sendEmail = tool(async (args) => {
 *   const { idempotencyKey } = getToolContext() ?? {};
 *   return mailer.send(args, { headers: { "Idempotency-Key": idempotencyKey } });
 * }, { name: "send_email", schema, metadata: { effect: "write" } });
 * ```
 */
export function getToolContext(): ToolContext | undefined {
  return storage.getStore();
}

/** Runs `run` with `context` as the current tool context. */
export function runWithToolContext<T>(context: ToolContext, run: () => T): T {
  return storage.run(context, run);
}
