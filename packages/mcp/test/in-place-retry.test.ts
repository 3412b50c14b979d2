import { RetryReflectPlugin } from "@retry-reflect/core";
import { createFakeClock } from "@retry-reflect/core/testing";
import { afterEach, describe, expect, it, vi } from "vitest";
import { z } from "zod";
import { withRetryReflect } from "../src/index.js";
import { connect, drive, firstText, recordEvents, settle, text } from "./helpers.js";

describe("a transient failure is retried in place", () => {
  it("answers one callTool with the server's result after two 503s, waiting 500 then 1000 ms on the injected clock", async () => {
    let calls = 0;
    const { client } = await connect((server) => {
      server.registerTool(
        "search",
        { description: "Search the index.", inputSchema: { query: z.string() }, annotations: { readOnlyHint: true } },
        async ({ query }) => {
          calls += 1;
          // McpServer turns a thrown error into an `isError` result with its message as text.
          if (calls <= 2) throw new Error("upstream answered HTTP 503 Service Unavailable");
          return text(`results for ${query}`);
        },
      );
    });
    const clock = createFakeClock();
    const recorder = recordEvents();
    const tools = withRetryReflect(client, { clock, observers: [recorder] });

    const result = await drive(clock, tools.callTool({ name: "search", arguments: { query: "retry" } }));

    expect(result.isError).toBeUndefined();
    expect(firstText(result)).toBe("results for retry");
    expect(calls).toBe(3); // one call from the caller's view, three at the server: no model step per retry
    expect(clock.sleeps.filter((ms) => ms > 0)).toEqual([500, 1000]);
    expect(clock.now()).toBe(1500);
    expect(recorder.lines()).toEqual([
      `WARN tool call failed, retrying tool_name="search" attempt=1 max=3 backoff_ms=500 error="upstream answered HTTP 503 Service Unavailable" error_code="TRANSIENT" mode="in_place"`,
      `WARN tool call failed, retrying tool_name="search" attempt=2 max=3 backoff_ms=1000 error="upstream answered HTTP 503 Service Unavailable" error_code="TRANSIENT" mode="in_place"`,
      `INFO retry succeeded tool_name="search" attempt=3`,
    ]);
  });
});

describe("a request timeout (-32001) is transient", () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it("retries a call whose request timed out, and cancels the timed-out request at the server", async () => {
    // The SDK's request timeout runs on setTimeout: faked here, so nothing waits for real time.
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
    let calls = 0;
    let cancelled = 0;
    const { client } = await connect((server) => {
      server.registerTool("lookup", { inputSchema: { id: z.string() } }, async ({ id }, extra) => {
        calls += 1;
        if (calls === 1) {
          // Hangs until the client cancels the request.
          await new Promise<void>((resolve) => extra.signal.addEventListener("abort", () => resolve(), { once: true }));
          cancelled += 1;
          return text("too late");
        }
        return text(`record ${id}`);
      });
    });
    const clock = createFakeClock();
    const recorder = recordEvents();
    const tools = withRetryReflect(client, { clock, observers: [recorder] });

    const pending = tools.callTool({ name: "lookup", arguments: { id: "42" } }, undefined, { timeout: 1_000 });
    await settle();
    await vi.advanceTimersByTimeAsync(1_000);
    const result = await drive(clock, pending);

    expect(firstText(result)).toBe("record 42");
    expect(calls).toBe(2);
    expect(cancelled).toBe(1);
    expect(recorder.lines()[0]).toBe(
      `WARN tool call failed, retrying tool_name="lookup" attempt=1 max=3 backoff_ms=500 error="Request timed out" error_code="TIMEOUT" mode="in_place"`,
    );
  });

  it("rejects with the caller's abort reason, not a timeout, when the caller aborts a request in flight (the SDK reports both as -32001)", async () => {
    let calls = 0;
    const { client } = await connect((server) => {
      server.registerTool("lookup", { inputSchema: { id: z.string() } }, async (_args, extra) => {
        calls += 1;
        await new Promise<void>((resolve) => extra.signal.addEventListener("abort", () => resolve(), { once: true }));
        return text("too late");
      });
    });
    const clock = createFakeClock();
    const recorder = recordEvents();
    const plugin = RetryReflectPlugin.create({ clock, observers: [recorder] });
    const tools = withRetryReflect(client, plugin);
    const controller = new AbortController();
    const reason = new Error("the user cancelled");

    const pending = tools.callTool({ name: "lookup", arguments: { id: "42" } }, undefined, { signal: controller.signal });
    await settle();
    controller.abort(reason);

    await expect(drive(clock, pending)).rejects.toBe(reason);
    expect(calls).toBe(1);
    expect(recorder.events.filter((event) => event.type === "retry")).toEqual([]);
    expect(plugin.circuits.state("lookup")).toBe("closed");
  });
});

describe("attemptTimeoutMs", () => {
  it("cancels a hung request at the server when the attempt's limit passes on the injected clock, and retries it in place", async () => {
    let calls = 0;
    let cancelled = 0;
    const { client } = await connect((server) => {
      server.registerTool("lookup", { inputSchema: { id: z.string() } }, async ({ id }, extra) => {
        calls += 1;
        if (calls === 1) {
          await new Promise<void>((resolve) => extra.signal.addEventListener("abort", () => resolve(), { once: true }));
          cancelled += 1;
          return text("too late");
        }
        return text(`record ${id}`);
      });
    });
    const clock = createFakeClock();
    const tools = withRetryReflect(client, { clock, attemptTimeoutMs: 2_000 });

    const result = await drive(clock, tools.callTool({ name: "lookup", arguments: { id: "42" } }));

    expect(firstText(result)).toBe("record 42");
    expect(calls).toBe(2);
    expect(cancelled).toBe(1); // the SDK sent notifications/cancelled when the attempt's signal aborted
    expect(clock.now()).toBe(2_500); // the 2000 ms limit, then the 500 ms backoff
  });
});
