import { describe, expect, it } from "vitest";
import type { RetryReflectObserver } from "../src/events.js";
import { RetryReflectPlugin } from "../src/index.js";
import { createFakeClock } from "../src/testing.js";

function timers(): number {
  return process.getActiveResourcesInfo().filter((resource) => resource === "Timeout").length;
}

describe("tools that fail badly never crash the caller", () => {
  const circular: Record<string, unknown> = { reason: "loop" };
  circular.self = circular;
  const cases: Array<[string, unknown, RegExp]> = [
    ["a string", "plain string failure", /"plain string failure"/],
    ["undefined", undefined, /without an error message \(undefined\)/],
    ["null", null, /without an error message \(null\)/],
    ["a circular object", circular, /\[Circular\]/],
    ["a number", 42, /"42"/],
    ["an Error with an empty message", new Error(""), /"Error"/],
  ];
  for (const [label, thrown, expected] of cases) {
    it(`turns ${label} into a reflection`, async () => {
      const plugin = RetryReflectPlugin.create({ clock: createFakeClock() });
      const outcome = await plugin.execute({ toolName: "t", args: {} }, () => {
        throw thrown;
      });
      expect(outcome.status).toBe("reflect");
      expect(outcome.status === "reflect" && outcome.prompt).toMatch(expected);
    });
  }

  it("caps a 10 MB error message and strips its stack and secrets", async () => {
    const plugin = RetryReflectPlugin.create({ clock: createFakeClock() });
    const huge = new Error(`Authorization: Bearer abcdef0123456789 failed ${"x".repeat(10 * 1024 * 1024)}`);
    const outcome = await plugin.execute({ toolName: "t", args: {} }, () => {
      throw huge;
    });
    expect(outcome.status).toBe("reflect");
    if (outcome.status !== "reflect") return;
    expect(outcome.error.message.length).toBeLessThanOrEqual(1000);
    expect(outcome.error.message).toMatch(/… \[truncated\]$/);
    expect(outcome.message.length).toBeLessThan(3000);
    expect(outcome.message).not.toContain("abcdef0123456789");
  });

  it("strips stack traces that a tool puts in its message", async () => {
    const plugin = RetryReflectPlugin.create({ clock: createFakeClock() });
    const outcome = await plugin.execute({ toolName: "t", args: {} }, () => {
      throw "TypeError: cannot read x\n    at handler (/srv/app/tool.js:10:5)\n    at process (node:internal/x:1:1)";
    });
    expect(outcome.status === "reflect" && outcome.error.message).toBe("TypeError: cannot read x");
  });
});

describe("observers", () => {
  it("an observer that throws in every hook never breaks a tool call", async () => {
    const clock = createFakeClock();
    const seen: string[] = [];
    const angry: RetryReflectObserver = {
      onEvent: () => {
        throw new Error("observer bug");
      },
      onCallStart: () => {
        throw new Error("observer bug");
      },
      runInContext: () => {
        throw new Error("observer bug before run");
      },
      onCallEnd: () => {
        throw new Error("observer bug");
      },
    };
    const plugin = RetryReflectPlugin.create({ clock, observers: [angry, { onEvent: (event) => seen.push(event.type) }] });
    let calls = 0;
    const outcome = plugin.execute({ toolName: "t", args: {} }, () => {
      calls++;
      if (calls === 1) throw Object.assign(new Error("reset"), { code: "ECONNRESET" });
      return "ok";
    });
    await clock.runAll();
    expect(await outcome).toMatchObject({ status: "success", value: "ok", attempt: 2 });
    expect(calls).toBe(2);
    expect(seen).toEqual(["retry", "retry_succeeded"]);
  });

  it("reports call start and end around the attempts, and runs the tool inside runInContext", async () => {
    const clock = createFakeClock();
    const log: string[] = [];
    const plugin = RetryReflectPlugin.create({
      clock,
      observers: [
        {
          onCallStart: (call) => log.push(`start ${call.toolName} ${call.callId}`),
          runInContext: (_call, run) => {
            log.push("enter");
            const result = run();
            log.push("leave");
            return result;
          },
          onCallEnd: (_call, end) =>
            log.push(`end ${end.status} attempts=${end.attempts} attempt=${end.attempt} state=${end.circuitState}`),
        },
      ],
    });
    const outcome = plugin.execute({ toolName: "t", args: {}, callId: "c1" }, () => {
      log.push("tool");
      if (log.filter((line) => line === "tool").length === 1) throw Object.assign(new Error("x"), { status: 503 });
      return 1;
    });
    await clock.runAll();
    await outcome;
    expect(log).toEqual([
      "start t c1",
      "enter",
      "tool",
      "leave",
      "enter",
      "tool",
      "leave",
      "end success attempts=2 attempt=2 state=closed",
    ]);
  });
});

describe("aborts", () => {
  it("an abort during backoff returns promptly and starts no further attempt", async () => {
    const clock = createFakeClock();
    const plugin = RetryReflectPlugin.create({ clock });
    const controller = new AbortController();
    let calls = 0;
    const outcome = plugin.execute({ toolName: "t", args: {}, signal: controller.signal }, () => {
      calls++;
      throw Object.assign(new Error("down"), { status: 503 });
    });
    await clock.advance(100);
    const reason = new Error("user cancelled");
    controller.abort(reason);
    await expect(outcome).rejects.toBe(reason);
    await clock.runAll();
    expect(calls).toBe(1);
    expect(clock.pendingSleeps()).toBe(0);
  });

  it("an already aborted signal starts nothing", async () => {
    const plugin = RetryReflectPlugin.create({ clock: createFakeClock() });
    let calls = 0;
    const controller = new AbortController();
    controller.abort();
    await expect(plugin.execute({ toolName: "t", args: {}, signal: controller.signal }, () => calls++)).rejects.toMatchObject({
      name: "AbortError",
    });
    expect(calls).toBe(0);
  });

  it("a tool that throws because the caller aborted is rethrown, not reflected", async () => {
    const plugin = RetryReflectPlugin.create({ clock: createFakeClock() });
    const controller = new AbortController();
    const abortError = Object.assign(new Error("aborted"), { name: "AbortError" });
    const outcome = plugin.execute({ toolName: "t", args: {}, signal: controller.signal }, () => {
      controller.abort(abortError);
      throw abortError;
    });
    await expect(outcome).rejects.toBe(abortError);
  });

  it("leaves no timer behind with the real clock: after a success, a reflection, and an abort mid-backoff", async () => {
    const before = timers();
    const plugin = RetryReflectPlugin.create({ initialBackoffMs: 60_000, maxBackoffMs: 60_000 });
    await plugin.execute({ toolName: "ok", args: {} }, () => "fine");
    expect(timers()).toBe(before);
    await plugin.execute({ toolName: "bad", args: {} }, () => {
      throw new Error("Invalid x");
    });
    expect(timers()).toBe(before);
    const controller = new AbortController();
    const pending = plugin.execute({ toolName: "flaky", args: {}, signal: controller.signal }, () => {
      throw Object.assign(new Error("down"), { status: 503 });
    });
    await new Promise((resolve) => setImmediate(resolve));
    expect(timers()).toBe(before + 1); // the 60 s backoff
    controller.abort();
    await expect(pending).rejects.toMatchObject({ name: "AbortError" });
    expect(timers()).toBe(before);
  });
});

describe("programmer errors are thrown", () => {
  it("rejects a malformed call", async () => {
    const plugin = RetryReflectPlugin.create();
    await expect(plugin.execute({ toolName: "", args: {} }, () => 1)).rejects.toThrow(/toolName/);
    await expect(plugin.execute(null as never, () => 1)).rejects.toThrow(/call object/);
    await expect(plugin.execute({ toolName: "t", args: {} }, "nope" as never)).rejects.toThrow(/tool function/);
    await expect(plugin.execute({ toolName: "t", args: {}, signal: {} as never }, () => 1)).rejects.toThrow(/AbortSignal/);
    await expect(plugin.execute({ toolName: "t", args: {}, description: 42 as never }, () => 1)).rejects.toThrow(/`description`/);
    await expect(plugin.execute({ toolName: "t", args: {}, toolType: {} as never }, () => 1)).rejects.toThrow(/`toolType`/);
  });
});

describe("declared errors with hostile fields", () => {
  it("serialises BigInt and circular details, and cleans a declared suggested action", async () => {
    const details: Record<string, unknown> = { amount: 10n };
    details.self = details;
    const plugin = RetryReflectPlugin.create({ clock: createFakeClock() });
    const outcome = await plugin.execute({ toolName: "t", args: {} }, () => ({
      error_code: "PAYMENT_DECLINED",
      message: "declined",
      recoverable: true,
      suggested_action: `Retry with https://pay.example.com/?key=supersecret ${"y".repeat(5000)}`,
      details,
    }));
    expect(outcome.status).toBe("reflect");
    if (outcome.status !== "reflect") return;
    const json = JSON.parse(outcome.message.slice(outcome.prompt.length + 2)) as Record<string, unknown>;
    expect(json.details).toEqual({ amount: "10", self: "[unserializable]" });
    expect(outcome.message).not.toContain("supersecret");
    expect(String(json.suggested_action).length).toBeLessThanOrEqual(1000);
  });
});
