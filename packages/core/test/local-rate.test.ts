import { describe, expect, it } from "vitest";
import { LocalRate, rateShareKey } from "../src/breaker/local-rate.js";
import type { BudgetShare, BudgetShareReply } from "../src/stores.js";
import { createFakeClock } from "../src/testing.js";

// The failure-rate window of a breaker over a store (`LocalRate`), with a `shareBudget` whose
// answers the test writes: what the fleet's buckets hold is set here, not summed.

const SETTINGS = { failureRate: 0.5, minimumCalls: 10, windowMs: 60_000 };

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
    expect(rate.record("search", true)).toBeUndefined(); // 1 call known here; its counts go to the store
    expect(fleet.keys).toEqual([rateShareKey("search")]);
    expect(fleet.sent[0]).toMatchObject({ counts: [0, 1, 1], take: false, windowMs: 60_000 });
    await Promise.resolve();
    await Promise.resolve();
    expect(rate.record("search", true)).toBe(101); // 100 of the fleet's and this one
  });

  it("leaves out the fleet's buckets up to the one in which the window started afresh (the store keeps them across an opening)", async () => {
    const clock = createFakeClock();
    const fleet = sharing([0, 100, 100]);
    const rate = new LocalRate(SETTINGS, clock, 100, fleet.share);
    rate.forget("search"); // nothing held yet: nothing to start afresh
    rate.record("search", true);
    await Promise.resolve();
    await Promise.resolve();
    expect(rate.record("search", true)).toBe(101); // the opening: the window starts afresh in bucket 0
    await clock.advance(1_000); // still bucket 0 (buckets of 6 s)
    expect(rate.record("search", true)).toBeUndefined(); // shares again, hears bucket 0's 100 failures
    await Promise.resolve();
    await Promise.resolve();
    // The call sent is in bucket 0 now, left out with the rest of it (a bucket's worth of calls
    // after an opening is undercounted: the circuit opens later, never sooner).
    for (let i = 0; i < 9; i++) expect(rate.record("search", true)).toBeUndefined();
    expect(rate.record("search", true)).toBe(10); // the 10 not sent yet, none of bucket 0's
  });

  it("a healthy key shares nothing; a failing one at most once a second", async () => {
    const clock = createFakeClock();
    const fleet = sharing([]);
    const rate = new LocalRate(SETTINGS, clock, 100, fleet.share);
    for (let i = 0; i < 100; i++) rate.record("lookup", false);
    expect(fleet.sent).toHaveLength(0);
    rate.record("search", true);
    for (let i = 0; i < 5; i++) rate.record("search", false);
    expect(fleet.sent).toHaveLength(1);
    await clock.advance(1_000);
    rate.record("search", false);
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
    rate.record("search", true);
    await Promise.resolve();
    await Promise.resolve();
    expect(errors).toEqual(["search: connect ECONNREFUSED"]);
    down = false;
    await clock.advance(1_000);
    rate.record("search", false);
    expect(sent[1]).toEqual([0, 2, 1]);
  });
});
