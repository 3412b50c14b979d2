import { describe, expect, it } from "vitest";
import type { RetryReflectEvent } from "../src/events.js";
import { type ExecuteOutcome, RetryReflectPlugin } from "../src/index.js";
import { createFakeClock } from "../src/testing.js";

// `maxConcurrent`: calls of one tool running at once. Beyond it a call fails fast with OVERLOADED
// (a reflect outcome with retry_after_ms; an attempt, never a breaker failure). A slot is held only
// while an attempt runs, and is freed at attemptTimeoutMs even if the tool ignores its signal.

function deferred<T>(): { promise: Promise<T>; resolve: (value: T) => void; reject: (error: unknown) => void } {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

const codeOf = (outcome: ExecuteOutcome<unknown>) => (outcome.status === "success" ? "success" : outcome.error.code);

describe("maxConcurrent", () => {
  it("runs at most the limit at once: the calls beyond it are refused with OVERLOADED without running", async () => {
    const clock = createFakeClock();
    const events: RetryReflectEvent[] = [];
    const plugin = RetryReflectPlugin.create({ clock, maxConcurrent: 2, observers: [{ onEvent: (event) => events.push(event) }] });
    const held = deferred<string>();
    let running = 0;
    let most = 0;
    let runs = 0;
    const calls = Array.from({ length: 5 }, (_, index) =>
      plugin.execute({ toolName: "search", args: { q: index }, scope: `run-${index}` }, async () => {
        runs++;
        running++;
        most = Math.max(most, running);
        const value = await held.promise;
        running--;
        return value;
      }),
    );
    await clock.advance(0);
    expect(runs).toBe(2);
    held.resolve("hits");
    const outcomes = await Promise.all(calls);
    expect(most).toBe(2);
    expect(outcomes.map(codeOf)).toEqual(["success", "success", "OVERLOADED", "OVERLOADED", "OVERLOADED"]);
    const refused = outcomes[2];
    if (refused?.status !== "reflect") throw new Error("expected a reflect outcome");
    expect(refused.error.recoverable).toBe(true);
    expect(refused.error.retryAfterMs).toBeGreaterThan(0);
    expect(refused.message).toContain("OVERLOADED");
    expect(events.filter((event) => event.type === "call_refused").map((event) => event.fields)).toEqual([
      { tool_name: "search", reason: "overloaded" },
      { tool_name: "search", reason: "overloaded" },
      { tool_name: "search", reason: "overloaded" },
    ]);
    // Refusals are not the tool's failures: the circuit stays closed however many there are.
    expect(plugin.circuitState("search")).toBe("closed");
  });

  it("frees the slot when an attempt succeeds, fails, times out (even if the tool ignores its signal) or is aborted", async () => {
    const clock = createFakeClock();
    // No in-place retry (maxRetries 0, no patience): a timed-out attempt ends its call at once, told as temporary.
    const plugin = RetryReflectPlugin.create({ clock, maxConcurrent: 1, attemptTimeoutMs: 1_000, maxRetries: 0, patienceMs: 0 });
    // The probe reports the failure under it (a refusal of the slot: OVERLOADED).
    let probes = 0;
    const probe = async () => {
      const outcome = await plugin.execute({ toolName: "t", args: { probe: true }, scope: `probe-${probes++}` }, () => "free");
      return outcome.status === "success" ? "success" : (outcome.error.details?.last_error_code ?? outcome.error.code);
    };

    // success
    const ok = deferred<string>();
    const first = plugin.execute({ toolName: "t", args: {}, scope: "a" }, () => ok.promise);
    await clock.advance(0);
    expect(await probe()).toBe("OVERLOADED");
    ok.resolve("done");
    await first;
    expect(await probe()).toBe("success");

    // failure
    const bad = deferred<string>();
    const failing = plugin.execute({ toolName: "t", args: {}, scope: "b" }, () => bad.promise);
    await clock.advance(0);
    bad.reject(new Error("Invalid units. Supported: celsius"));
    await failing;
    expect(await probe()).toBe("success");

    // timeout, the tool never answering
    const hung = plugin.execute({ toolName: "t", args: {}, scope: "c" }, () => new Promise(() => {}));
    await clock.advance(999);
    expect(await probe()).toBe("OVERLOADED");
    await clock.advance(1);
    expect(codeOf(await hung)).toBe("TIMEOUT");
    expect(await probe()).toBe("success");

    // abort
    const controller = new AbortController();
    const aborted = plugin.execute({ toolName: "t", args: {}, scope: "d", signal: controller.signal }, () => new Promise(() => {}));
    await clock.advance(0);
    controller.abort(new Error("cancelled"));
    await expect(aborted).rejects.toThrow("cancelled");
    expect(await probe()).toBe("success");
  });

  it("holds no slot during the backoff: a retry waiting in place lets another call run", async () => {
    const clock = createFakeClock();
    const plugin = RetryReflectPlugin.create({ clock, maxConcurrent: 1, initialBackoffMs: 1_000 });
    let flakyRuns = 0;
    const flaky = plugin.execute({ toolName: "t", args: { n: 1 }, scope: "a" }, () => {
      flakyRuns++;
      if (flakyRuns === 1) throw Object.assign(new Error("HTTP 503 Service Unavailable"), { status: 503 });
      return "second try";
    });
    await clock.advance(10); // the first attempt failed; the retry waits 1 000 ms
    const other = await plugin.execute({ toolName: "t", args: { n: 2 }, scope: "b" }, () => "ran while the other waited");
    expect(other).toMatchObject({ status: "success" });
    await clock.advance(1_000);
    await expect(flaky).resolves.toMatchObject({ status: "success", value: "second try", attempt: 2 });
  });

  it("counts per tool, and per tool policy", async () => {
    const clock = createFakeClock();
    const plugin = RetryReflectPlugin.create({ clock, tools: { report: { maxConcurrent: 1 } } });
    const held = deferred<string>();
    const report = plugin.execute({ toolName: "report", args: {}, scope: "a" }, () => held.promise);
    await clock.advance(0);
    const secondReport = await plugin.execute({ toolName: "report", args: {}, scope: "b" }, () => "x");
    expect(codeOf(secondReport)).toBe("OVERLOADED");
    // Another tool has no limit.
    const searches = await Promise.all(
      Array.from({ length: 10 }, (_, index) => plugin.execute({ toolName: "search", args: { index } }, () => "hit")),
    );
    expect(searches.every((outcome) => outcome.status === "success")).toBe(true);
    held.resolve("r");
    await report;
  });

  it("an OVERLOADED refusal spends no attempt: the model told to call again later is refused as often as the slot is taken, then the call runs as attempt 1", async () => {
    const clock = createFakeClock();
    const plugin = RetryReflectPlugin.create({ clock, maxConcurrent: 1, maxRetries: 1 });
    const held = deferred<string>();
    const busy = plugin.execute({ toolName: "t", args: {}, scope: "other" }, () => held.promise);
    await clock.advance(0);
    let runs = 0;
    for (let call = 0; call < 4; call++) {
      const pending = plugin.execute({ toolName: "t", args: {}, scope: "s" }, () => ++runs);
      await clock.runAll();
      expect(await pending).toMatchObject({ status: "reflect", attempt: 1, error: { code: "OVERLOADED" } });
    }
    held.resolve("done");
    await busy;
    expect(await plugin.execute({ toolName: "t", args: {}, scope: "s" }, () => ++runs)).toMatchObject({ status: "success", attempt: 1 });
    expect(runs).toBe(1);
  });

  it("rejects invalid values naming the option", () => {
    for (const value of [0, 1.5, -1, "2"]) {
      expect(() => RetryReflectPlugin.create({ maxConcurrent: value as number })).toThrow(/maxConcurrent/);
    }
    expect(() => RetryReflectPlugin.builder().tool("search", { maxConcurrent: 0 }).build()).toThrow(/tools\.search\.maxConcurrent/);
  });
});
