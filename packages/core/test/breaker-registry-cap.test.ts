import { describe, expect, it } from "vitest";
import { RetryReflectPlugin } from "../src/index.js";
import { CircuitBreaker } from "../src/primitives.js";
import { createFakeClock } from "../src/testing.js";

// A bounded registry of circuits (`maxCircuitBreakers`) must not let other tenants' failures push
// a victim's open circuit out: it would read `closed` again, and the broken tool would be called.

const broken = (): never => {
  throw new Error("HTTP 503 Service Unavailable");
};

describe("the circuit registry at its cap", () => {
  it("keeps a tenant's open circuit while other tenants fail under more keys than the cap (per-tenant circuitBreakerKey)", async () => {
    const clock = createFakeClock();
    const plugin = RetryReflectPlugin.create({
      clock,
      // One attempt per call (no in-place retry within a patience): each tenant fails exactly once.
      maxRetries: 0,
      patienceMs: 0,
      circuitBreakerThreshold: 1,
      circuitBreakerResetMs: 60_000,
      maxCircuitBreakers: 10,
      circuitBreakerKey: (call) => `${call.namespace}:${call.toolName}`,
    });
    let runs = 0;
    const call = (tenant: string, fn: () => unknown) =>
      plugin.execute({ toolName: "search", args: {}, scope: `run-${++runs}`, namespace: tenant }, fn);
    await call("victim", broken);
    expect(plugin.circuitState("victim:search")).toBe("open");
    // 50 other tenants, each failing once (one failure each: a closed count, or open at threshold 1).
    for (let index = 0; index < 50; index++) await call(`tenant-${index}`, () => (index % 2 === 0 ? broken() : "ok"));
    expect(plugin.circuits.size).toBeLessThanOrEqual(10);
    expect(plugin.circuitState("victim:search")).toBe("open");
    let ran = false;
    const refused = await call("victim", () => {
      ran = true;
      return "should not run";
    });
    expect(refused).toMatchObject({ status: "reflect", error: { code: "CIRCUIT_OPEN", retryAfterMs: 60_000 } });
    expect(ran).toBe(false);
  });

  it("drops closed counts first, then open circuits whose open time has passed; never one within its open time", async () => {
    const clock = createFakeClock();
    const breaker = new CircuitBreaker({ threshold: 2, resetMs: 1000, maxKeys: 3, clock });
    const permit = { probe: 0 };
    breaker.onFailure("a", permit);
    breaker.onFailure("a", permit); // a: open
    breaker.onFailure("b", permit); // b: one failure, closed
    breaker.onFailure("c", permit);
    breaker.onFailure("c", permit); // c: open
    breaker.onFailure("d", permit); // the cap: b (closed) goes, not a
    expect([breaker.state("a"), breaker.state("c"), breaker.size]).toEqual(["open", "open", 3]);
    breaker.onFailure("e", permit); // d (closed) goes
    expect([breaker.state("a"), breaker.state("c"), breaker.size]).toEqual(["open", "open", 3]);
    breaker.onFailure("e", permit); // e opens: its own entry, nothing else goes
    breaker.onFailure("f", permit); // full of open circuits within their time: f is not tracked
    expect([breaker.state("a"), breaker.state("c"), breaker.state("e"), breaker.size]).toEqual(["open", "open", "open", 3]);
    await clock.advance(1000); // their open time passed: now they may go, least recently used first
    breaker.onFailure("f", permit);
    expect(breaker.size).toBe(3);
    expect(breaker.state("e")).toBe("half-open");
  });

  it("keeps an isolated circuit whatever the cap", () => {
    const breaker = new CircuitBreaker({ threshold: 1, maxKeys: 2 });
    breaker.isolate("kept");
    for (let index = 0; index < 10; index++) breaker.onFailure(`other-${index}`, { probe: 0 });
    expect(breaker.state("kept")).toBe("open");
    expect(breaker.isIsolated("kept")).toBe(true);
  });
});
