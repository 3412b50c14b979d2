import { RetryReflectPlugin } from "@retry-reflect/core";
import { createFakeClock } from "@retry-reflect/core/testing";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { withRetryReflect } from "../src/index.js";
import { connect, drive, firstText, text } from "./helpers.js";

describe("the circuit breaker", () => {
  it("opens after consecutive failures, fails fast without calling the server, and closes after the reset when the probe succeeds", async () => {
    let calls = 0;
    let healthy = false;
    const { client } = await connect((server) => {
      server.registerTool("inventory", { inputSchema: { sku: z.string() } }, async ({ sku }) => {
        calls += 1;
        if (!healthy) throw new Error("HTTP 503 Service Unavailable");
        return text(`${sku}: 4 in stock`);
      });
    });
    const clock = createFakeClock();
    const plugin = RetryReflectPlugin.create({ clock, maxRetries: 1, circuitBreakerThreshold: 2, circuitBreakerResetMs: 10_000 });
    const firstRun = withRetryReflect(client, plugin);

    const tripped = await drive(clock, firstRun.callTool({ name: "inventory", arguments: { sku: "A1" } }));
    expect(tripped.isError).toBe(true);
    expect(calls).toBe(2); // the first attempt and one in-place retry
    expect(plugin.circuits.state("inventory")).toBe("open");

    // Another agent run (a new wrapper: a new scope, so its budget is fresh) finds the circuit open.
    const nextRun = withRetryReflect(client, plugin);
    const rejected = await drive(clock, nextRun.callTool({ name: "inventory", arguments: { sku: "A1" } }));
    expect(calls).toBe(2); // not called: the circuit is open
    expect(rejected.isError).toBe(true);
    expect(rejected.structuredContent).toMatchObject({ error_code: "CIRCUIT_OPEN", recoverable: false });
    expect(rejected._meta).toMatchObject({ "retry-reflect/outcome": { status: "failed" } });

    await clock.advance(10_000);
    expect(plugin.circuits.state("inventory")).toBe("half-open");
    healthy = true;
    const probe = await drive(clock, withRetryReflect(client, plugin).callTool({ name: "inventory", arguments: { sku: "A1" } }));
    expect(firstText(probe)).toBe("A1: 4 in stock");
    expect(plugin.circuits.state("inventory")).toBe("closed");
  });
});
