import { describe, expect, it } from "vitest";
import type { FailureContext, ToolCall } from "../src/config/options.js";
import type { RetryReflectEvent, RetryReflectObserver } from "../src/events.js";
import {
  type ExecuteOutcome,
  type FailedOutcome,
  InvalidOptionError,
  type ReflectOutcome,
  RetriesExhaustedError,
  type RetryReflectOptions,
  RetryReflectPlugin,
  ToolError,
} from "../src/index.js";
import { createFakeClock, type FakeClock } from "../src/testing.js";

// Per-tool policies and the resilience options of DESIGN.md ("Per-tool policies and the
// resilience options users expect"): tools/.tool(), shouldRetry, isFailure, fallback, the stop
// templates and onExhausted. Everything on the fake clock: time moves only when a test moves it.

/** The InvalidOptionError that `run` throws (fails the test when it throws nothing or something else). */
function invalidOption(run: () => unknown): InvalidOptionError {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(InvalidOptionError);
    return error as InvalidOptionError;
  }
  throw new Error("expected an InvalidOptionError, nothing was thrown");
}

const unavailable = () => Object.assign(new Error("HTTP 503 Service Unavailable"), { status: 503 });
const unauthorized = () => Object.assign(new Error("HTTP 401 Unauthorized"), { status: 401 });
const rateLimited = (retryAfter: string) => Object.assign(new Error("HTTP 429"), { status: 429, headers: { "retry-after": retryAfter } });
const badUnits = () => new Error("Invalid units. Supported: celsius, fahrenheit");

/** Runs the fake clock until nothing sleeps, then the outcome. */
async function settle<T>(clock: FakeClock, pending: Promise<T>): Promise<T> {
  await clock.runAll();
  return pending;
}

function failed(outcome: ExecuteOutcome<unknown>): FailedOutcome {
  expect(outcome.status).toBe("failed");
  return outcome as FailedOutcome;
}

function reflected(outcome: ExecuteOutcome<unknown>): ReflectOutcome {
  expect(outcome.status).toBe("reflect");
  return outcome as ReflectOutcome;
}

/** A `failed`/`reflect` message: the text before the structured error, and the error as JSON. */
function parts(message: string): { text: string; json: Record<string, unknown> } {
  const cut = message.lastIndexOf("\n\n");
  return { text: message.slice(0, cut), json: JSON.parse(message.slice(cut + 2)) as Record<string, unknown> };
}

/**
 * The three kinds of observation (none, an observer of events, an observer with call hooks):
 * every option must act the same under each.
 */
const PATHS: readonly [string, (events: RetryReflectEvent[]) => RetryReflectObserver[]][] = [
  ["no observer", () => []],
  ["an observer of events", (events) => [{ onEvent: (event) => void events.push(event) }]],
  ["an observer with call hooks", (events) => [{ onEvent: (event) => void events.push(event), onCallEnd: () => {} }]],
];

describe("per-tool policies: tools and .tool(name, policy)", () => {
  it("a tool's maxRetries and initialBackoffMs override the plugin's; other tools keep the plugin's", async () => {
    const clock = createFakeClock();
    // No patience: a transient failure gets exactly maxRetries in-place retries, then is told as temporary.
    const plugin = RetryReflectPlugin.create({
      clock,
      maxRetries: 3,
      initialBackoffMs: 500,
      patienceMs: 0,
      tools: { pay: { maxRetries: 1, initialBackoffMs: 100 } },
    });
    let payCalls = 0;
    const pay = reflected(
      await settle(
        clock,
        plugin.execute({ toolName: "pay", args: {} }, () => {
          payCalls++;
          return Promise.reject(unavailable());
        }),
      ),
    );
    expect(payCalls).toBe(2);
    expect(clock.sleeps).toEqual([100]);
    // The wait told is the tool's next backoff (100 ms × 2).
    expect(parts(pay.message).json).toMatchObject({ error_code: "TRANSIENT", attempt: 2, max_retries: 1, retry_after_ms: 200 });

    let searchCalls = 0;
    const search = reflected(
      await settle(
        clock,
        plugin.execute({ toolName: "search", args: {} }, () => {
          searchCalls++;
          return Promise.reject(unavailable());
        }),
      ),
    );
    expect(parts(search.message).json).toMatchObject({ error_code: "TRANSIENT", attempt: 4, max_retries: 3 });
    expect(searchCalls).toBe(4);
    expect(clock.sleeps).toEqual([100, 500, 1000, 2000]);
  });

  it("a tool's reflectionPrompt is used for that tool only", async () => {
    const clock = createFakeClock();
    const plugin = RetryReflectPlugin.create({
      clock,
      reflectionPrompt: "PLUGIN {tool_name}: {error}",
      tools: { get_weather: { reflectionPrompt: "WEATHER {tool_name} ({error_code}, {attempt}/{max_retries}): {error}" } },
    });
    const weather = reflected(
      await settle(
        clock,
        plugin.execute({ toolName: "get_weather", args: {} }, () => Promise.reject(badUnits())),
      ),
    );
    expect(weather.prompt).toBe('WEATHER get_weather (INVALID_ARGUMENTS, 1/3): "Invalid units. Supported: celsius, fahrenheit"');
    const other = reflected(
      await settle(
        clock,
        plugin.execute({ toolName: "get_time", args: {} }, () => Promise.reject(badUnits())),
      ),
    );
    expect(other.prompt).toBe('PLUGIN get_time: "Invalid units. Supported: celsius, fahrenheit"');
  });

  it("a tool's effect makes it a write (guarded, a key required); other tools keep defaultEffect", async () => {
    const plugin = RetryReflectPlugin.create({ tools: { send_email: { effect: "write" } } });
    expect(plugin.effectOf("send_email")).toBe("write");
    expect(plugin.effectOf("search")).toBe("read");
    let ran = 0;
    const outcome = reflected(await plugin.execute({ toolName: "send_email", args: { to: "a@b.c" } }, () => ran++));
    expect(outcome.error.code).toBe("IDEMPOTENCY_KEY_REQUIRED");
    expect(ran).toBe(0);
    expect(await plugin.execute({ toolName: "search", args: {} }, () => ran++)).toMatchObject({ status: "success" });
    expect(ran).toBe(1);
  });

  it("a tool's idempotency settings (keyField) apply to that tool's writes only", async () => {
    const plugin = RetryReflectPlugin.create({
      toolEffects: { refund: "write" },
      tools: { pay: { effect: "write", idempotency: { keyField: "op_id" } } },
    });
    const keys: (string | undefined)[] = [];
    const pay = await plugin.execute({ toolName: "pay", args: { op_id: "op-1" } }, (_args, context) => {
      keys.push(context.idempotencyKey);
      return "paid";
    });
    expect(pay).toMatchObject({ status: "success", value: "paid" });
    expect(keys).toEqual(["op-1"]);
    const refund = reflected(await plugin.execute({ toolName: "refund", args: { op_id: "op-2" } }, () => "refunded"));
    expect(refund.error.code).toBe("IDEMPOTENCY_KEY_REQUIRED");
    expect(refund.error.suggestedAction).toContain("`idempotency_key`");
  });

  it("the builder's .tool(name, policy) sets one tool's policy; a second .tool for the same name replaces it, others stay", async () => {
    const clock = createFakeClock();
    const plugin = RetryReflectPlugin.builder()
      .clock(clock)
      .maxRetries(3)
      .patienceMs(0) // exactly maxRetries in-place retries
      .tool("pay", { maxRetries: 5 })
      .tool("refund", { maxRetries: 2 })
      .tool("pay", { maxRetries: 0 })
      .build();
    const count = async (toolName: string) => {
      let calls = 0;
      await settle(
        clock,
        plugin.execute({ toolName, args: {} }, () => {
          calls++;
          return Promise.reject(unavailable());
        }),
      );
      return calls;
    };
    expect(await count("pay")).toBe(1);
    expect(await count("refund")).toBe(3);
    expect(await count("search")).toBe(4);
  });

  it("a per-tool value that is invalid names tools.<name>.<option> and the value", () => {
    const bad = invalidOption(() => RetryReflectPlugin.create({ tools: { pay: { maxRetries: -1 } } }));
    expect(bad.option).toBe("tools.pay.maxRetries");
    expect(bad.value).toBe(-1);
    expect(bad.message).toBe("Invalid option `tools.pay.maxRetries`: expected an integer >= 0, received -1");

    const notNumber = invalidOption(() => RetryReflectPlugin.create({ tools: { pay: { initialBackoffMs: "fast" as never } } }));
    expect(notNumber.option).toBe("tools.pay.initialBackoffMs");
    expect(notNumber.message).toContain('received "fast"');

    const hook = invalidOption(() => RetryReflectPlugin.create({ tools: { pay: { shouldRetry: true as never } } }));
    expect(hook.option).toBe("tools.pay.shouldRetry");
    expect(hook.message).toContain("a function");

    // The same checks through the builder.
    const built = invalidOption(() => RetryReflectPlugin.builder().tool("pay", { attemptTimeoutMs: -5 }).build());
    expect(built.option).toBe("tools.pay.attemptTimeoutMs");
    expect(built.message).toContain("received -5");
  });

  it("an unknown option inside a tool policy names it; the store is the plugin's, never a tool's", () => {
    const unknown = invalidOption(() => RetryReflectPlugin.create({ tools: { pay: { maxRetry: 1 } as never } }));
    expect(unknown.option).toBe("tools.pay.maxRetry");
    expect(unknown.message).toContain("unknown option");
    // Plugin-wide options are not per-tool options.
    expect(invalidOption(() => RetryReflectPlugin.create({ tools: { pay: { onExhausted: "throw" } as never } })).option).toBe(
      "tools.pay.onExhausted",
    );
    const store = invalidOption(() => RetryReflectPlugin.create({ tools: { pay: { idempotency: { store: {} } as never } } }));
    expect(store.option).toBe("tools.pay.idempotency.store");
    expect(store.message).toContain("unknown option");
    const field = invalidOption(() => RetryReflectPlugin.create({ tools: { pay: { idempotency: { keyField: "" } } } }));
    expect(field.option).toBe("tools.pay.idempotency.keyField");
    expect(invalidOption(() => RetryReflectPlugin.create({ tools: { pay: null as never } })).option).toBe("tools.pay");
  });

  it("tools[name].effect and toolEffects[name] are one setting: two different values fail at build, the same value is fine", () => {
    const clash = invalidOption(() => RetryReflectPlugin.create({ toolEffects: { pay: "write" }, tools: { pay: { effect: "read" } } }));
    expect(clash.option).toBe("tools.pay.effect");
    expect(clash.value).toBe("read");
    expect(clash.message).toContain('toolEffects.pay gives ("write")');
    const built = invalidOption(() =>
      RetryReflectPlugin.builder().toolEffects({ pay: "idempotent" }).tool("pay", { effect: "write" }).build(),
    );
    expect(built.option).toBe("tools.pay.effect");

    const same = RetryReflectPlugin.create({ toolEffects: { pay: "write" }, tools: { pay: { effect: "write" } } });
    expect(same.effectOf("pay")).toBe("write");
    expect(invalidOption(() => RetryReflectPlugin.create({ tools: { pay: { effect: "delete" as never } } })).option).toBe(
      "tools.pay.effect",
    );
  });
});

describe("a tool's own idempotency.keyField", () => {
  it("is what observers do not see of a write's arguments (not the plugin's key field)", async () => {
    const seen: unknown[] = [];
    const plugin = RetryReflectPlugin.create({
      clock: createFakeClock(),
      tools: { pay: { effect: "write", idempotency: { keyField: "ref" } } },
      observers: [{ onCallStart: (call) => seen.push(call.args) }],
    });
    const outcome = await plugin.execute({ toolName: "pay", args: { amount: 5, ref: "pay-7f3a", idempotency_key: "other" } }, () => "paid");
    expect(outcome.status).toBe("success");
    expect(seen).toEqual([{ amount: 5, idempotency_key: "other" }]);
  });
});

describe("shouldRetry(error, context)", () => {
  it("false: a transient failure ends failed / not_recoverable at once, the tool not run again, and the model is not told to call again", async () => {
    const clock = createFakeClock();
    const plugin = RetryReflectPlugin.create({ clock, shouldRetry: () => false });
    let calls = 0;
    const outcome = failed(
      await settle(
        clock,
        plugin.execute({ toolName: "api", args: {} }, () => {
          calls++;
          return Promise.reject(unavailable());
        }),
      ),
    );
    expect(outcome.reason).toBe("not_recoverable");
    expect(calls).toBe(1);
    expect(clock.sleeps).toEqual([]);
    expect(outcome.error.code).toBe("TRANSIENT");
    expect(outcome.error.recoverable).toBe(false);
    // The stop text and the structured error agree: no "call the tool again" for a failure that may not be retried.
    expect(outcome.message).toContain("This error is not recoverable, do not retry it.");
    expect(outcome.message).not.toMatch(/call the tool again/i);
    expect(parts(outcome.message).json).toMatchObject({ error_code: "TRANSIENT", recoverable: false });
  });

  it("true: a non-recoverable failure (UNAUTHORIZED, a non-recoverable ToolError) becomes a reflection within maxRetries", async () => {
    const clock = createFakeClock();
    const plugin = RetryReflectPlugin.create({ clock, maxRetries: 2, shouldRetry: () => true });
    const auth = reflected(
      await settle(
        clock,
        plugin.execute({ toolName: "crm", args: {}, scope: "s" }, () => Promise.reject(unauthorized())),
      ),
    );
    expect(auth.error.code).toBe("UNAUTHORIZED");
    expect(auth.error.recoverable).toBe(true);
    // The model is asked to try again: the text written for a stop ("Do not call it again") is not shown with it.
    expect(auth.message).not.toMatch(/do not call it again/i);
    expect(parts(auth.message).json).toMatchObject({ error_code: "UNAUTHORIZED", recoverable: true });

    const locked = new ToolError({ code: "ACCOUNT_LOCKED", message: "the account is locked", recoverable: false });
    const second = reflected(
      await settle(
        clock,
        plugin.execute({ toolName: "crm", args: {}, scope: "s" }, () => Promise.reject(locked)),
      ),
    );
    expect(second.error.code).toBe("ACCOUNT_LOCKED");
    expect(second.attempt).toBe(2);
    // Within maxRetries: the third failure spends the budget.
    let ran = 0;
    const third = failed(
      await settle(
        clock,
        plugin.execute({ toolName: "crm", args: {}, scope: "s" }, () => {
          ran++;
          return Promise.reject(locked);
        }),
      ),
    );
    expect(third.reason).toBe("exhausted");
    expect(ran).toBe(1); // a reflection is never retried in place
  });

  it("true: a transient failure the error marks non-recoverable is retried in place", async () => {
    const clock = createFakeClock();
    const plugin = RetryReflectPlugin.create({ clock, shouldRetry: () => true });
    let calls = 0;
    const outcome = await settle(
      clock,
      plugin.execute({ toolName: "api", args: {} }, () => {
        calls++;
        if (calls < 3) throw new ToolError({ code: "TRANSIENT", message: "busy", recoverable: false });
        return "ok";
      }),
    );
    expect(outcome).toEqual({ status: "success", value: "ok", attempt: 3, replayed: false });
    expect(clock.sleeps).toEqual([500, 1000]);
  });

  it("undefined, or a hook that throws, keeps the default decision", async () => {
    for (const shouldRetry of [
      () => undefined,
      () => {
        throw new Error("hook bug");
      },
    ]) {
      const clock = createFakeClock();
      const plugin = RetryReflectPlugin.create({ clock, shouldRetry });
      let calls = 0;
      const transient = await settle(
        clock,
        plugin.execute({ toolName: "api", args: {} }, () => {
          calls++;
          if (calls === 1) throw unavailable();
          return "ok";
        }),
      );
      expect(transient).toMatchObject({ status: "success", attempt: 2 });
      const auth = failed(
        await settle(
          clock,
          plugin.execute({ toolName: "crm", args: {} }, () => Promise.reject(unauthorized())),
        ),
      );
      expect(auth.reason).toBe("not_recoverable");
      expect(
        reflected(
          await settle(
            clock,
            plugin.execute({ toolName: "w", args: {} }, () => Promise.reject(badUnits())),
          ),
        ).error.code,
      ).toBe("INVALID_ARGUMENTS");
    }
  });

  it("sees the clean ToolError and the call: toolName, args, attempt, scope", async () => {
    const clock = createFakeClock();
    const seen: [string, FailureContext][] = [];
    const plugin = RetryReflectPlugin.create({
      clock,
      shouldRetry: (error, context) => {
        seen.push([error.code, context]);
        return undefined;
      },
    });
    await settle(
      clock,
      plugin.execute({ toolName: "api", args: { q: 0 }, scope: "run-7" }, () => Promise.reject(badUnits())),
    );
    // The next call of the scope: its failures take the scope's next numbers (2, 3), not the call's own count.
    let calls = 0;
    await settle(
      clock,
      plugin.execute({ toolName: "api", args: { q: 1 }, scope: "run-7" }, () => {
        calls++;
        if (calls <= 2) throw unavailable();
        return "ok";
      }),
    );
    expect(seen).toEqual([
      ["INVALID_ARGUMENTS", { toolName: "api", args: { q: 0 }, attempt: 1, scope: "run-7" }],
      ["TRANSIENT", { toolName: "api", args: { q: 1 }, attempt: 2, scope: "run-7" }],
      ["TRANSIENT", { toolName: "api", args: { q: 1 }, attempt: 3, scope: "run-7" }],
    ]);
  });

  it("per tool: one tool's shouldRetry does not change another's", async () => {
    const clock = createFakeClock();
    const plugin = RetryReflectPlugin.create({ clock, tools: { api: { shouldRetry: () => false } } });
    expect(
      failed(
        await settle(
          clock,
          plugin.execute({ toolName: "api", args: {} }, () => Promise.reject(unavailable())),
        ),
      ).reason,
    ).toBe("not_recoverable");
    let calls = 0;
    const other = await settle(
      clock,
      plugin.execute({ toolName: "other", args: {} }, () => {
        calls++;
        if (calls === 1) throw unavailable();
        return "ok";
      }),
    );
    expect(other).toMatchObject({ status: "success", attempt: 2 });
  });

  describe("ToolCall.retryable, the host's mark", () => {
    it("is the default when the policy has no shouldRetry: false stops a transient failure, true reflects an UNAUTHORIZED one", async () => {
      const clock = createFakeClock();
      const plugin = RetryReflectPlugin.create({ clock });
      const marks: unknown[] = [];
      let calls = 0;
      const stop = failed(
        await settle(
          clock,
          plugin.execute(
            {
              toolName: "api",
              args: {},
              retryable: (failure) => {
                marks.push(failure);
                return false;
              },
            },
            () => {
              calls++;
              return Promise.reject(unavailable());
            },
          ),
        ),
      );
      expect(stop.reason).toBe("not_recoverable");
      expect(calls).toBe(1);
      // The mark reads what the tool threw, untouched.
      expect(marks).toHaveLength(1);
      expect(marks[0]).toBeInstanceOf(Error);
      expect((marks[0] as { status: number }).status).toBe(503);

      const retry = reflected(
        await settle(
          clock,
          plugin.execute({ toolName: "crm", args: {}, retryable: () => true }, () => Promise.reject(unauthorized())),
        ),
      );
      expect(retry.error).toMatchObject({ code: "UNAUTHORIZED", recoverable: true });
      // undefined: the default decision.
      const neutral = failed(
        await settle(
          clock,
          plugin.execute({ toolName: "crm2", args: {}, retryable: () => undefined }, () => Promise.reject(unauthorized())),
        ),
      );
      expect(neutral.reason).toBe("not_recoverable");
    });

    it("shouldRetry wins over it; a shouldRetry that returns undefined or throws leaves it the decision", async () => {
      const clock = createFakeClock();
      const plugin = RetryReflectPlugin.create({
        clock,
        tools: {
          wins: { shouldRetry: () => true },
          neutral: { shouldRetry: () => undefined },
          broken: {
            shouldRetry: () => {
              throw new Error("hook bug");
            },
          },
        },
      });
      let calls = 0;
      const wins = await settle(
        clock,
        plugin.execute({ toolName: "wins", args: {}, retryable: () => false }, () => {
          calls++;
          if (calls === 1) throw unavailable();
          return "ok";
        }),
      );
      expect(wins).toMatchObject({ status: "success", attempt: 2 });
      for (const toolName of ["neutral", "broken"]) {
        let ran = 0;
        const outcome = failed(
          await settle(
            clock,
            plugin.execute({ toolName, args: {}, retryable: () => false }, () => {
              ran++;
              return Promise.reject(unavailable());
            }),
          ),
        );
        expect([toolName, outcome.reason, ran]).toEqual([toolName, "not_recoverable", 1]);
      }
    });

    it("a mark that throws decides nothing", async () => {
      const clock = createFakeClock();
      const plugin = RetryReflectPlugin.create({ clock });
      let calls = 0;
      const outcome = await settle(
        clock,
        plugin.execute(
          {
            toolName: "api",
            args: {},
            retryable: () => {
              throw new Error("mark bug");
            },
          },
          () => {
            calls++;
            if (calls === 1) throw unavailable();
            return "ok";
          },
        ),
      );
      expect(outcome).toMatchObject({ status: "success", attempt: 2 });
    });
  });
});

describe("isFailure(result, context)", () => {
  describe.each(PATHS)("with %s", (_name, observersOf) => {
    it("true marks a returned value as a failure, classified (TOOL_FAILED, recoverable): a reflection, not a success", async () => {
      const clock = createFakeClock();
      const events: RetryReflectEvent[] = [];
      const plugin = RetryReflectPlugin.create({
        clock,
        observers: observersOf(events),
        isFailure: (result) => (result as { ok?: boolean }).ok === false,
      });
      const outcome = reflected(
        await settle(
          clock,
          plugin.execute({ toolName: "search", args: {} }, () => ({ ok: false, reason: "index offline" })),
        ),
      );
      expect(outcome.error.code).toBe("TOOL_FAILED");
      expect(outcome.error.recoverable).toBe(true);
      expect(outcome.error.message).toContain("index offline");
      expect(
        await settle(
          clock,
          plugin.execute({ toolName: "search", args: {} }, () => ({ ok: true })),
        ),
      ).toMatchObject({
        status: "success",
        value: { ok: true },
        attempt: 2,
      });
    });

    it("the marked value is classified like a thrown one: a returned HTTP 503 error is retried in place; classifyError sees the value", async () => {
      const clock = createFakeClock();
      const classified: unknown[] = [];
      const plugin = RetryReflectPlugin.create({
        clock,
        observers: observersOf([]),
        isFailure: (result) => result instanceof Error || result === undefined,
        tools: {
          custom: {
            classifyError: (error) => {
              classified.push(error);
              return new ToolError({ code: "NO_RESULT", message: "the tool returned nothing", recoverable: false });
            },
          },
        },
      });
      let calls = 0;
      const retried = await settle(
        clock,
        plugin.execute({ toolName: "api", args: {} }, () => (++calls === 1 ? unavailable() : "fine")),
      );
      expect(retried).toMatchObject({ status: "success", value: "fine", attempt: 2 });
      expect(clock.sleeps).toEqual([500]);

      const stop = failed(
        await settle(
          clock,
          plugin.execute({ toolName: "custom", args: {} }, () => new Error("empty")),
        ),
      );
      expect(stop.error.code).toBe("NO_RESULT");
      expect(classified).toHaveLength(1);
      expect((classified[0] as Error).message).toBe("empty");
      // A marked `undefined` is a failure too, not a success.
      const nothing = reflected(
        await settle(
          clock,
          plugin.execute({ toolName: "other", args: {} }, () => undefined),
        ),
      );
      expect(nothing.error.code).toBe("TOOL_FAILED");
    });

    it("a returned ToolError is reported as it is (its code and flags decide)", async () => {
      const clock = createFakeClock();
      const quota = new ToolError({
        code: "QUOTA_EXCEEDED",
        message: "monthly quota used",
        recoverable: false,
        suggestedAction: "Tell the user.",
      });
      const plugin = RetryReflectPlugin.create({
        clock,
        observers: observersOf([]),
        isFailure: (result) => ((result as { quota?: boolean }).quota ? quota : undefined),
      });
      const outcome = failed(
        await settle(
          clock,
          plugin.execute({ toolName: "search", args: {} }, () => ({ quota: true })),
        ),
      );
      expect(outcome.reason).toBe("not_recoverable");
      expect(outcome.error.toJSON()).toEqual({
        error_code: "QUOTA_EXCEEDED",
        message: "monthly quota used",
        recoverable: false,
        suggested_action: "Do not call 'search' again for this task; tell the user what failed.",
        tool_suggested_action: "Tell the user.",
      });

      // A transient ToolError is retried in place like a thrown one.
      const busy = new ToolError({ code: "RATE_LIMITED", message: "slow down", recoverable: true, retryAfterMs: 700 });
      let calls = 0;
      const retried = await settle(
        clock,
        RetryReflectPlugin.create({
          clock,
          observers: observersOf([]),
          isFailure: (result) => (result === "busy" ? busy : undefined),
        }).execute({ toolName: "api", args: {} }, () => (++calls === 1 ? "busy" : "done")),
      );
      expect(retried).toMatchObject({ status: "success", value: "done", attempt: 2 });
      expect(clock.sleeps).toEqual([700]);
    });

    it("only adds failures: false does not clear the error shape, MCP isError or a returned ToolError", async () => {
      const clock = createFakeClock();
      const plugin = RetryReflectPlugin.create({ clock, observers: observersOf([]), isFailure: () => false });
      const shape = { error_code: "NOT_FOUND", message: "no such order", recoverable: true };
      expect(
        reflected(
          await settle(
            clock,
            plugin.execute({ toolName: "a", args: {} }, () => shape),
          ),
        ).error.code,
      ).toBe("NOT_FOUND");
      const mcp = { isError: true, content: [{ type: "text", text: "server said no" }] };
      expect(
        reflected(
          await settle(
            clock,
            plugin.execute({ toolName: "b", args: {} }, () => mcp),
          ),
        ).error.message,
      ).toBe("server said no");
      const returned = new ToolError({ code: "GONE", message: "gone", recoverable: false });
      expect(
        failed(
          await settle(
            clock,
            plugin.execute({ toolName: "c", args: {} }, () => returned),
          ),
        ).error.code,
      ).toBe("GONE");
    });

    it("sees the call: toolName, args, the provisional attempt, scope", async () => {
      const clock = createFakeClock();
      const seen: FailureContext[] = [];
      const plugin = RetryReflectPlugin.create({
        clock,
        observers: observersOf([]),
        isFailure: (_result, context) => {
          seen.push(context);
          return undefined;
        },
      });
      await settle(
        clock,
        plugin.execute({ toolName: "a", args: { x: 1 }, scope: "s" }, () => "v"),
      );
      expect(seen).toEqual([{ toolName: "a", args: { x: 1 }, attempt: 1, scope: "s" }]);
    });

    it("a hook that throws (or returns something else than a boolean or a ToolError) adds nothing: the value is a success", async () => {
      const clock = createFakeClock();
      const plugin = RetryReflectPlugin.create({
        clock,
        observers: observersOf([]),
        tools: {
          throws: {
            isFailure: (result) => (result as { status: string }).status === "error",
          },
          odd: { isFailure: () => "yes" as never },
          later: { isFailure: () => Promise.resolve(true) as never },
        },
      });
      // A hook reading a field of null throws a TypeError: the call still succeeds with the tool's value.
      expect(
        await settle(
          clock,
          plugin.execute({ toolName: "throws", args: {} }, () => null),
        ),
      ).toEqual({
        status: "success",
        value: null,
        attempt: 1,
        replayed: false,
      });
      expect(
        await settle(
          clock,
          plugin.execute({ toolName: "odd", args: {} }, () => 1),
        ),
      ).toMatchObject({ status: "success", value: 1 });
      expect(
        await settle(
          clock,
          plugin.execute({ toolName: "later", args: {} }, () => 2),
        ),
      ).toMatchObject({ status: "success", value: 2 });
    });
  });

  it("on a write, a marked value is not stored as the key's result: the retry runs the tool again", async () => {
    const clock = createFakeClock();
    const plugin = RetryReflectPlugin.create({
      clock,
      tools: { pay: { effect: "write", isFailure: (result) => (result as { ok: boolean }).ok === false } },
    });
    let calls = 0;
    const call = { toolName: "pay", args: { amount: 5, idempotency_key: "k-1" } };
    const first = reflected(
      await settle(
        clock,
        plugin.execute(call, () => ({ ok: ++calls > 1 })),
      ),
    );
    expect(first.error.code).toBe("TOOL_FAILED");
    expect(
      await settle(
        clock,
        plugin.execute(call, () => ({ ok: ++calls > 1 })),
      ),
    ).toMatchObject({ status: "success", value: { ok: true }, replayed: false });
    expect(calls).toBe(2);
    // Now the success is the key's result.
    expect(
      await settle(
        clock,
        plugin.execute(call, () => ({ ok: ++calls > 1 })),
      ),
    ).toMatchObject({ status: "success", replayed: true });
    expect(calls).toBe(2);
  });

  it("per tool: another tool's results are not judged", async () => {
    const clock = createFakeClock();
    const plugin = RetryReflectPlugin.create({ clock, tools: { strict: { isFailure: () => true } } });
    expect(
      (
        await settle(
          clock,
          plugin.execute({ toolName: "strict", args: {} }, () => "x"),
        )
      ).status,
    ).toBe("reflect");
    expect(
      (
        await settle(
          clock,
          plugin.execute({ toolName: "lenient", args: {} }, () => "x"),
        )
      ).status,
    ).toBe("success");
  });
});

describe("fallback(call, error)", () => {
  describe.each(PATHS)("with %s", (_name, observersOf) => {
    it("a sync value replaces an exhausted failure: success with fallback: true, and a fallback_used event", async () => {
      const clock = createFakeClock();
      const events: RetryReflectEvent[] = [];
      const received: [ToolCall, ToolError][] = [];
      // The tool has failed for giveUpMs by its second attempt: the definitive stop.
      const plugin = RetryReflectPlugin.create({
        clock,
        maxRetries: 1,
        giveUpMs: 500,
        observers: observersOf(events),
        fallback: (call, error) => {
          received.push([call, error]);
          return { cached: true };
        },
      });
      const call = { toolName: "quotes", args: { symbol: "ACME" }, scope: "s" };
      const outcome = await settle(
        clock,
        plugin.execute(call, () => Promise.reject(unavailable())),
      );
      expect(outcome).toEqual({ status: "success", value: { cached: true }, attempt: 2, replayed: false, fallback: true });
      expect(received).toHaveLength(1);
      const [seenCall, error] = received[0] as [ToolCall, ToolError];
      expect(seenCall).toMatchObject(call);
      expect(error.code).toBe("RETRIES_EXHAUSTED");
      expect(ToolError.isInstance(error.cause) && error.cause.code).toBe("TRANSIENT");
      if (observersOf([]).length > 0) {
        const used = events.filter((event) => event.type === "fallback_used");
        expect(used.map((event) => [event.level, event.message, event.fields])).toEqual([
          ["WARN", "fallback used", { tool_name: "quotes", error_code: "RETRIES_EXHAUSTED" }],
        ]);
        expect(events.at(-1)?.type).toBe("fallback_used");
      }
    });

    it("an async value replaces a not-recoverable failure", async () => {
      const clock = createFakeClock();
      const plugin = RetryReflectPlugin.create({
        clock,
        observers: observersOf([]),
        fallback: async (_call, error) => `fallback for ${error.code}`,
      });
      expect(
        await settle(
          clock,
          plugin.execute({ toolName: "crm", args: {} }, () => Promise.reject(unauthorized())),
        ),
      ).toEqual({
        status: "success",
        value: "fallback for UNAUTHORIZED",
        attempt: 1,
        replayed: false,
        fallback: true,
      });
    });

    it("replaces an open circuit's temporary texts (the failure that opened it, a call turned away) and its stop (isolated)", async () => {
      const clock = createFakeClock();
      const errors: string[] = [];
      const plugin = RetryReflectPlugin.create({
        clock,
        circuitBreakerThreshold: 2,
        circuitBreakerResetMs: 60_000, // open past the calls' patience (the default, 1 s, has them wait for the probe)
        maxRetries: 5,
        observers: observersOf([]),
        fallback: (_call, error) => {
          errors.push(error.code);
          return "stale";
        },
      });
      let calls = 0;
      // The failures still open the circuit; the call would be told the tool is temporarily
      // unavailable for the circuit's open time (60 s, past its patience): the fallback answers instead.
      const opening = await settle(
        clock,
        plugin.execute({ toolName: "api", args: {}, scope: "a" }, () => {
          calls++;
          return Promise.reject(unavailable());
        }),
      );
      expect(opening).toMatchObject({ status: "success", value: "stale", fallback: true });
      expect(calls).toBe(2);
      expect(plugin.circuitState("api")).toBe("open");
      const turnedAway = await settle(
        clock,
        plugin.execute({ toolName: "api", args: {}, scope: "b" }, () => {
          calls++;
          return "fresh";
        }),
      );
      expect(turnedAway).toMatchObject({ status: "success", value: "stale", fallback: true });
      expect(calls).toBe(2);
      // An isolated circuit is a stop: the fallback replaces it too.
      plugin.circuits.isolate("api");
      const isolated = await settle(
        clock,
        plugin.execute({ toolName: "api", args: {}, scope: "c" }, () => {
          calls++;
          return "fresh";
        }),
      );
      expect(isolated).toMatchObject({ status: "success", value: "stale", fallback: true });
      expect(calls).toBe(2);
      expect(errors).toEqual(["TRANSIENT", "CIRCUIT_OPEN", "CIRCUIT_OPEN"]);
    });

    it("is not used for a correction asked of the model (invalid arguments), nor for a write told temporary", async () => {
      const clock = createFakeClock();
      const plugin = RetryReflectPlugin.create({
        clock,
        patienceMs: 0,
        toolEffects: { pay: "write" },
        idempotency: { derive: "when-missing" },
        fallback: () => "stale",
      });
      const corrected = await plugin.execute({ toolName: "search", args: {}, scope: "a" }, () => {
        throw new TypeError("units: expected one of celsius, fahrenheit; received kelvin");
      });
      expect(corrected.status).toBe("reflect");
      const write = await settle(
        clock,
        plugin.execute({ toolName: "pay", args: { amount: 5 }, scope: "b" }, () => Promise.reject(unavailable())),
      );
      expect(write.status).toBe("reflect");
    });

    it("the failure still counts for the budget: the next call of the scope is stopped without running, and falls back again", async () => {
      const clock = createFakeClock();
      const plugin = RetryReflectPlugin.create({
        clock,
        maxRetries: 1,
        giveUpMs: 500, // the definitive stop at the second attempt
        circuitBreakerThreshold: 100,
        observers: observersOf([]),
        fallback: () => 0,
      });
      let calls = 0;
      expect(
        await settle(
          clock,
          plugin.execute({ toolName: "api", args: {}, scope: "s" }, () => {
            calls++;
            return Promise.reject(unavailable());
          }),
        ),
      ).toMatchObject({ status: "success", value: 0, fallback: true });
      expect(calls).toBe(2);
      expect(
        await settle(
          clock,
          plugin.execute({ toolName: "api", args: {}, scope: "s" }, () => {
            calls++;
            return 1;
          }),
        ),
      ).toMatchObject({
        status: "success",
        value: 0,
        fallback: true,
      });
      expect(calls).toBe(2);
      // Another scope has its own budget.
      expect(
        await settle(
          clock,
          plugin.execute({ toolName: "api", args: {}, scope: "t" }, () => {
            calls++;
            return 1;
          }),
        ),
      ).toEqual({
        status: "success",
        value: 1,
        attempt: 1,
        replayed: false,
      });
    });

    it("undefined, a throwing or a rejecting fallback keeps the failure (no crash, no event)", async () => {
      const clock = createFakeClock();
      const events: RetryReflectEvent[] = [];
      const plugin = RetryReflectPlugin.create({
        clock,
        maxRetries: 0,
        giveUpMs: 0, // the definitive stop at the first failure
        circuitBreakerThreshold: 100,
        observers: observersOf(events),
        tools: {
          none: { fallback: () => undefined },
          asyncNone: { fallback: async () => undefined },
          throws: {
            fallback: () => {
              throw new Error("fallback bug");
            },
          },
          rejects: { fallback: () => Promise.reject(new Error("fallback bug")) },
        },
      });
      for (const toolName of ["none", "asyncNone", "throws", "rejects"]) {
        const outcome = failed(
          await settle(
            clock,
            plugin.execute({ toolName, args: {} }, () => Promise.reject(unavailable())),
          ),
        );
        expect([toolName, outcome.reason, outcome.error.code]).toEqual([toolName, "exhausted", "RETRIES_EXHAUSTED"]);
      }
      expect(events.filter((event) => event.type === "fallback_used")).toEqual([]);
    });

    it("is not used when the caller aborts: the abort wins", async () => {
      const clock = createFakeClock();
      let used = 0;
      const plugin = RetryReflectPlugin.create({
        clock,
        observers: observersOf([]),
        fallback: () => {
          used++;
          return "x";
        },
      });
      const controller = new AbortController();
      const pending = plugin.execute({ toolName: "api", args: {}, signal: controller.signal }, () => Promise.reject(unavailable()));
      pending.catch(() => {});
      await clock.advance(100);
      controller.abort(new Error("user cancelled"));
      await expect(pending).rejects.toThrow("user cancelled");
      expect(used).toBe(0);
    });

    it("is not used for a reflection", async () => {
      const clock = createFakeClock();
      let used = 0;
      const plugin = RetryReflectPlugin.create({
        clock,
        observers: observersOf([]),
        fallback: () => {
          used++;
          return "x";
        },
      });
      expect(
        (
          await settle(
            clock,
            plugin.execute({ toolName: "w", args: {} }, () => Promise.reject(badUnits())),
          )
        ).status,
      ).toBe("reflect");
      expect(used).toBe(0);
    });
  });

  it("a thenable from elsewhere (not a native Promise) is awaited like a promise", async () => {
    const clock = createFakeClock();
    // A PromiseLike that is not a Promise (another library's, another realm's).
    const thenable = {
      // biome-ignore lint/suspicious/noThenProperty: a thenable is the point of this test
      then: (resolve: (value: string) => void) => resolve("from thenable"),
    };
    const plugin = RetryReflectPlugin.create({ clock, maxRetries: 0, giveUpMs: 0, fallback: () => thenable });
    expect(
      await settle(
        clock,
        plugin.execute({ toolName: "api", args: {} }, () => Promise.reject(unavailable())),
      ),
    ).toMatchObject({
      status: "success",
      value: "from thenable",
      fallback: true,
    });
  });

  it("per tool: only the tool with a fallback falls back", async () => {
    const clock = createFakeClock();
    // The definitive stop at the first failure (giveUpMs 0): a temporary failure is no fallback's.
    const plugin = RetryReflectPlugin.create({ clock, maxRetries: 0, giveUpMs: 0, tools: { quotes: { fallback: () => "cached" } } });
    expect(
      (
        await settle(
          clock,
          plugin.execute({ toolName: "quotes", args: {} }, () => Promise.reject(unavailable())),
        )
      ).status,
    ).toBe("success");
    expect(
      (
        await settle(
          clock,
          plugin.execute({ toolName: "news", args: {} }, () => Promise.reject(unavailable())),
        )
      ).status,
    ).toBe("failed");
  });
});

describe("the stop templates: exhaustedPrompt, notRecoverablePrompt, circuitOpenPrompt", () => {
  it("exhaustedPrompt replaces the built-in text; {error_code} is the last failure's, {retry_after_s} its wait rounded up", async () => {
    const clock = createFakeClock();
    // The second 429 comes 1.2 s after the first failure: past giveUpMs, the definitive stop.
    const plugin = RetryReflectPlugin.create({
      clock,
      maxRetries: 1,
      giveUpMs: 1_000,
      exhaustedPrompt:
        "{tool_name} gave up at {attempt}/{max_retries}: {error_code} {error}, try in {retry_after_s} s. {suggested_action} {args}",
    });
    const outcome = failed(
      await settle(
        clock,
        plugin.execute({ toolName: "quotes", args: { symbol: "ACME" } }, () => Promise.reject(rateLimited("1.2"))),
      ),
    );
    expect(outcome.reason).toBe("exhausted");
    const { text, json } = parts(outcome.message);
    expect(text).toBe(
      `quotes gave up at 2/1: RATE_LIMITED "HTTP 429", try in 2 s. "Do not call 'quotes' again for this task; tell the user that it failed and why." {"symbol":"ACME"}`,
    );
    // The structured error still follows the text.
    expect(json).toMatchObject({
      error_code: "RETRIES_EXHAUSTED",
      recoverable: false,
      attempt: 2,
      max_retries: 1,
      details: { last_error_code: "RATE_LIMITED" },
    });

    // A later call of the spent scope is stopped with the same template.
    const later = failed(
      await settle(
        clock,
        plugin.execute({ toolName: "quotes", args: { symbol: "ACME" } }, () => "never"),
      ),
    );
    expect(parts(later.message).text).toMatch(/^quotes gave up at 2\/1: RATE_LIMITED "HTTP 429", try in 2 s\./);
  });

  it("notRecoverablePrompt replaces the built-in text of a failure that may not be retried", async () => {
    const clock = createFakeClock();
    const plugin = RetryReflectPlugin.create({ clock, notRecoverablePrompt: "STOP {tool_name}: {error_code} {error} ({retry_after_s})" });
    const outcome = failed(
      await settle(
        clock,
        plugin.execute({ toolName: "crm", args: {} }, () => Promise.reject(unauthorized())),
      ),
    );
    expect(outcome.reason).toBe("not_recoverable");
    const { text, json } = parts(outcome.message);
    expect(text).toBe('STOP crm: UNAUTHORIZED "HTTP 401 Unauthorized" (0)');
    expect(json).toMatchObject({ error_code: "UNAUTHORIZED", recoverable: false });
  });

  it("notRecoverablePrompt: {error_code} is the failure's own code even when its details carry a last_error_code", async () => {
    const clock = createFakeClock();
    const plugin = RetryReflectPlugin.create({ clock, notRecoverablePrompt: "STOP {error_code}" });
    const error = new ToolError({ code: "GONE", message: "gone", recoverable: false, details: { last_error_code: "SOMETHING_ELSE" } });
    const outcome = failed(
      await settle(
        clock,
        plugin.execute({ toolName: "a", args: {} }, () => Promise.reject(error)),
      ),
    );
    expect(parts(outcome.message).text).toBe("STOP GONE");
  });

  it("the failure that opened the circuit gets the temporary text (retryLaterPrompt): its own {error_code}/{error}, the circuit's open time", async () => {
    const clock = createFakeClock();
    const plugin = RetryReflectPlugin.create({
      clock,
      maxRetries: 5,
      circuitBreakerThreshold: 2,
      circuitBreakerResetMs: 30_000,
      retryLaterPrompt: "{tool_name} is down ({error_code}: {error}); back in {retry_after_s} s",
      circuitOpenPrompt: "{tool_name} turned away ({error_code}); back in {retry_after_s} s",
    });
    const outcome = reflected(
      await settle(
        clock,
        plugin.execute({ toolName: "api", args: {} }, () => Promise.reject(unavailable())),
      ),
    );
    expect(plugin.circuitState("api")).toBe("open");
    const { text, json } = parts(outcome.message);
    expect(text).toBe('api is down (TRANSIENT: "HTTP 503 Service Unavailable"); back in 30 s');
    expect(json).toMatchObject({ error_code: "TRANSIENT", recoverable: true, retry_after_ms: 30_000 });
  });

  it("circuitOpenPrompt: the text of a call turned away by the open circuit ({error_code} CIRCUIT_OPEN, the remaining wait rounded up)", async () => {
    const clock = createFakeClock();
    const plugin = RetryReflectPlugin.create({
      clock,
      maxRetries: 0,
      circuitBreakerThreshold: 1,
      circuitBreakerResetMs: 30_000,
      circuitOpenPrompt: "{tool_name} is down ({error_code}); back in {retry_after_s} s",
    });
    await settle(
      clock,
      plugin.execute({ toolName: "api", args: {}, scope: "a" }, () => Promise.reject(unavailable())),
    );
    await clock.advance(10_500);
    let ran = 0;
    // 19.5 s of open time left, past the call's patience (15 s): turned away at once, as temporary.
    const outcome = reflected(
      await settle(
        clock,
        plugin.execute({ toolName: "api", args: {}, scope: "b" }, () => ran++),
      ),
    );
    expect(ran).toBe(0);
    const { text, json } = parts(outcome.message);
    expect(text).toBe("api is down (CIRCUIT_OPEN); back in 20 s");
    expect(json).toMatchObject({ error_code: "CIRCUIT_OPEN", recoverable: true, retry_after_ms: 19_500 });
  });

  it("per tool via tools; other tools keep the built-in texts", async () => {
    const clock = createFakeClock();
    // The definitive stop at the first failure (giveUpMs 0).
    const plugin = RetryReflectPlugin.create({
      clock,
      maxRetries: 0,
      giveUpMs: 0,
      tools: { quotes: { exhaustedPrompt: "QUOTES DONE {error_code}" } },
    });
    const quotes = failed(
      await settle(
        clock,
        plugin.execute({ toolName: "quotes", args: {} }, () => Promise.reject(unavailable())),
      ),
    );
    expect(parts(quotes.message).text).toBe("QUOTES DONE TRANSIENT");
    const news = failed(
      await settle(
        clock,
        plugin.execute({ toolName: "news", args: {} }, () => Promise.reject(unavailable())),
      ),
    );
    expect(parts(news.message).text).toBe(
      `The tool 'news' failed 1 time; the last error was: "HTTP 503 Service Unavailable". Do not call 'news' again for this task. Tell the user what failed.`,
    );
  });

  it("an unknown placeholder fails at build, naming the option (and the tool)", () => {
    for (const option of ["exhaustedPrompt", "notRecoverablePrompt", "circuitOpenPrompt"] as const) {
      const error = invalidOption(() => RetryReflectPlugin.create({ [option]: "{tool_name} {wait}" } as RetryReflectOptions));
      expect(error.option).toBe(option);
      expect(error.message).toContain("unknown placeholder {wait}");
      expect(error.message).toContain("{retry_after_s}");
      expect(invalidOption(() => RetryReflectPlugin.create({ tools: { pay: { [option]: "{nope}" } } })).option).toBe(`tools.pay.${option}`);
    }
    // {retry_after_s} belongs to the stop texts only.
    expect(invalidOption(() => RetryReflectPlugin.create({ reflectionPrompt: "{retry_after_s}" })).option).toBe("reflectionPrompt");
    expect(invalidOption(() => RetryReflectPlugin.create({ exhaustedPrompt: "" })).option).toBe("exhaustedPrompt");
  });
});

describe('onExhausted: "throw" and fallback', () => {
  it("without a fallback, an exhausted call throws RetriesExhaustedError", async () => {
    const clock = createFakeClock();
    // The tool has failed for giveUpMs by its second attempt: the definitive stop.
    const plugin = RetryReflectPlugin.create({ clock, maxRetries: 1, giveUpMs: 500, onExhausted: "throw" });
    const pending = plugin.execute({ toolName: "api", args: {} }, () => Promise.reject(unavailable()));
    pending.catch(() => {});
    await clock.runAll();
    const thrown = await pending.then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(RetriesExhaustedError.isInstance(thrown)).toBe(true);
    expect((thrown as RetriesExhaustedError).attempts).toBe(2);
  });

  describe.each(PATHS)("with %s", (_name, observersOf) => {
    it("a fallback value wins over the throw; no value (undefined, a throw, a rejection) throws as without a fallback", async () => {
      const clock = createFakeClock();
      const plugin = RetryReflectPlugin.create({
        clock,
        maxRetries: 0,
        giveUpMs: 0, // the definitive stop at the first failure
        circuitBreakerThreshold: 100,
        onExhausted: "throw",
        observers: observersOf([]),
        tools: {
          value: { fallback: () => "cached" },
          none: { fallback: () => undefined },
          throws: {
            fallback: () => {
              throw new Error("fallback bug");
            },
          },
          rejects: { fallback: async () => Promise.reject(new Error("fallback bug")) },
        },
      });
      expect(
        await settle(
          clock,
          plugin.execute({ toolName: "value", args: {} }, () => Promise.reject(unavailable())),
        ),
      ).toMatchObject({
        status: "success",
        value: "cached",
        fallback: true,
      });
      for (const toolName of ["none", "throws", "rejects"]) {
        const pending = plugin.execute({ toolName, args: {} }, () => Promise.reject(unavailable()));
        pending.catch(() => {});
        await clock.runAll();
        const thrown = await pending.then(
          () => undefined,
          (error: unknown) => error,
        );
        expect([toolName, RetriesExhaustedError.isInstance(thrown)]).toEqual([toolName, true]);
      }
      // A later call of the spent scope: the fallback again, and the throw without one.
      expect(
        await settle(
          clock,
          plugin.execute({ toolName: "value", args: {} }, () => "fresh"),
        ),
      ).toMatchObject({ value: "cached", fallback: true });
      const later = plugin.execute({ toolName: "none", args: {} }, () => "fresh");
      later.catch(() => {});
      await expect(later).rejects.toSatisfy((error: unknown) => RetriesExhaustedError.isInstance(error));
    });
  });

  it("a not-recoverable stop is returned, not thrown", async () => {
    const clock = createFakeClock();
    const plugin = RetryReflectPlugin.create({ clock, onExhausted: "throw" });
    expect(
      failed(
        await settle(
          clock,
          plugin.execute({ toolName: "crm", args: {} }, () => Promise.reject(unauthorized())),
        ),
      ).reason,
    ).toBe("not_recoverable");
  });
});
