import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { RetryReflectPlugin } from "@retry-reflect/core";
import { createFakeClock } from "@retry-reflect/core/testing";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { withRetryReflect } from "../src/index.js";
import { connect, drive, firstText, recordEvents, text } from "./helpers.js";

// A long-lived host wraps its MCP client once and serves every conversation through it, each call
// saying whose it is (`_meta.conversationId`). A tool one conversation gave up on (it kept failing
// there for `giveUpMs`, more than `maxRetries` times, and succeeded nowhere else meanwhile) stays
// usable in the others, and in that conversation again once `exhaustedResetMs` has passed. A
// success in another conversation while that conversation's calls keep failing means the tool is
// up (its failures there are not a dead tool): no stop then, only the wait.

const RESET_MS = 30_000;

async function host() {
  const ran: string[] = [];
  let broken = true;
  const { client } = await connect((server) => {
    server.registerTool("lookup_order", { inputSchema: { id: z.string() }, annotations: { readOnlyHint: true } }, async ({ id }, extra) => {
      const conversation = String(extra._meta?.conversationId);
      ran.push(conversation);
      // Only c-2's order lives on the shard that is down.
      if (conversation === "c-2" && broken) throw new Error("upstream answered HTTP 503 Service Unavailable");
      return text(`order ${id} for ${conversation}: shipped`);
    });
  });
  const clock = createFakeClock();
  const recorder = recordEvents();
  // Breaker threshold above one conversation's attempts (9 before it gives up): what is shown is the per-scope stop.
  const plugin = RetryReflectPlugin.create({
    clock,
    observers: [recorder],
    exhaustedResetMs: RESET_MS,
    circuitBreakerThreshold: 20,
  });
  const tools = withRetryReflect(client, plugin, { scope: (call) => String(call.params._meta?.conversationId) });
  const lookup = (conversation: string) =>
    tools.callTool({ name: "lookup_order", arguments: { id: "A-7" }, _meta: { conversationId: conversation } }) as Promise<CallToolResult>;
  return {
    ran,
    clock,
    recorder,
    plugin,
    lookup,
    heal: () => {
      broken = false;
    },
  };
}

describe("one wrapper serving three conversations (scope from the call's _meta)", () => {
  it("one conversation gives up on a tool; the other two still run it and succeed; after exhaustedResetMs it runs again there", async () => {
    const { ran, clock, recorder, plugin, lookup, heal } = await host();

    // c-1 and c-3 call the tool and succeed; then c-2's call is retried in place for its patience
    // (attempts at 0, 0.5, 1.5, 3.5, 7.5 and 11.5 s) and told the tool is temporarily unavailable.
    // (The others' successes come before c-2's calls began failing: one during them would keep c-2 from
    // giving up, as the last test shows.)
    const [first1, first3] = await drive(clock, Promise.all([lookup("c-1"), lookup("c-3")]));
    expect(firstText(first1)).toBe("order A-7 for c-1: shipped");
    expect(firstText(first3)).toBe("order A-7 for c-3: shipped");
    const first2 = await drive(clock, lookup("c-2"));
    expect(first2.isError).toBe(true);
    expect(first2._meta).toMatchObject({ "retry-reflect/outcome": { status: "reflect", attempt: 6 } });
    expect(first2.structuredContent).toMatchObject({ error_code: "TRANSIENT", recoverable: true, retry_after_ms: 4_000 });
    expect(ran.filter((conversation) => conversation === "c-2")).toHaveLength(6);
    // c-2 calls again after the wait it was told; by 23.5 s the tool has failed there for 20 s (giveUpMs): the stop.
    const second2 = await drive(clock, lookup("c-2"));
    expect(second2._meta).toMatchObject({ "retry-reflect/outcome": { status: "failed", reason: "exhausted", attempt: 9 } });
    expect(second2.structuredContent).toMatchObject({ error_code: "RETRIES_EXHAUSTED", recoverable: false });
    expect(ran.filter((conversation) => conversation === "c-2")).toHaveLength(9);
    expect(clock.now()).toBe(23_500);
    const exhaustedAt = clock.now();
    const exhausted = recorder.events.filter((event) => event.type === "retries_exhausted");
    expect(exhausted.map((event) => event.call?.scope)).toEqual(["c-2"]);
    expect(exhausted[0]?.fields).toMatchObject({ retry_after_ms: RESET_MS });

    // c-2 is refused without running; c-1 and c-3 run the same tool and succeed.
    ran.length = 0;
    const refused = await drive(clock, lookup("c-2"));
    const [again1, again3] = await drive(clock, Promise.all([lookup("c-1"), lookup("c-3")]));
    expect(refused.structuredContent).toMatchObject({ error_code: "RETRIES_EXHAUSTED" });
    expect(refused._meta).toMatchObject({ "retry-reflect/outcome": { status: "failed", reason: "exhausted" } });
    expect(firstText(again1)).toBe("order A-7 for c-1: shipped");
    expect(firstText(again3)).toBe("order A-7 for c-3: shipped");
    expect(ran).toEqual(["c-1", "c-3"]);
    expect(plugin.circuits.state("lookup_order")).toBe("closed");

    // Still refused 1 ms before the reset; the shard is back by then.
    heal();
    await clock.advance(exhaustedAt + RESET_MS - 1 - clock.now());
    const early = await drive(clock, lookup("c-2"));
    expect(early.structuredContent).toMatchObject({ error_code: "RETRIES_EXHAUSTED" });
    expect(ran).toEqual(["c-1", "c-3"]);

    // Once exhaustedResetMs has passed since the failure that spent the budget, c-2's next call runs.
    await clock.advance(1);
    const after = await drive(clock, lookup("c-2"));
    expect(ran).toEqual(["c-1", "c-3", "c-2"]);
    expect(after.isError).toBeUndefined();
    expect(firstText(after)).toBe("order A-7 for c-2: shipped");
  });

  it("a conversation whose calls keep failing is not given up on while another conversation's calls of the tool succeed: told to wait, not to stop", async () => {
    const { ran, clock, recorder, lookup, heal } = await host();

    // c-2's call spends its patience (6 attempts, to 11.5 s) and is told to wait.
    const first2 = await drive(clock, lookup("c-2"));
    expect(first2._meta).toMatchObject({ "retry-reflect/outcome": { status: "reflect", attempt: 6 } });
    // Then c-1 calls the same tool and succeeds: the tool is up, only c-2's shard is not.
    const first1 = await drive(clock, lookup("c-1"));
    expect(firstText(first1)).toBe("order A-7 for c-1: shipped");
    expect(clock.now()).toBe(11_500);

    // c-2 calls again after the wait; its calls fail past giveUpMs (20 s) and maxRetries, yet the
    // tool succeeded elsewhere since they began failing: no stop, the model is told to wait again.
    const second2 = await drive(clock, lookup("c-2"));
    expect(second2._meta).toMatchObject({ "retry-reflect/outcome": { status: "reflect" } });
    expect(second2.structuredContent).toMatchObject({ error_code: "TRANSIENT", recoverable: true, retry_after_ms: 4_000 });
    expect(clock.now()).toBeGreaterThan(20_000);
    expect(ran.filter((conversation) => conversation === "c-2").length).toBeGreaterThan(3);
    expect(recorder.events.filter((event) => event.type === "retries_exhausted")).toEqual([]);

    // The shard is back: c-2's next call runs and succeeds.
    heal();
    const third2 = await drive(clock, lookup("c-2"));
    expect(firstText(third2)).toBe("order A-7 for c-2: shipped");
  });
});
