import { RedisUnavailableError } from "./redis-errors.js";

/** How often a command refused as unsent (the client not ready) is tried again. */
const RETRY_MS = 10;

/**
 * Runs `command`; while it is refused unsent because the client is not ready yet (still
 * connecting, reconnecting), tries again every 10 ms, for `patienceMs` at most in all: a tool's
 * first call in a process that has just started waits for its client to connect, up to the command
 * limit, instead of running without the fleet's state. Any other failure is thrown at once.
 */
export async function whenReady<T>(command: () => Promise<T>, patienceMs: number): Promise<T> {
  const deadline = Date.now() + patienceMs;
  for (;;) {
    try {
      return await command();
    } catch (error) {
      if (!RedisUnavailableError.isInstance(error) || error.sent || Date.now() + RETRY_MS > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, RETRY_MS).unref());
    }
  }
}
