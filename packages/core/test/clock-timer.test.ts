import { afterEach, describe, expect, it, vi } from "vitest";
import { systemClock } from "../src/index.js";
import { createFakeClock } from "../src/testing.js";

// `Clock.timer`: what an attempt's time limit and a write's lease renewal run on. It fires once,
// unless stopped first, and a watchdog timer is no wait of any call: a test clock does not jump to it.

describe("the fake clock's timers", () => {
  it("fire once at their time, are no sleeps, and count as pending until they fire", async () => {
    const clock = createFakeClock();
    const fired: number[] = [];
    const stop = clock.timer(100, () => fired.push(clock.now()), false);
    expect(clock.pendingSleeps()).toBe(1);
    await clock.advance(99);
    expect(fired).toEqual([]);
    await clock.advance(1);
    expect(fired).toEqual([100]);
    expect(clock.pendingSleeps()).toBe(0);
    stop(); // after it fired: nothing happens
    await clock.advance(1_000);
    expect(fired).toEqual([100]);
    expect(clock.sleeps).toEqual([]);
  });

  it("stopped before their time, never fire and are no longer pending", async () => {
    const clock = createFakeClock();
    const fired: string[] = [];
    const stopFirst = clock.timer(100, () => fired.push("first"), false);
    clock.timer(200, () => fired.push("second"), false);
    stopFirst();
    expect(clock.pendingSleeps()).toBe(1);
    await clock.runAll();
    expect(fired).toEqual(["second"]);
    expect(clock.now()).toBe(200);
  });

  it("runAll jumps to a timer but not to a watchdog; advance fires a watchdog when due", async () => {
    const clock = createFakeClock();
    const fired: string[] = [];
    clock.timer(60_000, () => fired.push("watchdog"), true);
    clock.timer(500, () => fired.push("limit"), false);
    expect(clock.pendingSleeps()).toBe(1);
    await clock.runAll();
    expect(fired).toEqual(["limit"]);
    expect(clock.now()).toBe(500);
    await clock.advance(59_500);
    expect(fired).toEqual(["limit", "watchdog"]);
  });
});

describe("the system clock's timers", () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it("fire once after ms, and not at all when stopped first", () => {
    vi.useFakeTimers();
    const fired: string[] = [];
    systemClock.timer(100, () => fired.push("kept"), false);
    const stop = systemClock.timer(100, () => fired.push("stopped"), true);
    stop();
    vi.advanceTimersByTime(99);
    expect(fired).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(fired).toEqual(["kept"]);
    expect(vi.getTimerCount()).toBe(0);
  });
});
