import { describe, expect, it } from "vitest";
import { LocalRate } from "../src/breaker/local-rate.js";
import type { BudgetShare, BudgetShareReply } from "../src/stores.js";
import { createFakeClock } from "../src/testing.js";

// The failure-rate window of a breaker over a store (`LocalRate`), with a `shareBudget` whose
// answers the test writes: what the fleet's buckets hold is set here, not summed.

const SETTINGS = { failureRate: 0.5, minimumCalls: 10, windowMs: 60_000 };
const CLOSED = { isClosed: () => true };

/** One call of a closed circuit: the failures of the window when it opens it (the store then answers at once), else undefined. */
function record(rate: LocalRate, key: string, failed: boolean): number | undefined {
  const opening = rate.opens(key, failed ? "failure" : "success", CLOSED);
  if (opening !== undefined) rate.sent(key);
  return opening;
}

function sharing(buckets: number[]) {
  const sent: BudgetShare[] = [];
  const keys: string[] = [];
  const share = async (key: string, share: BudgetShare): Promise<BudgetShareReply> => {
    keys.push(key);
    sent.push(share);
    await Promise.resolve();
    return { taken: false, buckets };
  };
  return { share, sent, keys };
}

describe("LocalRate over a store's shareBudget", () => {
  it("judges a failure on the fleet's buckets as last heard plus the counts not sent yet", async () => {
    const clock = createFakeClock();
    const fleet = sharing([0, 100, 100]); // the fleet's window: 100 calls, all failed
    const rate = new LocalRate(SETTINGS, clock, 100, fleet.share);
    expect(record(rate, "search", true)).toBeUndefined(); // 1 call known here; its counts go to the store
    expect(fleet.keys).toEqual(["\u0000failure-rate\u0000search"]); // apart from the tool's retry budget
    expect(fleet.sent[0]).toMatchObject({ counts: [0, 1, 1], take: false, windowMs: 60_000 });
    await Promise.resolve();
    await Promise.resolve();
    expect(record(rate, "search", true)).toBe(101); // 100 of the fleet's and this one
  });

  it("leaves out the fleet's buckets up to the one in which the window started afresh (the store keeps them across an opening)", async () => {
    const clock = createFakeClock();
    const fleet = sharing([0, 100, 100]);
    const rate = new LocalRate(SETTINGS, clock, 100, fleet.share);
    rate.forget("search"); // nothing held yet: nothing to start afresh
    record(rate, "search", true);
    await Promise.resolve();
    await Promise.resolve();
    expect(record(rate, "search", true)).toBe(101); // the opening: the window starts afresh in bucket 0
    await clock.advance(1_000); // still bucket 0 (buckets of 6 s)
    expect(record(rate, "search", true)).toBeUndefined(); // shares again, hears bucket 0's 100 failures
    await Promise.resolve();
    await Promise.resolve();
    // The call sent is in bucket 0 now, left out with the rest of it (a bucket's worth of calls
    // after an opening is undercounted: the circuit opens later, never sooner).
    for (let i = 0; i < 9; i++) expect(record(rate, "search", true)).toBeUndefined();
    expect(record(rate, "search", true)).toBe(10); // the 10 not sent yet, none of bucket 0's
  });

  it("a healthy key shares nothing; a failing one at most once a second", async () => {
    const clock = createFakeClock();
    const fleet = sharing([]);
    const rate = new LocalRate(SETTINGS, clock, 100, fleet.share);
    for (let i = 0; i < 100; i++) record(rate, "lookup", false);
    expect(fleet.sent).toHaveLength(0);
    record(rate, "search", true);
    for (let i = 0; i < 5; i++) record(rate, "search", false);
    expect(fleet.sent).toHaveLength(1);
    await clock.advance(1_000);
    record(rate, "search", false);
    expect(fleet.sent).toHaveLength(2);
    expect(fleet.sent[1]?.counts).toEqual([0, 6, 0]);
  });

  it("a rejected share keeps its counts here for the next one", async () => {
    const clock = createFakeClock();
    const errors: string[] = [];
    let down = true;
    const sent: number[][] = [];
    const share = async (_key: string, share: BudgetShare): Promise<BudgetShareReply> => {
      sent.push([...share.counts]);
      await Promise.resolve();
      if (down) throw new Error("connect ECONNREFUSED");
      return { taken: false, buckets: [] };
    };
    const rate = new LocalRate(SETTINGS, clock, 100, share, (key, error) => errors.push(`${key}: ${(error as Error).message}`));
    record(rate, "search", true);
    await Promise.resolve();
    await Promise.resolve();
    expect(errors).toEqual(["search: connect ECONNREFUSED"]);
    down = false;
    await clock.advance(1_000);
    record(rate, "search", false);
    expect(sent[1]).toEqual([0, 2, 1]);
  });

  it("judges nothing neutral, nothing while its opening is on its way to the store, and drops the window of a circuit not closed", () => {
    const rate = new LocalRate({ failureRate: 1, minimumCalls: 2, windowMs: 60_000 }, createFakeClock(), 100);
    expect(rate.opens("search", "failure", CLOSED)).toBeUndefined();
    expect(rate.opens("search", "neutral", CLOSED)).toBeUndefined();
    expect(rate.opens("search", "failure", CLOSED)).toBe(2); // the opening, sent to the store
    expect(rate.opens("search", "failure", CLOSED)).toBeUndefined(); // stale: the opening is not answered yet
    rate.sent("search");
    expect(rate.opens("search", "failure", CLOSED)).toBeUndefined(); // a fresh window: 1 call
    expect(rate.opens("search", "failure", { isClosed: () => false })).toBeUndefined(); // the circuit opened: the window goes
    expect(rate.size).toBe(0);
    expect(rate.opens("search", "failure", CLOSED)).toBeUndefined();
    expect(rate.opens("search", "failure", CLOSED)).toBe(2);
  });
});
