import { describe, expect, it } from "vitest";
import type { RetryReflectEvent } from "../src/events.js";
import type { GuardedCall } from "../src/idempotency/guarded-call.js";
import { answerOf } from "../src/idempotency/store-protocol.js";
import { RetryReflectPlugin } from "../src/index.js";
import { argumentsFingerprint } from "../src/primitives.js";
import type { IdempotencyStore } from "../src/stores.js";

// The one table of answers to a store's `begin` (acquired, completed, in progress, in doubt, busy),
// read by the plugin's guard and by `RequestGuard` (an MCP server's `withIdempotency`) alike, and
// the rule both keep: a record the guard cannot use is never replayed (WRITE_IN_DOUBT, with a
// store_error whose reason is invalid_record), whatever fingerprint it carries.

const run = { toolName: "pay", fingerprint: "fp" } as GuardedCall;
const any = () => true;
/** What a write does on `answer`: runs, replays, is refused (its code), or the answer is a fault (undefined). */
const action = (answer: unknown, replayable: (value: unknown) => boolean = any) => {
  const next = answerOf(run, answer, replayable, () => {});
  if (next === undefined) return "fault";
  if ("token" in next) return `run ${next.token}`;
  if ("replay" in next) return `replay ${JSON.stringify(next.replay)}`;
  return `${next.refusal.code}${next.refusal.retryAfterMs === undefined ? "" : ` ${next.refusal.retryAfterMs}`}`;
};

describe("the table of answers to begin", () => {
  it.each([
    [{ status: "acquired", token: "7" }, "run 7"],
    [{ status: "acquired", token: 7 }, "run 7"],
    [{ status: "acquired", token: "" }, "fault"],
    [{ status: "completed", fingerprint: "fp", value: { sent: 1 } }, 'replay {"sent":1}'],
    [{ status: "completed", fingerprint: "other", value: 1 }, "IDEMPOTENCY_KEY_REUSED"],
    [{ status: "completed", value: 1 }, "WRITE_IN_DOUBT"],
    [{ status: "in_progress", fingerprint: "fp", retryAfterMs: 25_000 }, "IN_PROGRESS 1000"],
    [{ status: "in_progress", fingerprint: "fp", retryAfterMs: 200 }, "IN_PROGRESS 200"],
    [{ status: "in_progress", fingerprint: "other", retryAfterMs: 200 }, "IDEMPOTENCY_KEY_REUSED"],
    [{ status: "in_doubt", fingerprint: "fp" }, "WRITE_IN_DOUBT"],
    [{ status: "in_doubt", fingerprint: "other" }, "IDEMPOTENCY_KEY_REUSED"],
    [{ status: "in_doubt", fingerprint: "other", invalidRecord: "does not parse" }, "WRITE_IN_DOUBT"],
    [{ status: "in_doubt" }, "fault"],
    [{ status: "busy", retryAfterMs: 300 }, "IN_PROGRESS 300"],
    [{ status: "done" }, "fault"],
    [null, "fault"],
  ])("%j → %s", (answer, expected) => {
    expect(action(answer)).toBe(expected);
  });

  it("a completed record whose value the host cannot return is in doubt, whatever its fingerprint", () => {
    const isText = (value: unknown) => typeof value === "string";
    expect(action({ status: "completed", fingerprint: "fp", value: "sent" }, isText)).toBe('replay "sent"');
    expect(action({ status: "completed", fingerprint: "fp", value: 42 }, isText)).toBe("WRITE_IN_DOUBT");
    expect(action({ status: "completed", fingerprint: "other", value: 42 }, isText)).toBe("WRITE_IN_DOUBT");
  });
});

describe("the plugin's guard and a record it cannot use", () => {
  const payment = { amount: 100, idempotency_key: "pay-1" };

  it.each([
    [
      "a store that could not read its record",
      { status: "in_doubt", fingerprint: "fp", invalidRecord: "its stored result does not parse as JSON" },
    ],
    ["a completed record without its fingerprint", { status: "completed", value: "paid" }],
  ])("%s: WRITE_IN_DOUBT with a store_error (invalid_record); the write does not run", async (_name, answer) => {
    const store: IdempotencyStore = { begin: async () => answer as never, complete: async () => true, release: async () => true };
    const events: RetryReflectEvent[] = [];
    const plugin = RetryReflectPlugin.create({
      toolEffects: { pay: "write" },
      idempotency: { store },
      observers: [{ onEvent: (event) => events.push(event) }],
    });
    let runs = 0;
    const outcome = await plugin.execute({ toolName: "pay", args: payment, scope: "run-1" }, () => {
      runs++;
      return "paid";
    });
    // Before: the first was told WRITE_IN_DOUBT with no word of the record; the second was STORE_UNAVAILABLE.
    expect(outcome).toMatchObject({ status: "failed", error: { code: "WRITE_IN_DOUBT", recoverable: false } });
    expect(events.map((event) => [event.type, event.fields])).toEqual([
      ["store_error", expect.objectContaining({ tool_name: "pay", operation: "begin", reason: "invalid_record" })],
      ["idempotency_conflict", { tool_name: "pay", reason: "in_doubt" }],
    ]);
    expect(runs).toBe(0);
  });

  it("a completed record with the call's fingerprint is replayed as before", async () => {
    const fingerprint = argumentsFingerprint(payment, "idempotency_key");
    const store: IdempotencyStore = {
      begin: async () => ({ status: "completed", fingerprint, value: "paid earlier" }),
      complete: async () => true,
      release: async () => true,
    };
    const plugin = RetryReflectPlugin.create({ toolEffects: { pay: "write" }, idempotency: { store } });
    const outcome = await plugin.execute({ toolName: "pay", args: payment, scope: "run-1" }, () => "paid now");
    expect(outcome).toMatchObject({ status: "success", value: "paid earlier", replayed: true });
  });
});
