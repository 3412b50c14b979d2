import { RetryReflectPlugin } from "@retry-reflect/core";
import { recordEvents } from "@retry-reflect/core/testing";
import { createClient } from "redis";
import { afterAll, describe, expect, it } from "vitest";
import { redisStores } from "../src/index.js";
import { type RedisServer, startRedis } from "./helpers/redis-server.js";

// A stored result this store did not write (tampered with, or corrupted) is reported as a record it
// cannot read, never as a store fault: before, `begin` threw a SyntaxError, and the write was
// refused STORE_UNAVAILABLE ("could not be reached"), or a non-envelope was replayed as undefined.

const redis = await startRedis();
afterAll(() => redis?.stop());

let prefixes = 0;
async function connected(prefix: string) {
  const client = createClient({ url: (redis as RedisServer).url, disableOfflineQueue: true });
  client.on("error", () => {});
  await client.connect();
  const stores = redisStores({ client, prefix, commandTimeoutMs: 2000 });
  return {
    client,
    stores,
    close: async () => {
      await stores.close();
      client.destroy();
    },
  };
}

describe.skipIf(!redis)("RedisIdempotencyStore: a stored result it cannot read", () => {
  it.each([
    ["text that is not JSON", "not json {", "its stored result does not parse as JSON"],
    ["JSON that is not its envelope", "[1,2]", "its stored result is not the store's { v } envelope"],
    ["an envelope with other members", '{"v":1,"w":2}', "its stored result is not the store's { v } envelope"],
  ])("%s: begin answers in_doubt with invalidRecord (why, never the text)", async (_name, stored, why) => {
    const { client, stores, close } = await connected(`invalid-begin-${++prefixes}:`);
    try {
      const store = stores.idempotency;
      const begun = await store.begin("k", "fp", 10_000);
      if (begun.status !== "acquired") throw new Error("expected to acquire");
      expect(await store.complete("k", begun.token, { paid: true }, 60_000)).toBe(true);
      expect(await store.begin("k", "fp", 10_000)).toEqual({ status: "completed", fingerprint: "fp", value: { paid: true } });
      await client.hSet(store.keyOf("k"), "value", stored);
      expect(await store.begin("k", "fp", 10_000)).toEqual({ status: "in_doubt", fingerprint: "fp", invalidRecord: why });
    } finally {
      await close();
    }
  });

  it("the plugin's write with a tampered record ends WRITE_IN_DOUBT with a store_error (invalid_record), not STORE_UNAVAILABLE", async () => {
    const { client, stores, close } = await connected("invalid-plugin:");
    const events = recordEvents();
    const plugin = RetryReflectPlugin.create({
      toolEffects: { pay: "write" },
      idempotency: { store: stores.idempotency },
      observers: [events],
    });
    let runs = 0;
    const pay = () =>
      plugin.execute({ toolName: "pay", args: { amount: 100, idempotency_key: "pay-1" }, namespace: "alice" }, () => {
        runs++;
        return "paid";
      });
    try {
      expect(await pay()).toMatchObject({ status: "success", value: "paid" });
      const keys = await client.keys("invalid-plugin:idem:*");
      expect(keys).toHaveLength(1);
      await client.hSet(keys[0] as string, "value", "garbage");
      expect(await pay()).toMatchObject({ status: "failed", error: { code: "WRITE_IN_DOUBT", recoverable: false } });
      expect(events.events.find((event) => event.type === "store_error")?.fields).toMatchObject({
        tool_name: "pay",
        operation: "begin",
        reason: "invalid_record",
      });
      expect(runs).toBe(1);
    } finally {
      await close();
    }
  });
});
