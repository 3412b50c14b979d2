import { RetryReflectPlugin } from "@retry-reflect/core";
import { createFakeClock } from "@retry-reflect/core/testing";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { withRetryReflect } from "../src/index.js";
import { connect, drive, firstText, recordEvents, text } from "./helpers.js";

describe("the circuit breaker", () => {
  it("opens after consecutive failures; a call meeting it is turned away without calling the server, or, due within its patience, waits for the probe", async () => {
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
    const recorder = recordEvents();
    // Open for 60 s: longer than a call's patience (15 s).
    const plugin = RetryReflectPlugin.create({ clock, observers: [recorder], circuitBreakerThreshold: 2, circuitBreakerResetMs: 60_000 });
    const firstRun = withRetryReflect(client, plugin);

    const tripped = await drive(clock, firstRun.callTool({ name: "inventory", arguments: { sku: "A1" } }));
    expect(calls).toBe(2); // the first attempt and one in-place retry, whose failure opened the circuit
    expect(plugin.circuits.state("inventory")).toBe("open");
    expect(tripped.isError).toBe(true);
    expect(tripped.structuredContent).toMatchObject({ error_code: "TRANSIENT", recoverable: true, retry_after_ms: 60_000 });
    expect(firstText(tripped)).toMatch(/temporarily unavailable.*about 60 s/);

    // Another agent run (a new wrapper: a new scope) finds the circuit open, 60 s from its probe: turned away at once.
    const nextRun = withRetryReflect(client, plugin);
    const rejectedAt = clock.now();
    const rejected = await drive(clock, nextRun.callTool({ name: "inventory", arguments: { sku: "A1" } }));
    expect(calls).toBe(2); // not called: the circuit is open
    expect(clock.now()).toBe(rejectedAt);
    expect(rejected.isError).toBe(true);
    expect(rejected.structuredContent).toMatchObject({ error_code: "CIRCUIT_OPEN", recoverable: true, retry_after_ms: 60_000 });
    expect(firstText(rejected)).toMatch(/temporarily unavailable.*about 60 s/);
    expect(rejected._meta).toMatchObject({ "retry-reflect/outcome": { status: "reflect" } });

    // 10 s before the probe (within the patience), a third run's call waits for it, is the probe, and the server is back.
    await clock.advance(50_000);
    healthy = true;
    const probe = await drive(clock, withRetryReflect(client, plugin).callTool({ name: "inventory", arguments: { sku: "A1" } }));
    expect(firstText(probe)).toBe("A1: 4 in stock");
    expect(probe.isError).toBeUndefined();
    expect(calls).toBe(3);
    expect(clock.now()).toBe(rejectedAt + 60_000);
    expect(plugin.circuits.state("inventory")).toBe("closed");
    expect(recorder.events.find((event) => event.type === "waiting_for_recovery")?.fields).toEqual({
      tool_name: "inventory",
      wait_ms: 10_000,
    });
  });
});
