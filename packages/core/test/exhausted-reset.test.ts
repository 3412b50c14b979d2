import { describe, expect, it } from "vitest";
import { InvalidOptionError, RetryReflectPlugin } from "../src/index.js";
import { createFakeClock, recordEvents } from "../src/testing.js";

// A tool whose retry budget is spent in a scope is refused there for `exhaustedResetMs` (default
// 60 s) after the failure that spent it; then its next call runs and the row starts afresh. A
// long-lived scope (an MCP client or an AI SDK tool set wrapped once) never locks a tool for good.

const badInput = () => new Error("Invalid input: city must be a city name");

function setup(options: { exhaustedResetMs?: number } = {}) {
  const clock = createFakeClock();
  const events = recordEvents();
  const plugin = RetryReflectPlugin.create({ clock, maxRetries: 1, initialBackoffMs: 0, observers: [events], ...options });
  let runs = 0;
  let healthy = false;
  const call = () =>
    plugin.execute({ toolName: "geocode", args: { city: "x" }, scope: "mcp-client" }, () => {
      runs += 1;
      if (healthy) return "ok";
      throw badInput();
    });
  const spend = async () => {
    expect((await call()).status).toBe("reflect");
    const spent = await call();
    expect(spent.status === "failed" && spent.reason).toBe("exhausted");
  };
  return {
    clock,
    events,
    plugin,
    call,
    spend,
    runs: () => runs,
    heal: () => {
      healthy = true;
    },
  };
}

describe("exhaustedResetMs: a spent budget ends", () => {
  it("by default, the tool is refused without running for 60 s after the failure that spent it, then runs afresh", async () => {
    const { clock, call, spend, runs, heal } = setup();
    await spend();
    expect(runs()).toBe(2);
    await clock.advance(59_999);
    const refused = await call();
    expect(refused.status === "failed" && [refused.reason, refused.error.code]).toEqual(["exhausted", "RETRIES_EXHAUSTED"]);
    expect(runs()).toBe(2);
    await clock.advance(1);
    heal();
    const again = await call();
    expect(again).toMatchObject({ status: "success", value: "ok", attempt: 1 });
    expect(runs()).toBe(3);
  });

  it("after the reset the row starts from attempt 1: the whole budget is there again", async () => {
    const { clock, call, spend, runs } = setup();
    await spend();
    await clock.advance(60_000);
    const first = await call();
    expect(first.status === "reflect" && first.attempt).toBe(1);
    const second = await call();
    expect(second.status === "failed" && [second.reason, second.attempt]).toEqual(["exhausted", 2]);
    expect(runs()).toBe(4);
  });

  it("0 keeps the stop for the scope's life", async () => {
    const { clock, call, spend, runs } = setup({ exhaustedResetMs: 0 });
    await spend();
    await clock.advance(24 * 3_600_000);
    const refused = await call();
    expect(refused.status === "failed" && refused.reason).toBe("exhausted");
    expect(runs()).toBe(2);
  });

  it("retries_exhausted says when the tool may run again (retry_after_ms), except with 0", async () => {
    const timed = setup({ exhaustedResetMs: 5_000 });
    await timed.spend();
    const exhausted = timed.events.events.find((event) => event.type === "retries_exhausted");
    expect(exhausted?.fields).toMatchObject({ tool_name: "geocode", attempts: 2, retry_after_ms: 5_000 });
    const forever = setup({ exhaustedResetMs: 0 });
    await forever.spend();
    expect(forever.events.events.find((event) => event.type === "retries_exhausted")?.fields).not.toHaveProperty("retry_after_ms");
  });

  it("a tool's own exhaustedResetMs overrides the plugin's", async () => {
    const clock = createFakeClock();
    const plugin = RetryReflectPlugin.create({ clock, maxRetries: 0, initialBackoffMs: 0, tools: { slow: { exhaustedResetMs: 1_000 } } });
    const fail = (toolName: string) =>
      plugin.execute({ toolName, args: {}, scope: "s" }, () => {
        throw badInput();
      });
    for (const toolName of ["slow", "other"]) expect((await fail(toolName)).status).toBe("failed");
    await clock.advance(1_000);
    expect(await fail("slow")).toMatchObject({ status: "failed", reason: "exhausted", attempt: 1 }); // ran again, failed, spent again
    const other = await fail("other");
    expect(other.status === "failed" && other.error.code).toBe("RETRIES_EXHAUSTED"); // still refused: 60 s
  });

  it("an invalid value fails early, naming the option and the value", () => {
    for (const value of [-1, Number.NaN, Number.POSITIVE_INFINITY, "60s"]) {
      expect(() => RetryReflectPlugin.create({ exhaustedResetMs: value as number })).toThrow(InvalidOptionError);
    }
    expect(() => RetryReflectPlugin.create({ exhaustedResetMs: -1 })).toThrow(/exhaustedResetMs.*-1/);
    expect(() => RetryReflectPlugin.create({ tools: { t: { exhaustedResetMs: -5 } } })).toThrow(/tools\.t\.exhaustedResetMs/);
  });
});

describe("plugin.exhausted(toolName): where a tool is stopped, while its circuit reads closed", () => {
  it("names each exhausted scope with the time left until its next call runs; other scopes are not listed", async () => {
    const { clock, plugin, spend, heal, call } = setup({ exhaustedResetMs: 60_000 });
    expect(plugin.exhausted("geocode")).toEqual([]);
    await spend();
    await plugin.execute({ toolName: "geocode", args: { city: "y" }, scope: "other" }, () => "ok");
    expect(plugin.circuitState("geocode")).toBe("closed");
    expect(plugin.exhausted("geocode")).toEqual([{ scope: "mcp-client", retryAfterMs: 60_000 }]);
    await clock.advance(45_000);
    expect(plugin.exhausted("geocode")).toEqual([{ scope: "mcp-client", retryAfterMs: 15_000 }]);
    expect(plugin.exhausted("other_tool")).toEqual([]);
    await clock.advance(15_000);
    heal();
    expect((await call()).status).toBe("success");
    expect(plugin.exhausted("geocode")).toEqual([]);
  });

  it("with exhaustedResetMs 0 the stop lasts the scope's life: retryAfterMs is undefined", async () => {
    const { plugin, spend } = setup({ exhaustedResetMs: 0 });
    await spend();
    expect(plugin.exhausted("geocode")).toEqual([{ scope: "mcp-client", retryAfterMs: undefined }]);
    plugin.resetScope("mcp-client");
    expect(plugin.exhausted("geocode")).toEqual([]);
  });
});
