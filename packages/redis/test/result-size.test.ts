import { RetryReflectPlugin } from "@retry-reflect/core";
import type { RetryReflectEvent } from "@retry-reflect/core/events";
import { createClient } from "redis";
import { afterAll, describe, expect, it } from "vitest";
import { redisStores } from "../src/index.js";
import { type RedisServer, startRedis } from "./helpers/redis-server.js";

// A write's result larger than `idempotency.maxResultBytes` (default 1 MiB) never reaches Redis:
// before, a 50 MB result was stored for the whole TTL (24 h).

const redis = await startRedis();
afterAll(() => redis?.stop());

describe.skipIf(!redis)("results too large to store, with the Redis idempotency store", () => {
  it("returns a 2 MB result, stores nothing in Redis, and frees the key so a retry runs again", async () => {
    const client = createClient({ url: (redis as RedisServer).url, disableOfflineQueue: true });
    client.on("error", () => {});
    await client.connect();
    const prefix = "size:";
    const stores = redisStores({ client, prefix, commandTimeoutMs: 2000 });
    const events: RetryReflectEvent[] = [];
    const plugin = RetryReflectPlugin.create({
      toolEffects: { export_report: "write" },
      idempotency: { store: stores.idempotency },
      observers: [{ onEvent: (event) => events.push(event) }],
    });
    const big = "x".repeat(2 * 1024 * 1024);
    let runs = 0;
    const call = () =>
      plugin.execute({ toolName: "export_report", args: { month: "may", idempotency_key: "r-1" } }, () => {
        runs++;
        return big;
      });
    try {
      const first = await call();
      expect(first.status === "success" && first.value === big && !first.replayed).toBe(true);
      expect(events.find((event) => event.type === "store_error")?.fields).toMatchObject({ operation: "complete", reason: "too_large" });
      let largest = 0;
      for await (const keys of client.scanIterator({ MATCH: `${prefix}*`, COUNT: 100 })) {
        for (const key of Array.isArray(keys) ? keys : [keys]) largest = Math.max(largest, Number(await client.memoryUsage(key)));
      }
      expect(largest).toBeLessThan(10_000); // at most a lock record, never the result
      await call();
      expect(runs).toBe(2);
    } finally {
      await stores.close();
      client.destroy();
    }
  });
});
