import { createClient } from "redis";

// The Redis side of scenario 9: one node-redis client per replica, as the @retry-reflect/redis
// README recommends (offline queue off, a reconnect strategy), and a connect and a close that never
// wait for a Redis that is down.

export type DemoRedisClient = ReturnType<typeof createClient>;

/** How long the demo waits for Redis to answer before it fails scenario 9. */
export const REDIS_CONNECT_TIMEOUT_MS = 3_000;

/** How to get a Redis for scenario 9, for the messages that say it is missing. */
export const REDIS_HOW_TO = "docker compose -f packages/redis/compose.yaml up -d (or run any Redis 7: redis-server)";

/** Redis could not be reached at REDIS_URL; the message says where and what to do. */
export class RedisConnectError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "RedisConnectError";
  }
}

/** `REDIS_URL=...` as it may be printed: a password in it is masked. */
export function describeRedisUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password !== "") parsed.password = "***";
    return `REDIS_URL=${parsed.toString()}`;
  } catch {
    return `REDIS_URL=${url}`;
  }
}

/** What an error says: some socket errors (an AggregateError of IPv4 and IPv6 attempts) have no message, only a code. */
export function errorMessage(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  if (error.message !== "") return error.message;
  const code = (error as { code?: unknown }).code;
  return typeof code === "string" ? code : error.name;
}

const sleep = (ms: number) =>
  new Promise<void>((resolve) => {
    setTimeout(resolve, ms).unref();
  });

/**
 * A connected node-redis client named `name` (`CLIENT LIST` shows it), or a `RedisConnectError`
 * within `timeoutMs` (the client is then destroyed: nothing keeps retrying in the background).
 * Later connection errors are kept as `lastError` (a client without an `error` listener would crash
 * the process); the client reconnects by itself, and meanwhile every command fails at once.
 */
export async function connectRedis(
  url: string,
  name: string,
  timeoutMs = REDIS_CONNECT_TIMEOUT_MS,
): Promise<{ client: DemoRedisClient; lastError: () => Error | undefined }> {
  let lastError: Error | undefined;
  let client: DemoRedisClient;
  try {
    client = createClient({
      url,
      name,
      disableOfflineQueue: true,
      socket: {
        connectTimeout: Math.min(2_000, timeoutMs),
        reconnectStrategy: (retries) => Math.min(50 * 2 ** retries, 1_000),
      },
    });
  } catch (error) {
    throw new RedisConnectError(
      `${describeRedisUrl(url)} is not a URL node-redis accepts (${errorMessage(error)}); expected redis://host:port`,
    );
  }
  client.on("error", (error: Error) => {
    lastError = error;
  });
  const connecting = client.connect();
  connecting.catch(() => {}); // raced below; a late rejection must not be unhandled
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<"timeout">((resolve) => {
    timer = setTimeout(() => resolve("timeout"), timeoutMs);
  });
  try {
    const first = await Promise.race([connecting, deadline]);
    if (first !== "timeout" && client.isReady) return { client, lastError: () => lastError };
  } catch (error) {
    lastError = error instanceof Error ? error : new Error(String(error));
  } finally {
    clearTimeout(timer);
  }
  destroyQuietly(client);
  const why = lastError === undefined ? " (it did not answer)" : ` (${errorMessage(lastError)})`;
  throw new RedisConnectError(
    `could not connect to Redis at ${describeRedisUrl(url)} within ${timeoutMs} ms${why}. Start one: ${REDIS_HOW_TO}, or fix REDIS_URL.`,
  );
}

function destroyQuietly(client: DemoRedisClient): void {
  try {
    if (client.isOpen) client.destroy();
  } catch {
    // already closed
  }
}

/**
 * Closes the client: gracefully when it is connected (waits for its pending replies, at most
 * `timeoutMs`), at once when it is not. Never rejects, never keeps the process alive.
 */
export async function closeRedis(client: DemoRedisClient, timeoutMs = 1_000): Promise<void> {
  if (!client.isOpen) return;
  if (!client.isReady) return destroyQuietly(client);
  const closed = await Promise.race([
    client.close().then(
      () => true,
      () => true,
    ),
    sleep(timeoutMs).then(() => false),
  ]);
  if (!closed) client.unref();
}

/** Deletes the keys under `prefix` (SCAN, then DEL); the count deleted. Bounded by `timeoutMs`. */
export async function deleteKeys(client: DemoRedisClient, prefix: string, timeoutMs = 2_000): Promise<number> {
  const work = (async () => {
    let deleted = 0;
    for await (const keys of client.scanIterator({ MATCH: `${prefix}*`, COUNT: 100 })) {
      if (keys.length > 0) deleted += await client.del(keys);
    }
    return deleted;
  })();
  const outcome = await Promise.race([work, sleep(timeoutMs).then(() => "timeout" as const)]);
  if (outcome === "timeout") {
    work.catch(() => {});
    throw new Error(`Redis did not answer SCAN/DEL within ${timeoutMs} ms`);
  }
  return outcome;
}
