import { InMemoryIdempotencyStore, InvalidOptionError } from "@retry-reflect/core";
import { createFakeClock } from "@retry-reflect/core/testing";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { withRetryReflect } from "../src/index.js";
import { connect, drive, firstText, text } from "./helpers.js";

async function bank() {
  const ran: string[] = [];
  const { client } = await connect((server) => {
    server.registerTool(
      "transfer",
      { inputSchema: { to: z.string(), amount: z.number(), idempotency_key: z.string() }, annotations: { destructiveHint: true } },
      async ({ to }, extra) => {
        const user = String(extra._meta?.user);
        ran.push(user);
        return text(`receipt of ${user}: ${to}`);
      },
    );
  });
  return { client, ran };
}

describe("MCP: whose writes replay", () => {
  it("a client wrapped once keeps users apart with a namespace from the call, and replays a user's own retry", async () => {
    const { client, ran } = await bank();
    const clock = createFakeClock();
    const tools = withRetryReflect(client, { clock }, { namespace: (call) => String(call.params._meta?.user) });
    const transfer = (user: string) =>
      drive(
        clock,
        tools.callTool({ name: "transfer", arguments: { to: "IBAN-1", idempotency_key: "transfer-1", amount: 5 }, _meta: { user } }),
      );
    expect(firstText(await transfer("alice"))).toBe("receipt of alice: IBAN-1");
    expect(firstText(await transfer("carol"))).toBe("receipt of carol: IBAN-1");
    expect(firstText(await transfer("alice"))).toBe("receipt of alice: IBAN-1");
    expect(ran).toEqual(["alice", "carol"]);
  });

  it("two wrappers sharing a store have random default scopes: neither replays the other's key", async () => {
    const { client, ran } = await bank();
    const clock = createFakeClock();
    const store = new InMemoryIdempotencyStore({ clock });
    const call = (tools: ReturnType<typeof withRetryReflect>, user: string) =>
      drive(clock, tools.callTool({ name: "transfer", arguments: { to: "IBAN-1", idempotency_key: "k", amount: 5 }, _meta: { user } }));
    await call(withRetryReflect(client, { clock, idempotency: { store } }), "alice");
    await call(withRetryReflect(client, { clock, idempotency: { store } }), "carol");
    expect(ran).toEqual(["alice", "carol"]);
  });

  it("rejects a namespace that is neither a non-empty string nor a function", async () => {
    const { client } = await bank();
    expect(() => withRetryReflect(client, {}, { namespace: "" })).toThrow(InvalidOptionError);
  });
});
