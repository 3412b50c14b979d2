import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { type RetryReflectOptions, RetryReflectPlugin, type ToolCall, type ToolContext } from "../src/index.js";
import { createFakeClock, type FakeClock } from "../src/testing.js";

// The caller's abort ends a call at once on every path (Part 4): the tool running (under the
// default limit, an explicit one, or none), the backoff gate, the wait before an in-place retry,
// a write's join of the same write in flight. The tools here ignore their signal, as many do: the
// call must not wait for them. "At once" on the fake clock: without moving time.

const hangs = (): Promise<never> => new Promise<never>(() => {});
const unavailable = (): never => {
  throw Object.assign(new Error("HTTP 503 Service Unavailable"), { status: 503 });
};

/** Settles `promise` as a value to compare: "pending" if it has not settled after a few turns of the event loop. */
async function settledNow(promise: Promise<unknown>): Promise<string> {
  let state = "pending";
  promise.then(
    () => (state = "resolved"),
    (error: unknown) => (state = `rejected: ${(error as Error).message}`),
  );
  for (let turn = 0; turn < 20; turn++) await new Promise<void>((resolve) => setImmediate(resolve));
  return state;
}

interface Path {
  readonly name: string;
  readonly options?: RetryReflectOptions;
  readonly call?: Partial<ToolCall<Record<string, unknown>>>;
  /** Brings the call to the place where it is aborted; `start` starts it. */
  readonly reach: (
    clock: FakeClock,
    start: (tool: (args: unknown, context: ToolContext) => unknown) => Promise<unknown>,
  ) => Promise<{ readonly call: Promise<unknown> }>;
}

const paths: Path[] = [
  {
    name: "a healthy read running under the default limit",
    reach: async (clock, start) => {
      const call = start(hangs);
      await clock.advance(1000);
      return { call };
    },
  },
  {
    name: "a read running under an explicit attemptTimeoutMs",
    options: { attemptTimeoutMs: 10_000 },
    reach: async (clock, start) => {
      const call = start(hangs);
      await clock.advance(1000);
      return { call };
    },
  },
  {
    name: "a read running without a limit (attemptTimeoutMs: 0)",
    options: { attemptTimeoutMs: 0 },
    reach: async (clock, start) => {
      const call = start(hangs);
      await clock.advance(1000);
      return { call };
    },
  },
  {
    name: "a read running while observers follow calls",
    options: { observers: [{ onCallStart: () => {}, onEvent: () => {} }] },
    reach: async (clock, start) => {
      const call = start(hangs);
      await clock.advance(1000);
      return { call };
    },
  },
  {
    name: "a keyed write running",
    options: { toolEffects: { search: "write" } },
    call: { args: { idempotency_key: "k-1" } },
    reach: async (clock, start) => {
      const call = start(hangs);
      await clock.advance(1000);
      return { call };
    },
  },
  {
    name: "an in-place retry running, after a 503",
    reach: async (clock, start) => {
      let runs = 0;
      const call = start(() => (++runs === 1 ? unavailable() : hangs()));
      await clock.advance(600); // the 500 ms backoff, then the second attempt runs
      return { call };
    },
  },
  {
    name: "the wait before an in-place retry",
    reach: async (clock, start) => {
      const call = start(unavailable);
      await clock.advance(100); // within the 500 ms backoff
      return { call };
    },
  },
  {
    name: "the backoff gate of a corrected call",
    reach: async (clock, start) => {
      const first = start(() => {
        throw new TypeError("units: expected one of celsius, fahrenheit; received kelvin");
      });
      await clock.advance(0);
      await first; // reflected: the corrected call waits out the backoff at the gate
      const call = start(hangs);
      await clock.advance(100);
      return { call };
    },
  },
];

describe("the caller's abort ends a call at once, whatever the tool does", () => {
  for (const path of paths) {
    it(path.name, async () => {
      const clock = createFakeClock();
      const plugin = RetryReflectPlugin.create({ clock, ...path.options });
      const controller = new AbortController();
      let runs = 0;
      const start = (tool: (args: unknown, context: ToolContext) => unknown) =>
        plugin.execute({ toolName: "search", args: {}, scope: "run-1", signal: controller.signal, ...path.call }, (args, context) => {
          runs++;
          return tool(args, context);
        });
      const { call } = await path.reach(clock, start);
      expect(runs).toBeGreaterThan(0);
      expect(await settledNow(call)).toBe("pending");
      controller.abort(new Error("the user left"));
      expect(await settledNow(call)).toBe("rejected: the user left");
    });
  }

  it("a write that joined the same write in flight here", async () => {
    const clock = createFakeClock();
    const plugin = RetryReflectPlugin.create({ clock, toolEffects: { pay: "write" } });
    const args = { amount: 5, idempotency_key: "k-1" };
    void plugin.execute({ toolName: "pay", args, scope: "a", namespace: "conversation-1" }, hangs);
    await clock.advance(0);
    const controller = new AbortController();
    const joined = plugin.execute({ toolName: "pay", args, scope: "b", namespace: "conversation-1", signal: controller.signal }, hangs);
    await clock.advance(1000);
    expect(await settledNow(joined)).toBe("pending");
    controller.abort(new Error("the user left"));
    expect(await settledNow(joined)).toBe("rejected: the user left");
  });

  it("the tool's own signal aborts with the caller's reason", async () => {
    const clock = createFakeClock();
    const plugin = RetryReflectPlugin.create({ clock });
    const controller = new AbortController();
    let seen: AbortSignal | undefined;
    const call = plugin.execute({ toolName: "search", args: {}, signal: controller.signal }, (_args, context) => {
      seen = context.signal;
      return hangs();
    });
    await clock.advance(0);
    controller.abort(new Error("the user left"));
    await expect(call).rejects.toThrow("the user left");
    expect(seen?.aborted).toBe(true);
    expect((seen?.reason as Error | undefined)?.message).toBe("the user left");
  });
});

describe("a pending call keeps the process alive until it settles (the built package, a real process)", () => {
  const dist = fileURLToPath(new URL("../dist/index.js", import.meta.url));

  function runScript(source: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
    return new Promise((resolve) => {
      execFile(process.execPath, ["--input-type=module", "-e", source], { timeout: 20_000 }, (error, stdout, stderr) =>
        resolve({ code: error === null ? 0 : ((error as { code?: number }).code ?? null), stdout, stderr }),
      );
    });
  }

  it("a script whose tool hangs past its attempt limit exits normally once the call settles", async () => {
    expect(existsSync(dist), "build the package first (npm test does)").toBe(true);
    const result = await runScript(`
      import { RetryReflectPlugin } from ${JSON.stringify(dist)};
      const plugin = RetryReflectPlugin.create({ attemptTimeoutMs: 200, maxRetries: 1, initialBackoffMs: 50, patienceMs: 0 });
      const outcome = await plugin.execute({ toolName: "search", args: {} }, () => new Promise(() => {}));
      console.log(outcome.status, outcome.error.code);
    `);
    // Two attempts cut off (the retry in place is the floor), then told as temporary: the call settles, the process ends.
    expect(result).toMatchObject({ code: 0, stdout: "reflect TIMEOUT\n" });
  });

  it("a script whose call waits out a backoff exits normally once the call settles", async () => {
    const result = await runScript(`
      import { RetryReflectPlugin } from ${JSON.stringify(dist)};
      const plugin = RetryReflectPlugin.create({ initialBackoffMs: 100 });
      let runs = 0;
      const outcome = await plugin.execute({ toolName: "search", args: {} }, () => {
        if (++runs < 3) throw Object.assign(new Error("HTTP 503"), { status: 503 });
        return "found";
      });
      console.log(outcome.status, outcome.value, runs);
    `);
    expect(result).toMatchObject({ code: 0, stdout: "success found 3\n" });
  });
});
