import { describe, expect, it } from "vitest";
import type { RetryReflectEvent } from "../src/events.js";
import { RetriesExhaustedError, RetryReflectPlugin, ToolError } from "../src/index.js";
import { createFakeClock } from "../src/testing.js";

function recorder() {
  const events: RetryReflectEvent[] = [];
  return { events, observer: { onEvent: (event: RetryReflectEvent) => events.push(event) } };
}

function httpError(status: number, headers: Record<string, string> = {}) {
  return Object.assign(new Error(`HTTP ${status}`), { status, headers });
}

describe("transient failures are retried in place", () => {
  it("retries a flaky read tool with the documented backoff, without returning to the model", async () => {
    const clock = createFakeClock();
    const { events, observer } = recorder();
    const plugin = RetryReflectPlugin.create({ clock, observers: [observer] });
    let calls = 0;
    const outcome = plugin.execute({ toolName: "api_call", args: { q: 1 }, scope: "run" }, (args, context) => {
      calls++;
      expect(args).toEqual({ q: 1 });
      expect(context.attempt).toBe(calls);
      if (calls <= 2) throw httpError(503);
      return "ok";
    });
    await clock.runAll();
    expect(await outcome).toEqual({ status: "success", value: "ok", attempt: 3, replayed: false });
    expect(calls).toBe(3);
    expect(clock.sleeps).toEqual([500, 1000]);
    expect(events.map((event) => [event.type, event.fields])).toEqual([
      [
        "retry",
        { tool_name: "api_call", attempt: 1, max: 3, backoff_ms: 500, error: "HTTP 503", error_code: "TRANSIENT", mode: "in_place" },
      ],
      [
        "retry",
        { tool_name: "api_call", attempt: 2, max: 3, backoff_ms: 1000, error: "HTTP 503", error_code: "TRANSIENT", mode: "in_place" },
      ],
      ["retry_succeeded", { tool_name: "api_call", attempt: 3 }],
    ]);
  });

  it("honours Retry-After up to maxBackoffMs", async () => {
    const clock = createFakeClock();
    const plugin = RetryReflectPlugin.create({ clock, maxBackoffMs: 5000 });
    let calls = 0;
    const outcome = plugin.execute({ toolName: "api_call", args: {} }, () => {
      calls++;
      if (calls === 1) throw httpError(429, { "retry-after": "2" });
      if (calls === 2) throw httpError(429, { "retry-after": "120" });
      return "ok";
    });
    await clock.runAll();
    expect((await outcome).status).toBe("success");
    expect(clock.sleeps).toEqual([2000, 5000]);
  });

  it("retries in place within the patience, then tells the failure as temporary, then stops once the give-up time has passed", async () => {
    const clock = createFakeClock();
    const { events, observer } = recorder();
    const plugin = RetryReflectPlugin.create({ clock, observers: [observer] });
    let calls = 0;
    const refused = () => {
      calls++;
      throw Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:9"), { code: "ECONNREFUSED" });
    };
    const outcome = plugin.execute({ toolName: "api_call", args: {}, scope: "run" }, refused);
    await clock.runAll();
    const result = await outcome;
    // In place while the next attempt starts within patienceMs (15 s) of the call's start: at 0,
    // 0.5, 1.5, 3.5, 7.5 and 11.5 s; the next, 4 s later (maxBackoffMs), would start past it.
    expect(calls).toBe(6);
    expect(clock.sleeps).toEqual([500, 1000, 2000, 4000, 4000]);
    expect(clock.now()).toBe(11_500);
    expect(result.status).toBe("reflect");
    if (result.status !== "reflect") return;
    expect(result.prompt).toBe(
      `The tool 'api_call' is temporarily unavailable: "connect ECONNREFUSED 127.0.0.1:9". It may work again in about 4 s: call it again then with the same arguments (the same idempotency key, if it has one), or tell the user.`,
    );
    expect(result.error.toJSON()).toMatchObject({ error_code: "TRANSIENT", recoverable: true, retry_after_ms: 4_000 });
    expect(events.at(-1)?.fields).toMatchObject({ tool_name: "api_call", attempt: 6, backoff_ms: 4_000, mode: "reflect" });

    // The model calls again (the gate holds it until the wait it was told): the tool keeps failing;
    // once it has failed for giveUpMs (20 s) in this scope, the stop is definitive.
    await clock.advance(1_000);
    const second = plugin.execute({ toolName: "api_call", args: {}, scope: "run" }, refused);
    await clock.runAll();
    const stopped = await second;
    expect(stopped.status).toBe("failed");
    if (stopped.status !== "failed") return;
    expect(clock.now()).toBe(23_500); // attempts at 15.5, 19.5 and 23.5 s: failing for 23.5 s
    expect(calls).toBe(9);
    expect(stopped.reason).toBe("exhausted");
    expect(stopped.message).toMatch(
      /^The tool 'api_call' failed 9 times; the last error was: "connect ECONNREFUSED 127.0.0.1:9". Do not call 'api_call' again for this task. Tell the user what failed./,
    );
    expect(stopped.error.toJSON()).toMatchObject({
      error_code: "RETRIES_EXHAUSTED",
      recoverable: false,
      details: { last_error_code: "TRANSIENT" },
    });
    expect(events.at(-1)?.fields).toEqual({
      tool_name: "api_call",
      attempts: 9,
      error: "connect ECONNREFUSED 127.0.0.1:9",
      retry_after_ms: 60_000, // exhaustedResetMs: the tool runs again in this scope after it
    });

    // The same task calling again is stopped without running the tool.
    const again = await plugin.execute({ toolName: "api_call", args: {}, scope: "run" }, () => {
      calls++;
      return "never";
    });
    expect(again.status === "failed" && again.reason).toBe("exhausted");
    expect(calls).toBe(9);
    // Another task starts afresh.
    expect((await plugin.execute({ toolName: "api_call", args: {}, scope: "other" }, () => "fine")).status).toBe("success");
  });

  it("throws RetriesExhaustedError when onExhausted is 'throw' (the definitive stop only, not a temporary failure)", async () => {
    const clock = createFakeClock();
    // A temporary failure (past the patience, before the give-up time) is returned to the model, not thrown.
    const patient = RetryReflectPlugin.create({ clock, maxRetries: 1, patienceMs: 0, onExhausted: "throw" });
    const temporary = patient.execute({ toolName: "api_call", args: {} }, () => {
      throw httpError(502);
    });
    await clock.runAll();
    expect(await temporary).toMatchObject({ status: "reflect", error: { code: "TRANSIENT", recoverable: true } });

    // The tool has failed for giveUpMs by its second attempt: the stop throws.
    const plugin = RetryReflectPlugin.create({ clock, maxRetries: 1, giveUpMs: 500, onExhausted: "throw" });
    const outcome = plugin.execute({ toolName: "api_call", args: {} }, () => {
      throw httpError(502);
    });
    const assertion = expect(outcome).rejects.toSatisfy(
      (error: unknown) => error instanceof RetriesExhaustedError && error.attempts === 2 && error.error.code === "RETRIES_EXHAUSTED",
    );
    await clock.runAll();
    await assertion;
  });
});

describe("reflection and the shared attempt budget", () => {
  it("maxRetries bounds the model's corrections in the row (transient failures spend none), reset by a success", async () => {
    const clock = createFakeClock();
    // No patience: a transient failure gets its maxRetries in-place retries, then goes to the model.
    const plugin = RetryReflectPlugin.create({ clock, maxRetries: 2, patienceMs: 0 });
    const call = (fail: unknown) => {
      const promise = plugin.execute({ toolName: "t", args: {}, scope: "run" }, () => {
        if (fail) throw fail;
        return "ok";
      });
      void clock.runAll();
      return promise;
    };
    expect((await call(new Error("Invalid date: must be YYYY-MM-DD"))).status).toBe("reflect"); // attempt 1, correction 1
    const transient = await call(httpError(503)); // attempts 2, 3 and 4 (in place): temporary, no correction spent
    expect(transient).toMatchObject({ status: "reflect", attempt: 4, error: { code: "TRANSIENT" } });
    expect((await call(new Error("Invalid date: must be YYYY-MM-DD"))).status).toBe("reflect"); // attempt 5, correction 2
    const spent = await call(new Error("Invalid date: must be YYYY-MM-DD")); // correction 3: more than maxRetries
    expect(spent.status === "failed" && spent.reason).toBe("exhausted");
    expect(spent.attempt).toBe(6);
    expect(clock.now()).toBeLessThan(20_000); // the give-up time has not passed: the corrections stopped it

    const fresh = RetryReflectPlugin.create({ clock, maxRetries: 2 });
    const freshCall = (fail: unknown) => {
      const promise = fresh.execute({ toolName: "t", args: {}, scope: "run" }, () => {
        if (fail) throw fail;
        return "ok";
      });
      void clock.runAll();
      return promise;
    };
    expect((await freshCall(new Error("Invalid x"))).attempt).toBe(1);
    expect((await freshCall(null)).attempt).toBe(2);
    expect((await freshCall(new Error("Invalid x"))).attempt).toBe(1); // the success reset the count
  });

  it("waits out the backoff of a reflection before the next attempt, counting time already spent", async () => {
    const clock = createFakeClock();
    const plugin = RetryReflectPlugin.create({ clock });
    await plugin.execute({ toolName: "t", args: {}, scope: "run" }, () => {
      throw new Error("Invalid units");
    });
    await clock.advance(300); // the model round trip
    let started = false;
    const next = plugin.execute({ toolName: "t", args: {}, scope: "run" }, () => {
      started = true;
      return "ok";
    });
    await clock.advance(199);
    expect(started).toBe(false);
    await clock.advance(1);
    expect((await next).status).toBe("success");
    expect(clock.sleeps).toEqual([200]);
  });

  it("never retries a non-recoverable error, and passes its suggested action to the model as tool_suggested_action", async () => {
    const clock = createFakeClock();
    const { events, observer } = recorder();
    const plugin = RetryReflectPlugin.create({ clock, observers: [observer] });
    let calls = 0;
    const outcome = await plugin.execute({ toolName: "search_api", args: {} }, () => {
      calls++;
      return {
        error_code: "QUOTA_EXCEEDED",
        message: "The API quota for this tool has been reached for today.",
        recoverable: false,
        suggested_action: "Inform the user and stop. Do not retry this tool today.",
      };
    });
    expect(calls).toBe(1);
    expect(clock.sleeps).toEqual([]);
    expect(events).toEqual([]);
    expect(outcome.status).toBe("failed");
    if (outcome.status !== "failed") return;
    expect(outcome.reason).toBe("not_recoverable");
    expect(outcome.message).toContain('"tool_suggested_action":"Inform the user and stop. Do not retry this tool today."');
    expect(outcome.error.toJSON()).toEqual({
      error_code: "QUOTA_EXCEEDED",
      message: "The API quota for this tool has been reached for today.",
      recoverable: false,
      suggested_action: "Do not call 'search_api' again for this task; tell the user what failed.",
      tool_suggested_action: "Inform the user and stop. Do not retry this tool today.",
    });
  });

  it("treats returned ToolErrors, seed-shaped objects and MCP isError results as failures", async () => {
    const plugin = RetryReflectPlugin.create({ clock: createFakeClock() });
    const recordNotFound = await plugin.execute(
      { toolName: "get_user", args: { id: "usr_123" }, scope: "a" },
      () =>
        new ToolError({
          code: "RECORD_NOT_FOUND",
          message: "No user with ID 'usr_123'.",
          recoverable: true,
          suggestedAction: "Use list_users() first.",
        }),
    );
    expect(recordNotFound.status === "reflect" && recordNotFound.error.code).toBe("RECORD_NOT_FOUND");
    expect(recordNotFound.status === "reflect" && recordNotFound.message).toContain('"tool_suggested_action":"Use list_users() first."');
    const mcp = await plugin.execute({ toolName: "mcp_tool", args: {}, scope: "b" }, () => ({
      isError: true,
      content: [{ type: "text", text: "Invalid path: /nope" }],
    }));
    expect(mcp.status === "reflect" && mcp.error.code).toBe("INVALID_ARGUMENTS");
    expect(mcp.status === "reflect" && mcp.prompt).toContain('"Invalid path: /nope"');
  });

  it("lets classifyError override the default, and falls back when it throws", async () => {
    const plugin = RetryReflectPlugin.create({
      clock: createFakeClock(),
      classifyError: (error) => {
        if (error === "boom") throw new Error("classifier bug");
        return new ToolError({ code: "CUSTOM", message: "custom", recoverable: false });
      },
    });
    const custom = await plugin.execute({ toolName: "t", args: {}, scope: "a" }, () => {
      throw new Error("x");
    });
    expect(custom.status === "failed" && custom.error.code).toBe("CUSTOM");
    const fallback = await plugin.execute({ toolName: "t", args: {}, scope: "b" }, () => {
      throw "boom";
    });
    expect(fallback.status === "reflect" && fallback.error.code).toBe("TOOL_FAILED");
  });

  it("renders a custom template with every placeholder, once", async () => {
    const plugin = RetryReflectPlugin.create({
      clock: createFakeClock(),
      reflectionPrompt: "{{{tool_name}}} {error_code} {attempt}/{max_retries} {error} {args} :: {suggested_action}",
    });
    const outcome = await plugin.execute({ toolName: "t", args: { b: 2, a: "{error}" } }, () => {
      throw new Error("Invalid {tool_name}");
    });
    expect(outcome.status === "reflect" && outcome.prompt).toBe(
      `{t} INVALID_ARGUMENTS 1/3 "Invalid {tool_name}" {"a":"{error}","b":2} :: "Correct the arguments named in the error and call the tool again."`,
    );
  });

  it("counts attempts globally with trackingScope 'global'", async () => {
    const plugin = RetryReflectPlugin.create({ clock: createFakeClock(), trackingScope: "global", initialBackoffMs: 0 });
    await plugin.execute({ toolName: "t", args: {}, scope: "a" }, () => {
      throw new Error("Invalid x");
    });
    const second = await plugin.execute({ toolName: "t", args: {}, scope: "b" }, () => "ok");
    expect(second.attempt).toBe(2);
  });
});

describe("tool scoping", () => {
  it("calls excluded tools plainly: their errors pass through untouched", async () => {
    const plugin = RetryReflectPlugin.create({
      clock: createFakeClock(),
      excludeTools: ["exit_loop"],
      includeTools: ["exit_loop", "api_call"],
    });
    const signal = new Error("exit requested");
    await expect(
      plugin.execute({ toolName: "exit_loop", args: {} }, () => {
        throw signal;
      }),
    ).rejects.toBe(signal);
    expect(await plugin.execute({ toolName: "exit_loop", args: {} }, () => 1)).toEqual({
      status: "success",
      value: 1,
      attempt: 1,
      replayed: false,
    });
    // Not in a non-empty includeTools: untouched too.
    const other = new Error("Invalid");
    await expect(
      plugin.execute({ toolName: "db_query", args: {} }, () => {
        throw other;
      }),
    ).rejects.toBe(other);
    // In scope: handled.
    expect(
      (
        await plugin.execute({ toolName: "api_call", args: {} }, () => {
          throw new Error("Invalid");
        })
      ).status,
    ).toBe("reflect");
  });

  it("an empty includeTools means all tools", async () => {
    const plugin = RetryReflectPlugin.create({ clock: createFakeClock() });
    expect(plugin.isInScope("anything")).toBe(true);
  });
});
