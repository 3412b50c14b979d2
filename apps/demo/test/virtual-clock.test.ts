import { describe, expect, it } from "vitest";
import { createVirtualClock, realWorkGate } from "../src/runner/virtual-clock.js";

const turns = async (count: number) => {
  for (let index = 0; index < count; index++) await new Promise((resolve) => setImmediate(resolve));
};

describe("virtual clock", () => {
  it("resolves sleeps in order of their wake-up without waiting, and moves now() to each", async () => {
    const clock = createVirtualClock();
    const woke: [number, number][] = [];
    const started = Date.now();
    await Promise.all([60_000, 500, 3_000].map((ms) => clock.sleep(ms).then(() => woke.push([ms, clock.now()]))));
    expect(woke).toEqual([
      [500, 500],
      [3_000, 3_000],
      [60_000, 60_000],
    ]);
    expect(clock.sleeps).toEqual([60_000, 500, 3_000]);
    expect(Date.now() - started).toBeLessThan(1_000);
  });

  it("stands still while real work holds it, and moves on once it is released", async () => {
    const clock = createVirtualClock();
    const release = clock.hold();
    let woke = false;
    const timer = clock.sleep(1_000).then(() => {
      woke = true;
    });
    await turns(20);
    expect([woke, clock.now()]).toEqual([false, 0]);
    release();
    release(); // more than once is harmless
    await timer;
    expect(clock.now()).toBe(1_000);
  });

  it("drops an aborted sleep without moving time to it", async () => {
    const clock = createVirtualClock();
    const controller = new AbortController();
    const release = clock.hold();
    const timer = clock.sleep(1_000, controller.signal);
    controller.abort(new Error("settled first"));
    await expect(timer).rejects.toThrow("settled first");
    release();
    await clock.sleep(10);
    expect(clock.now()).toBe(10);
  });

  it("holds time for an attempt (the gate's runInContext) until it settles or a service holds its request", async () => {
    const clock = createVirtualClock();
    const gate = realWorkGate(clock);
    const run = gate.observer?.runInContext;
    if (!run) throw new Error("expected an observer on virtual time");
    let answer: (value: string) => void = () => {};
    const attempt = run.call(gate.observer, {} as never, () => new Promise<string>((resolve) => (answer = resolve)));
    let woke = false;
    const timer = clock.sleep(1_000).then(() => {
      woke = true;
    });
    await turns(20);
    expect(woke).toBe(false);
    answer("done");
    await expect(attempt).resolves.toBe("done");
    await timer;

    // An attempt whose request a service holds: only its timer can end it, so time moves.
    const hung = run.call(gate.observer, {} as never, () => new Promise<never>(() => {}));
    void hung;
    const timeout = clock.sleep(1_000);
    await turns(20);
    gate.requestHeld();
    await timeout;
    expect(clock.now()).toBe(2_000);
  });

  it("has nothing to hold on real time", () => {
    expect(realWorkGate({ now: () => 0, sleep: () => Promise.resolve(), timer: () => () => {} }).observer).toBeUndefined();
  });
});
