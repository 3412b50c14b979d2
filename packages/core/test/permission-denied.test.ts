import { describe, expect, it } from "vitest";
import { type CircuitState, RetryReflectPlugin } from "../src/index.js";
import { createFakeClock } from "../src/testing.js";

// A permission refused for what the arguments name ("Access denied - path outside allowed
// directories", as server-filesystem answers) is reflected: a corrected path works. Credentials
// stay a stop. One denial never counts for the breaker (a model probing paths must not open the
// circuit for every user); denials in a row do, as any repeated failure of the tool would.

const outside = () => {
  throw new Error("Access denied - path outside allowed directories: /etc/passwd not in /tmp/work");
};

describe("PERMISSION_DENIED", () => {
  it("is reflected with the reflection prompt, and the corrected call runs", async () => {
    const clock = createFakeClock();
    const plugin = RetryReflectPlugin.create({ clock });
    const denied = await plugin.execute({ toolName: "read_file", args: { path: "/etc/passwd" }, scope: "s" }, outside);
    expect(denied.status).toBe("reflect");
    if (denied.status !== "reflect") throw new Error("unreachable");
    expect(denied.error).toMatchObject({ code: "PERMISSION_DENIED", recoverable: true });
    expect(denied.prompt).toContain("provide corrected arguments");
    expect(denied.message).not.toContain("not authorised");
    await clock.advance(1_000);
    const corrected = await plugin.execute({ toolName: "read_file", args: { path: "/tmp/work/a.txt" }, scope: "s" }, () => "hello");
    expect(corrected).toMatchObject({ status: "success", value: "hello" });
  });

  it("is never retried in place: the tool runs once per call", async () => {
    const plugin = RetryReflectPlugin.create({ clock: createFakeClock() });
    let runs = 0;
    await plugin.execute({ toolName: "read_file", args: { path: "/etc" } }, () => {
      runs++;
      outside();
    });
    expect(runs).toBe(1);
  });

  it("a credential error is still a stop", async () => {
    const plugin = RetryReflectPlugin.create({ clock: createFakeClock() });
    const outcome = await plugin.execute({ toolName: "search", args: {} }, () => {
      throw Object.assign(new Error("Invalid API key"), { status: 401 });
    });
    expect(outcome).toMatchObject({ status: "failed", reason: "not_recoverable", error: { code: "UNAUTHORIZED" } });
  });

  it("one denial per row never opens the circuit; denials in a row count for it", async () => {
    const clock = createFakeClock();
    const plugin = RetryReflectPlugin.create({ clock, circuitBreakerThreshold: 2, maxRetries: 5 });
    const state = (): CircuitState => plugin.circuitState("read_file");
    // Many conversations, each with one refused path then a corrected read: the circuit stays closed.
    for (let conversation = 0; conversation < 10; conversation++) {
      const scope = `c${conversation}`;
      await plugin.execute({ toolName: "read_file", args: { path: "/etc/passwd" }, scope }, outside);
      await clock.advance(1_000);
      await plugin.execute({ toolName: "read_file", args: { path: "/tmp/work/a" }, scope }, () => "ok");
    }
    expect(state()).toBe("closed");
    // A tool refused whatever the path (a server misconfigured): the second denial in the row
    // counts, the third too, and the circuit opens at the threshold (the model's calls a few
    // seconds apart, within the give-up time: past it the row would end with the definitive stop).
    for (let attempt = 0; attempt < 3; attempt++) {
      await plugin.execute({ toolName: "read_file", args: { path: `/tmp/work/${attempt}` }, scope: "broken" }, outside);
      await clock.advance(2_000);
    }
    expect(state()).not.toBe("closed");
  });
});
