import { describe, expect, it } from "vitest";
import { type RetryReflectOptions, RetryReflectPlugin } from "../src/index.js";
import { createFakeClock } from "../src/testing.js";

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
    it(name, async () => {
      const clock = createFakeClock();
      const plugin = RetryReflectPlugin.create({
        clock,
        maxRetries: 0,
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
      expect(during.status === "failed" && during.error.code).toBe("CIRCUIT_OPEN"); // one probe at a time
      await clock.advance(10_000); // its lease (the reset time) is over
      const after = await call(() => "ok");
      expect(after).toMatchObject({ status: "success", value: "ok" });
      expect(plugin.circuitState("search")).toBe("closed");
    });
  }
});
