import { recordEvents } from "@retry-reflect/core/testing";
import { redisStores } from "@retry-reflect/redis";
import { createClient } from "redis";
import { afterAll, describe, expect, it } from "vitest";
import { startRedis } from "../../redis/test/helpers/redis-server.js";
import { IDEMPOTENCY_META_KEY, REPLAYED_META_KEY, withIdempotency } from "../src/index.js";
import { firstText, text } from "./helpers.js";

// withIdempotency over a real redis-server: a record changed in Redis behind the server's back
// (tampered with, or corrupted) is never replayed. The call ends WRITE_IN_DOUBT (the write may have
// taken effect: it is not run again) with a store_error whose reason is invalid_record.

const redis = await startRedis();
afterAll(() => redis?.stop());

const request = (key: string) => ({
  _meta: { [IDEMPOTENCY_META_KEY]: key },
  signal: new AbortController().signal,
  authInfo: { clientId: "alice", token: "token-alice", scopes: [] },
});
type Result = { content: Array<{ type: string; text?: string }>; _meta?: Record<string, unknown>; isError?: boolean };

let prefixes = 0;

describe.skipIf(!redis)("withIdempotency over Redis: a tampered or corrupted record", () => {
  it.each([
    ['a valid envelope holding no tool result: {"v":"string"}', '{"v":"string"}'],
    ["text that does not parse", "garbage"],
  ])("%s is WRITE_IN_DOUBT with a store_error (invalid_record); the handler does not run again", async (_name, tamperedWith) => {
    const client = createClient({ url: redis?.url, disableOfflineQueue: true });
    client.on("error", () => {});
    await client.connect();
    const prefix = `mcp-invalid-${++prefixes}:`;
    const stores = redisStores({ client, prefix, commandTimeoutMs: 2000 });
    const events = recordEvents();
    let runs = 0;
    const transfer = withIdempotency(
      async ({ amount }: { amount: number }) => {
        runs++;
        return text(`paid ${amount}`);
      },
      { store: stores.idempotency, toolName: "transfer", observers: [events] },
    );
    try {
      expect(await transfer({ amount: 100 }, request("transfer-1"))).toEqual(text("paid 100"));
      const replay = (await transfer({ amount: 100 }, request("transfer-1"))) as Result;
      expect(replay._meta?.[REPLAYED_META_KEY]).toBe(true);
      const keys = await client.keys(`${prefix}idem:*`);
      expect(keys).toHaveLength(1);
      await client.hSet(keys[0] as string, "value", tamperedWith);

      const answer = (await transfer({ amount: 100 }, request("transfer-1"))) as Result;
      // Before: {"v":"string"} was replayed as a success the client could not parse; garbage was
      // refused STORE_UNAVAILABLE, "could not be reached".
      expect(answer.isError).toBe(true);
      expect(JSON.parse(firstText(answer))).toMatchObject({ error_code: "WRITE_IN_DOUBT", recoverable: false });
      expect(events.events.filter((event) => event.type === "store_error").map((event) => event.fields)).toEqual([
        expect.objectContaining({ tool_name: "transfer", operation: "begin", reason: "invalid_record" }),
      ]);
      expect(runs).toBe(1);
    } finally {
      await stores.close();
      client.destroy();
    }
  });
});
