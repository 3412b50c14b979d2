import { describe, expect, it } from "vitest";
import { type RetryReflectOptions, RetryReflectPlugin } from "../src/index.js";
import { createFakeClock, drive } from "../src/testing.js";

// Part 1 and Part 4: a half-open probe that runs past `circuitBreakerResetMs` frees its slot,
// whatever the attempt limit: a hung probe never holds the circuit half-open and refusing calls.

const broken = (): never => {
  throw new Error("HTTP 503 Service Unavailable");
};
const hangs = (): Promise<never> => new Promise<never>(() => {});

describe("a probe that hangs past circuitBreakerResetMs frees its slot", () => {
  const limits: Array<[string, RetryReflectOptions]> = [
    ["no attempt limit (attemptTimeoutMs: 0)", { attemptTimeoutMs: 0 }],
    ["the default limit, longer than the reset time", {}],
    ["an explicit limit longer than the reset time", { attemptTimeoutMs: 50_000 }],
  ];
  for (const [name, options] of limits) {
    it(`${name}: a call meanwhile is turned away (waitForRecovery: false), the next after the lease goes through`, async () => {
      const clock = createFakeClock();
      const plugin = RetryReflectPlugin.create({
        clock,
        // One attempt per call, and no wait for the circuit: each call meets it as it stands.
        maxRetries: 0,
        patienceMs: 0,
        waitForRecovery: false,
        circuitBreakerThreshold: 2,
        circuitBreakerResetMs: 10_000,
        ...options,
      });
      let scopes = 0;
      const call = (fn: () => unknown) => plugin.execute({ toolName: "search", args: {}, scope: `run-${++scopes}` }, fn);
      await call(broken);
      await call(broken);
      expect(plugin.circuitState("search")).toBe("open");
      await clock.advance(10_000);
      void call(hangs); // the probe, hung
      await clock.advance(1);
      const during = await call(() => "ok");
      // One probe at a time: turned away, told to come back when the probe's lease ends.
      expect(during).toMatchObject({ status: "reflect", error: { code: "CIRCUIT_OPEN", retryAfterMs: 9_999 } });
      await clock.advance(10_000); // its lease (the reset time) is over
      const after = await call(() => "ok");
      expect(after).toMatchObject({ status: "success", value: "ok" });
      expect(plugin.circuitState("search")).toBe("closed");
    });

    it(`${name}: a call waiting for the hung probe goes through when its lease ends`, async () => {
      const clock = createFakeClock();
      const plugin = RetryReflectPlugin.create({
        clock,
        maxRetries: 0,
        circuitBreakerThreshold: 2,
        circuitBreakerResetMs: 10_000,
        // `opener` shares the circuit and fails once per call; `search` has the default patience.
        circuitBreakerKey: () => "search",
        tools: { opener: { patienceMs: 0 } },
        ...options,
      });
      let scopes = 0;
      const call = (toolName: string, fn: () => unknown) => plugin.execute({ toolName, args: {}, scope: `run-${++scopes}` }, fn);
      await call("opener", broken);
      await call("opener", broken);
      expect(plugin.circuitState("search")).toBe("open");
      await clock.advance(10_000);
      void call("search", hangs); // the probe, hung
      await clock.advance(1);
      let ranAt: number | undefined;
      const during = call("search", () => {
        ranAt = clock.now();
        return "ok";
      });
      await clock.advance(9_998);
      expect(ranAt).toBeUndefined(); // one probe at a time: it waits, within its patience
      expect(await drive(clock, during)).toMatchObject({ status: "success", value: "ok" });
      expect(ranAt).toBe(20_000); // the hung probe's lease (the reset time) is over: it is the next probe
      expect(plugin.circuitState("search")).toBe("closed");
    });
  }
});
