import Redis from "ioredis";
import { createClient } from "redis";
import type { RedisServer } from "./redis-server.js";

// What the late-reply tests share: clients set up as the README does (no offline queue, a short
// reconnect), each closed by the test file's afterEach, and a server paused (SIGSTOP) for real.

export type ClientKind = "node-redis" | "ioredis";

/** A connected client of `kind`; its close is pushed onto `opened` (the test file runs them after each test). */
export async function connectTo(server: RedisServer, kind: ClientKind, opened: Array<() => unknown>): Promise<unknown> {
  if (kind === "ioredis") {
    const client = new Redis(server.url, {
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      lazyConnect: true,
      retryStrategy: () => 20,
    });
    client.on("error", () => {});
    await client.connect();
    opened.push(() => client.disconnect());
    return client;
  }
  const client = createClient({ url: server.url, disableOfflineQueue: true, socket: { reconnectStrategy: () => 20 } });
  client.on("error", () => {});
  await client.connect();
  opened.push(() => (client.isOpen ? client.destroy() : undefined));
  return client;
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Runs `during` with the server paused (SIGSTOP); resumes it `pauseMs` after the pause began. */
export async function whilePaused<T>(server: RedisServer, pauseMs: number, during: () => Promise<T>): Promise<T> {
  server.pause();
  const started = Date.now();
  try {
    return await during();
  } finally {
    await sleep(Math.max(0, pauseMs - (Date.now() - started)));
    server.resume();
  }
}
