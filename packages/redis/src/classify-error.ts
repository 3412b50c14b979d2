import { RedisTimeoutError, RedisUnavailableError } from "./redis-errors.js";

// How a failure of either client is told apart (an error reply from Redis, the client's own timeout, a
// refusal before the command was sent) and what each becomes for the callers of ScriptClient.

function constructorName(error: object): string | undefined {
  const name = (Object.getPrototypeOf(error) as { constructor?: { name?: unknown } } | null)?.constructor?.name;
  return typeof name === "string" ? name : undefined;
}

/** An error reply from the server (both clients; ioredis v5 and v6 name them all ReplyError). */
function isReplyError(error: unknown): error is Error {
  if (!(error instanceof Error)) return false;
  if (error.name === "ReplyError") return true;
  const name = constructorName(error);
  return name === "ErrorReply" || name === "SimpleError" || name === "BlobError";
}

/** Redis does not have the script (SCRIPT FLUSH, a restart, a new replica). */
export function isNoScript(error: unknown): boolean {
  return isReplyError(error) && error.message.startsWith("NOSCRIPT");
}

/** The clients' own command timeouts (node-redis `commandOptions.timeout`, ioredis `commandTimeout`). */
function isClientTimeout(error: unknown): error is Error {
  if (!(error instanceof Error)) return false;
  if (error.message === "Command timed out") return true; // ioredis
  const name = constructorName(error);
  return name === "TimeoutError" || name === "CommandTimeoutDuringMaintenanceError" || name === "SocketTimeoutDuringMaintenanceError";
}

/** Client errors raised before the command was written, so it certainly did not run. */
function isRefusedBeforeSending(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const name = constructorName(error);
  // node-redis. (Not AbortError: node-redis raises it only for the abort at the limit here, after
  // the timeout has settled the call, and ioredis raises one for pipelined commands cut off by a
  // closing connection, which may have run.)
  if (name === "ClientClosedError" || name === "ClientOfflineError") return true;
  return (
    error.message === "The queue is full" || // node-redis commandsQueueMaxLength
    error.message.startsWith("Stream isn't writeable") || // ioredis, enableOfflineQueue: false
    error.message.startsWith("Connection in subscriber mode") // ioredis
  );
}

/** The message of a thrown value, for error messages and warnings. */
export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message || error.name : String(error);
}

/**
 * What a failure of `command` becomes: an error reply from Redis, or one of the two errors here, as
 * it is; the client's own timeout a {@link RedisTimeoutError}; anything else a
 * {@link RedisUnavailableError}, `sent` unless the client refused it before sending.
 */
export function classifyError(command: string, error: unknown, timeoutMs: number): unknown {
  if (isReplyError(error)) return error;
  if (RedisUnavailableError.isInstance(error) || RedisTimeoutError.isInstance(error)) return error;
  if (isClientTimeout(error)) {
    return new RedisTimeoutError(command, timeoutMs, {
      cause: error,
      message: `Redis ${command} timed out in the client itself (its own command timeout, before the ${timeoutMs} ms limit here): ${messageOf(error)}`,
    });
  }
  const sent = !isRefusedBeforeSending(error);
  return new RedisUnavailableError(command, messageOf(error), { sent, cause: error });
}
