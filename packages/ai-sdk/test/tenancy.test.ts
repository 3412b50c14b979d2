import { InMemoryIdempotencyStore, InvalidOptionError, RetryReflectPlugin } from "@retry-reflect/core";
import { tool } from "ai";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { withRetryReflect } from "../src/index.js";

/** A transfer tool wrapped once, as a server wraps its tool set at start-up and serves every user with it. */
function transferTools(store: InMemoryIdempotencyStore, adapter: Parameters<typeof withRetryReflect>[2] = {}) {
  const ran: string[] = [];
  const transfer = tool({
    description: "Send money.",
    inputSchema: z.object({ to: z.string(), amount: z.number() }),
    execute: async ({ to, amount }, options) => {
      const user = (options.experimental_context as { user: string }).user;
      ran.push(user);
      return `receipt of ${user}: ${amount} to ${to}`;
    },
  });
  const plugin = RetryReflectPlugin.create({ toolEffects: { transfer: "write" }, idempotency: { store, derive: "always" } });
  const tools = withRetryReflect({ transfer }, plugin, adapter);
  const call = (user: string, id: string) =>
    (tools.transfer.execute as (input: unknown, options: unknown) => Promise<unknown>)(
      { to: "IBAN-1", amount: 100 },
      { toolCallId: id, messages: [], experimental_context: { user } },
    );
  return { ran, call };
}

describe("AI SDK: whose writes replay", () => {
  it("two wrappers (two processes, or one restarted) sharing a store never replay each other's derived write", async () => {
    const store = new InMemoryIdempotencyStore();
    const first = transferTools(store);
    const second = transferTools(store);
    expect(await first.call("alice", "c1")).toBe("receipt of alice: 100 to IBAN-1");
    expect(await second.call("bob", "c1")).toBe("receipt of bob: 100 to IBAN-1");
    expect([...first.ran, ...second.ran]).toEqual(["alice", "bob"]);
  });

  it("a tool set wrapped once keeps users apart with a namespace (and scope) from the call's context", async () => {
    const store = new InMemoryIdempotencyStore();
    const byUser = (call: { options: { experimental_context?: unknown } }) => (call.options.experimental_context as { user: string }).user;
    const { ran, call } = transferTools(store, { scope: byUser, namespace: byUser });
    expect(await call("alice", "c1")).toBe("receipt of alice: 100 to IBAN-1");
    expect(await call("bob", "c2")).toBe("receipt of bob: 100 to IBAN-1");
    // Alice's model sends the same transfer again: replayed, not sent twice.
    expect(await call("alice", "c3")).toBe("receipt of alice: 100 to IBAN-1");
    expect(ran).toEqual(["alice", "bob"]);
  });

  it("rejects a namespace that is neither a non-empty string nor a function", () => {
    const plugin = RetryReflectPlugin.create();
    expect(() => withRetryReflect({}, plugin, { namespace: "" })).toThrow(InvalidOptionError);
    expect(() => withRetryReflect({}, plugin, { namespace: 7 as never })).toThrow(/`namespace`/);
  });
});
