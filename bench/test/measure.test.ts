// The harness's one timing rule: a fast contestant is measured in batches, also when its first call
// in a round is slow (the first call after `gc()` can take milliseconds). Measured call by call, each
// sample would count the clock's own system call and report a 0.3 µs call at several µs.

import { describe, expect, it } from "vitest";
import { compare } from "../src/measure.js";

/** mitata's batch: a batched contestant's measured calls are a multiple of it. */
const BATCH_SAMPLES = 4096;

function spin(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until) {
    // the slow first call of a round
  }
}

describe("compare", () => {
  it("batches a fast contestant whose first call of each round is slow", async () => {
    let calls = 0;
    let slowNext = true;
    const fastAfterFirst = async () => {
      calls++;
      if (slowNext) {
        slowNext = false;
        spin(2); // over mitata's 500 µs warm-up threshold
      }
      return calls;
    };
    const plain = async () => 1;
    const [timing] = await compare(
      [
        ["fast after a slow first call", fastAfterFirst],
        [
          "next round's first call is slow again",
          () => {
            slowNext = true;
            return plain();
          },
        ],
      ],
      { rounds: 2, minCpuMs: 5 },
    );
    expect(timing?.calls).toBeGreaterThanOrEqual(BATCH_SAMPLES);
    expect((timing?.calls ?? 1) % BATCH_SAMPLES).toBe(0);
  });
});
