import { describe, expect, it } from "vitest";
import { getToolContext, type HostToolCall, runToolCall, withToolContext } from "../src/adapter.js";
import { RetryReflectPlugin, type ToolContext } from "../src/index.js";
import { createFakeClock } from "../src/testing.js";

// The options an adapter hands its tool (`withToolContext`) carry the attempt's one signal under
// the host's signal key: read while the attempt runs or after it ended, it is what the attempt
// made of it (aborted at the limit or with the caller, left alone after a success).

const hangs = () => new Promise<never>(() => {});

/** Runs one healthy call whose tool gets `withToolContext(options, context, key)`; resolves to what `use` returned. */
function callWith<O extends object>(
  plugin: RetryReflectPlugin,
  options: O,
  key: string,
  tool: (options: O) => unknown,
  signal?: AbortSignal,
): Promise<unknown> {
  const call: HostToolCall<unknown> = {
    toolName: "search",
    args: {},
    signal,
    run: (_args: unknown, context: ToolContext) => tool(withToolContext(options, context, key)),
  };
  return runToolCall(plugin, call, (outcome) => outcome);
}

describe("the options a tool gets under the default limit", () => {
  it("hold the host's keys and values, the signal key in its place, and the attempt's signal when read", async () => {
    const plugin = RetryReflectPlugin.create({});
    const host = { toolCallId: "c1", messages: [], abortSignal: undefined, experimental_context: { a: 1 } };
    let seen: Record<string, unknown> = {};
    await callWith(plugin, host, "abortSignal", (options) => {
      expect(Object.keys(options)).toEqual(["toolCallId", "messages", "abortSignal", "experimental_context"]);
      const signal = options.abortSignal as AbortSignal | undefined;
      expect(signal).toBeInstanceOf(AbortSignal);
      expect(signal).toBe(getToolContext(options)?.signal);
      expect(options.abortSignal).toBe(signal);
      expect(Object.getOwnPropertyDescriptor(options, "abortSignal")).toEqual({
        value: signal,
        writable: true,
        enumerable: true,
        configurable: true,
      });
      seen = { ...options };
      return "ok";
    });
    expect(seen).toMatchObject({ toolCallId: "c1", messages: [], experimental_context: { a: 1 } });
    expect(seen.abortSignal).toBeInstanceOf(AbortSignal);
    expect(host.abortSignal).toBeUndefined(); // the host's own object is never written
  });

  it("a spread of the options carries the attempt's signal and context", async () => {
    const plugin = RetryReflectPlugin.create({});
    await callWith(plugin, { toolCall: { callId: "c1" } }, "signal", (options) => {
      const copy = { ...options } as Record<string, unknown>;
      expect(copy.signal).toBeInstanceOf(AbortSignal);
      expect(getToolContext(copy)?.signal).toBe(copy.signal);
      expect(Object.keys(copy).sort()).toEqual(["signal", "toolCall"]);
      return "ok";
    });
  });

  it("the tool's own assignment, deletion or freezing of the key behaves as on a plain object", async () => {
    const plugin = RetryReflectPlugin.create({});
    const mine = new AbortController().signal;
    await callWith(plugin, { abortSignal: undefined as AbortSignal | undefined }, "abortSignal", (options) => {
      options.abortSignal = mine;
      expect(options.abortSignal).toBe(mine);
      delete (options as { abortSignal?: unknown }).abortSignal;
      expect("abortSignal" in options).toBe(false);
      expect(options.abortSignal).toBeUndefined();
      return "ok";
    });
    await callWith(plugin, { abortSignal: undefined as AbortSignal | undefined }, "abortSignal", (options) => {
      Object.freeze(options);
      expect(Object.isFrozen(options)).toBe(true);
      expect(options.abortSignal).toBeInstanceOf(AbortSignal);
      expect(options.abortSignal).toBe(getToolContext(options)?.signal);
      return "ok";
    });
  });

  it("without options (undefined), the attempt's signal under the key", async () => {
    const plugin = RetryReflectPlugin.create({});
    const call: HostToolCall<unknown> = {
      toolName: "search",
      args: {},
      run: (_args: unknown, context: ToolContext) => {
        const options = withToolContext<{ signal?: AbortSignal }>(undefined, context, "signal");
        expect(Object.keys(options ?? {})).toEqual(["signal"]);
        expect(options?.signal).toBeInstanceOf(AbortSignal);
        expect(getToolContext(options)).toBe(context);
        expect(options?.signal).toBe(context.signal);
        return "ok";
      },
    };
    await runToolCall(plugin, call);
  });

  it("the signal aborts at the limit with the TIMEOUT when the tool read it while running", async () => {
    const clock = createFakeClock();
    const plugin = RetryReflectPlugin.create({ clock, maxRetries: 0 });
    const signals: Array<AbortSignal | undefined> = [];
    const outcome = callWith(plugin, { abortSignal: undefined as AbortSignal | undefined }, "abortSignal", (options) => {
      signals.push(options.abortSignal);
      return signals.length === 1 ? hangs() : "ok";
    });
    await clock.advance(9_999);
    const [signal] = signals;
    expect(signal?.aborted).toBe(false);
    await clock.advance(1); // the default limit of a first attempt: 10 s
    expect(signal?.aborted).toBe(true);
    expect((signal?.reason as { code?: string } | undefined)?.code).toBe("TIMEOUT");
    // Within the patience, the call retries in place: the retry gets a signal of its own, not aborted.
    await clock.advance(500); // the backoff
    expect(((await outcome) as { status: string }).status).toBe("success");
    expect(signals).toHaveLength(2);
    expect(signals[1]).toBeInstanceOf(AbortSignal);
    expect(signals[1]).not.toBe(signal);
    expect(signals[1]?.aborted).toBe(false);
  });

  it("read first after the attempt was cut off at the limit, the signal is already aborted with the TIMEOUT", async () => {
    const clock = createFakeClock();
    const plugin = RetryReflectPlugin.create({ clock, maxRetries: 0 });
    let kept: { abortSignal?: AbortSignal } | undefined;
    let context: ToolContext | undefined;
    const outcome = callWith(plugin, { abortSignal: undefined as AbortSignal | undefined }, "abortSignal", (options) => {
      if (kept !== undefined) return "ok"; // the in-place retry answers
      kept = options; // the first attempt's options, its signal not read
      context = getToolContext(options);
      return hangs();
    });
    await clock.advance(10_000); // the default limit of a first attempt: 10 s
    await clock.advance(500); // the backoff before the in-place retry
    expect(((await outcome) as { status: string }).status).toBe("success");
    expect(kept?.abortSignal?.aborted).toBe(true);
    expect((kept?.abortSignal?.reason as { code?: string } | undefined)?.code).toBe("TIMEOUT");
    expect(context?.signal).toBe(kept?.abortSignal);
  });

  it("read first after a success, the signal is not aborted and no longer follows the caller's", async () => {
    const plugin = RetryReflectPlugin.create({});
    const caller = new AbortController();
    let kept: { signal?: AbortSignal } | undefined;
    await callWith(
      plugin,
      {} as { signal?: AbortSignal },
      "signal",
      (options) => {
        kept = options;
        return "ok";
      },
      caller.signal,
    );
    caller.abort(new Error("later"));
    expect(kept?.signal?.aborted).toBe(false);
  });

  it("read first after the caller aborted the running attempt, the signal is aborted with the caller's reason", async () => {
    const plugin = RetryReflectPlugin.create({});
    const caller = new AbortController();
    let kept: { signal?: AbortSignal } | undefined;
    const outcome = callWith(
      plugin,
      {} as { signal?: AbortSignal },
      "signal",
      (options) => {
        kept = options;
        return new Promise((_resolve, reject) => setTimeout(() => reject(caller.signal.reason), 1));
      },
      caller.signal,
    );
    for (let tick = 0; tick < 10 && kept === undefined; tick++) await Promise.resolve(); // the tool starts a microtask after the call
    expect(kept).toBeDefined();
    caller.abort(new Error("user left"));
    await expect(outcome).rejects.toThrow("user left");
    expect(kept?.signal?.aborted).toBe(true);
    expect((kept?.signal?.reason as Error | undefined)?.message).toBe("user left");
  });
});

describe("the options a tool gets without a limit (attemptTimeoutMs: 0)", () => {
  it("are a copy of the host's, holding its keys, the attempt's signal (which follows the caller's) and context; the host's object is left as it was", async () => {
    const plugin = RetryReflectPlugin.create({ attemptTimeoutMs: 0 });
    const caller = new AbortController();
    const options = { toolCallId: "call_1", messages: [], abortSignal: caller.signal };
    const outcome = (await callWith(plugin, options, "abortSignal", (given) => ({ given, context: getToolContext(given) }))) as {
      value: { given: typeof options; context: ToolContext | undefined };
    };
    const seen = outcome.value;
    expect(seen.given).not.toBe(options);
    const { abortSignal, ...rest } = seen.given;
    expect(Object.fromEntries(Object.entries(rest))).toEqual({ toolCallId: "call_1", messages: [] });
    expect(Object.keys(seen.given)).toEqual(Object.keys(options)); // its keys, in order
    expect(abortSignal).toBe(seen.context?.signal);
    expect(abortSignal.aborted).toBe(false);
    expect(seen.context).toMatchObject({ attempt: 1, toolName: "search" });
    expect(getToolContext(options)).toBeUndefined(); // nothing left on, or remembered of, the host's object
    expect(Object.getOwnPropertySymbols(options)).toEqual([]);
  });

  it("a wrapped tool that hands its own options on: the inner attempt's context wins inside, the outer's stays outside", async () => {
    const plugin = RetryReflectPlugin.create({ attemptTimeoutMs: 0 });
    const options = { toolCallId: "call_1", abortSignal: undefined };
    const seen: Array<string | undefined> = [];
    const inner: HostToolCall<unknown> = {
      toolName: "inner",
      args: {},
      run: (_args, context) => seen.push(getToolContext(withToolContext(outerOptions, context, "abortSignal"))?.toolName),
    };
    let outerOptions: object = options;
    await callWith(plugin, options, "abortSignal", async (given) => {
      outerOptions = given;
      seen.push(getToolContext(given)?.toolName);
      await runToolCall(plugin, inner);
      seen.push(getToolContext(given)?.toolName);
    });
    expect(seen).toEqual(["search", "inner", "search"]);
  });
});

describe("the copy of the host's options", () => {
  const CONTEXT = Symbol.for("retry-reflect.tool-context");
  const context: ToolContext = { attempt: 1, signal: undefined, toolName: "search", callId: "call_1" };
  const earlier: ToolContext = { attempt: 3, signal: undefined, toolName: "other", callId: "call_0" };
  const hostSignal = new AbortController().signal;
  const attemptSignal = new AbortController().signal;
  const withProto = JSON.parse('{"__proto__": {"polluted": true}, "a": 1}') as object;
  const cases: Array<[string, object | undefined]> = [
    ["none", undefined],
    ["AI SDK options", { toolCallId: "call_1", messages: [], abortSignal: undefined, experimental_context: undefined }],
    ["with the host's signal", { toolCallId: "call_1", abortSignal: hostSignal }],
    ["OpenAI Agents call details (no signal key)", { toolCall: { callId: "call_1" } }],
    ["an own __proto__ key", withProto],
    ["a context carried from an outer wrapper", { [CONTEXT]: earlier, abortSignal: hostSignal }],
  ];
  const view = (copy: Record<PropertyKey, unknown>) => ({
    keys: Object.keys(copy).sort(),
    values: Object.fromEntries(Object.keys(copy).map((key) => [key, copy[key]])),
    context: copy[CONTEXT],
    prototype: Object.getPrototypeOf(copy),
    ownProto: Object.getOwnPropertyDescriptor(copy, "__proto__")?.value,
  });

  for (const [name, options] of cases) {
    for (const signal of [undefined, attemptSignal]) {
      it(`${name}, ${signal === undefined ? "no signal of the attempt's own" : "the attempt's own signal"}`, () => {
        const before = options === undefined ? undefined : { ...options };
        const attempt: ToolContext = { ...context, signal };
        const copy = withToolContext(options, attempt, "abortSignal") as Record<PropertyKey, unknown> | undefined;
        if (options === undefined && signal === undefined) {
          expect(copy).toBeUndefined(); // none stay none
          return;
        }
        if (copy === undefined) throw new Error("expected a copy");
        expect(copy).not.toBe(options);
        const own = options === undefined ? [] : Object.keys(options).filter((key) => key !== "abortSignal");
        for (const key of own) expect(view(copy).values[key]).toBe((options as Record<string, unknown>)[key]);
        expect(view(copy).ownProto).toBe(options === undefined ? undefined : Object.getOwnPropertyDescriptor(options, "__proto__")?.value);
        expect(copy[CONTEXT]).toBe(attempt);
        expect(Object.getPrototypeOf(copy)).toBe(Object.prototype);
        if (signal !== undefined) {
          expect(Object.hasOwn(copy, "abortSignal")).toBe(true);
          expect(copy.abortSignal).toBe(signal);
        } else {
          expect(Object.hasOwn(copy, "abortSignal")).toBe(options !== undefined && Object.hasOwn(options, "abortSignal"));
          expect(copy.abortSignal).toBe((options as { abortSignal?: unknown }).abortSignal);
        }
        if (options !== undefined) expect({ ...options }).toEqual(before); // the host's object is left as it is
      });
    }
  }
});
