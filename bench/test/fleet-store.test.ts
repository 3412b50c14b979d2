// The breaker store the load section's replicas share (bench/src/agents/fleet-store.ts): what one
// plugin opens, the others reject; the budget's window is one for all; a healthy tool costs no
// round trip.

import { RetryReflectPlugin } from "@retry-reflect/core";
import { createFakeClock } from "@retry-reflect/core/testing";
import { describe, expect, it } from "vitest";
import { FleetStore } from "../src/agents/fleet-store.js";

const unavailable = () => Object.assign(new Error("503 Service Unavailable"), { status: 503 });

describe("FleetStore", () => {
  it("a circuit one replica opens rejects the other's calls; a healthy tool costs no round trip", async () => {
    const clock = createFakeClock();
    const store = new FleetStore(clock);
    const [a, b] = [0, 1].map(() =>
      RetryReflectPlugin.create({
        clock,
        circuitBreakerStore: store,
        circuitBreakerThreshold: 2,
        circuitBreakerResetMs: 60_000,
        maxRetries: 0,
      }),
    );
    let scopes = 0;
    let runs = 0;
    const call = (plugin: RetryReflectPlugin | undefined, fail: boolean) =>
      (plugin as RetryReflectPlugin).execute({ toolName: "search", args: {}, scope: `s${++scopes}` }, () => {
        runs++;
        if (fail) throw new Error("upstream exploded");
        return "ok";
      });
    for (let i = 0; i < 50; i++) await call(b, false);
    expect(store.roundTrips).toBe(0);
    await call(a, true);
    await call(a, true);
    expect(store.state("search")).toBe("open");
    // The other replica's call is refused at the shared open circuit: the tool does not run (what
    // the refusal says, and whether a call waits for the circuit's probe, is the core's to decide).
    const before = runs;
    const refused = await call(b, false);
    expect(runs).toBe(before);
    expect("message" in refused ? refused.message : "").toContain('"error_code":"CIRCUIT_OPEN"');
  });

  it("shares one retry budget: 2 replicas asking for retries get the fleet's allowance, not twice it", async () => {
    const clock = createFakeClock();
    const store = new FleetStore(clock);
    const budget = { ratio: 0, minPerSecond: 0.1, windowMs: 10_000 }; // 1 in-place retry per 10 s, fleet-wide
    const plugins = [0, 1].map(() =>
      RetryReflectPlugin.create({ clock, circuitBreakerStore: store, retryBudget: budget, maxRetries: 3, initialBackoffMs: 1 }),
    );
    let runs = 0;
    const outcomes = plugins.map((plugin) =>
      plugin.execute({ toolName: "search", args: {}, scope: "s" }, () => {
        runs++;
        throw unavailable();
      }),
    );
    for (let i = 0; i < 20; i++) await clock.advance(10);
    const ended = await Promise.all(outcomes);
    expect(runs).toBe(3); // 2 first attempts and the fleet's 1 retry
    expect(ended.map((outcome) => outcome.status === "reflect" && outcome.error.code)).toEqual([
      "RETRY_BUDGET_SPENT",
      "RETRY_BUDGET_SPENT",
    ]);
  });
});
