// The user's deadline in the grid: runEpisode aborts the run at it and counts a run still pending
// then as outliving it. The core's defaults end every wait they own at the abort.

import { RetryReflectPlugin, ToolError } from "@retry-reflect/core";
import { seededRandom } from "@retry-reflect/core/testing";
import { describe, expect, it } from "vitest";
import { runEpisode, VirtualClock } from "../src/agents/virtual-time.js";

const unavailable = () => new ToolError({ code: "TRANSIENT", message: "503 Service Unavailable", recoverable: true });

/** One call of the defaults on a fresh virtual clock, run until `deadlineMs` as the grid runs an agent. */
function callUntil(deadlineMs: number, tool: () => unknown) {
  const clock = new VirtualClock();
  const plugin = RetryReflectPlugin.create({ clock });
  return runEpisode(clock, seededRandom(1), deadlineMs, (signal) =>
    plugin.execute({ toolName: "get_weather", args: {}, scope: "run", signal }, tool),
  );
}

describe("the user's deadline", () => {
  it("ends the defaults' call at once in each wait it owns: a hung attempt, an in-place backoff, a wait for recovery", async () => {
    // A tool that ignores its signal, 5 s into its 10 s attempt limit: only the plugin can end the call.
    expect(await callUntil(5_000, () => new Promise(() => {}))).toEqual({ kind: "deadline", unwound: true });
    // A 503 retried in place 0.5, 1, 2, 4 s apart (the patience): 2.5 s in, in the third backoff.
    const backoff = await callUntil(2_500, () => {
      throw unavailable();
    });
    expect(backoff).toEqual({ kind: "deadline", unwound: true });

    // An opener (no retries, no patience) opens the shared circuit (threshold 1); the call then
    // meets it 1 s before its probe (the default open time) and waits for it.
    const recovering = new VirtualClock();
    const shared = RetryReflectPlugin.create({
      clock: recovering,
      circuitBreakerThreshold: 1,
      circuitBreakerKey: () => "weather-service",
      tools: { opener: { maxRetries: 0, patienceMs: 0 } },
    });
    await shared.execute({ toolName: "opener", args: {}, scope: "first" }, () => {
      throw unavailable();
    });
    expect(shared.circuitState("weather-service")).toBe("open");
    const waiting = await runEpisode(recovering, seededRandom(1), 500, (signal) =>
      shared.execute({ toolName: "get_weather", args: {}, scope: "run", signal }, () => "21 °C"),
    );
    expect(waiting).toEqual({ kind: "deadline", unwound: true });
  });

  it("counts a run that ignores the abort as outliving it", async () => {
    const clock = new VirtualClock();
    const end = await runEpisode(clock, seededRandom(1), 1_000, () => clock.sleep(60_000)); // a wait that takes no signal
    expect(end).toEqual({ kind: "deadline", unwound: false });
  });
});
