import { createFakeClock } from "@retry-reflect/core/testing";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { IDEMPOTENCY_META_KEY, type RetryReflectMcpOptions, withRetryReflect } from "../src/index.js";
import { connect, drive, firstText, text } from "./helpers.js";

// The MCP client adapter's default namespace: one client wrapped at start-up and shared by every
// request of a process tells no caller, so with no option a call's write is its own: no stored
// result, and no key derived from a call, reaches another call. Real `McpServer` and `Client` over
// an in-memory transport; `_meta.user` only tells the server's tools who called.

async function bank() {
  const ran: string[] = [];
  const keys: unknown[] = [];
  const { client } = await connect((server) => {
    const receipt =
      (tool: string) =>
      async ({ to }: { to: string }, extra: { _meta?: Record<string, unknown> }) => {
        const user = String(extra._meta?.user);
        ran.push(`${tool}: ${user}`);
        keys.push(extra._meta?.[IDEMPOTENCY_META_KEY]);
        return text(`receipt of ${user}: ${to}`);
      };
    // The model picks the key (`transfer-1`, as models do)...
    server.registerTool(
      "transfer",
      { inputSchema: { to: z.string(), amount: z.number(), idempotency_key: z.string() }, annotations: { destructiveHint: true } },
      receipt("transfer"),
    );
    // ...or the schema has none, and the key is derived from the call.
    server.registerTool("place_order", { inputSchema: { to: z.string() }, annotations: { destructiveHint: true } }, receipt("place_order"));
  });
  return { client, ran, keys };
}

function callsOf(client: Awaited<ReturnType<typeof bank>>["client"], options?: RetryReflectMcpOptions) {
  const clock = createFakeClock();
  const tools = withRetryReflect(client, { clock }, options);
  return {
    transfer: (user: string) =>
      drive(
        clock,
        tools.callTool({ name: "transfer", arguments: { to: "IBAN-1", amount: 5, idempotency_key: "transfer-1" }, _meta: { user } }),
      ),
    order: (user: string) => drive(clock, tools.callTool({ name: "place_order", arguments: { to: "IBAN-1" }, _meta: { user } })),
  };
}

describe("MCP client adapter: one client wrapped at start-up, shared by every user", () => {
  it("with no option, runs each user's write, though the model picked the same key: nobody is handed another's receipt", async () => {
    const { client, ran } = await bank();
    const { transfer } = callsOf(client);
    expect(firstText(await transfer("alice"))).toBe("receipt of alice: IBAN-1");
    expect(firstText(await transfer("bob"))).toBe("receipt of bob: IBAN-1");
    expect(ran).toEqual(["transfer: alice", "transfer: bob"]);
  });

  it("with no option, derives a key per call for a write whose schema has none: the same arguments run for each user", async () => {
    const { client, ran, keys } = await bank();
    const { order } = callsOf(client);
    expect(firstText(await order("alice"))).toBe("receipt of alice: IBAN-1");
    expect(firstText(await order("bob"))).toBe("receipt of bob: IBAN-1");
    expect(ran).toEqual(["place_order: alice", "place_order: bob"]);
    expect(keys[0]).toMatch(/^derived-/);
    expect(keys[1]).not.toBe(keys[0]); // the server's own guard (withIdempotency) never merges them either
  });

  it("replays a user's re-issued write within the namespace the options give, and only there", async () => {
    const { client, ran } = await bank();
    const { transfer, order } = callsOf(client, { namespace: (call) => String(call.params._meta?.user) });
    await transfer("alice");
    await order("alice");
    expect(firstText(await transfer("bob"))).toBe("receipt of bob: IBAN-1");
    expect(firstText(await transfer("alice"))).toBe("receipt of alice: IBAN-1"); // replayed
    expect(firstText(await order("alice"))).toBe("receipt of alice: IBAN-1"); // replayed: the same key derived
    expect(ran).toEqual(["transfer: alice", "place_order: alice", "transfer: bob"]);
  });

  it("takes the scope option's scope as the namespace when no namespace is given", async () => {
    const { client, ran } = await bank();
    const { transfer } = callsOf(client, { scope: "conversation-7" });
    await transfer("alice");
    await transfer("alice");
    expect(ran).toEqual(["transfer: alice"]);
  });
});
