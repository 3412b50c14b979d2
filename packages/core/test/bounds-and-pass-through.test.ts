import { describe, expect, it } from "vitest";
import { runToolCall } from "../src/adapter.js";
import { RetryReflectPlugin } from "../src/index.js";
import { LruMap } from "../src/internal/lru-map.js";
import { createFakeClock } from "../src/testing.js";

describe("LruMap", () => {
  it("evicts the least recently set or touched entry, across many evictions and touches", () => {
    const map = new LruMap<number, number>(3);
    const reference: number[] = []; // keys, oldest first
    const set = (key: number) => {
      map.set(key, key);
      const at = reference.indexOf(key);
      if (at >= 0) reference.splice(at, 1);
      reference.push(key);
      if (reference.length > 3) reference.shift();
    };
    const touch = (key: number) => {
      const value = map.get(key);
      if (value === undefined) return;
      map.touch(key, value);
      reference.splice(reference.indexOf(key), 1);
      reference.push(key);
    };
    for (let step = 0; step < 5000; step++) {
      const key = (step * 7919) % 11;
      if (step % 3 === 0) touch(key);
      else set(key);
      if (step % 17 === 0) {
        map.delete(reference[0] as number);
        reference.shift();
      }
      expect([...map.keys()]).toEqual(reference);
    }
  });
});

describe("attempt counters", () => {
  it("are bounded across all scopes and tools by maxAttemptCounters", async () => {
    const plugin = RetryReflectPlugin.create({ clock: createFakeClock(), maxAttemptCounters: 100 });
    for (let index = 0; index < 1000; index++) {
      await plugin.execute({ toolName: `tool-${index}`, args: {}, scope: "one-run" }, () => {
        throw new Error("Invalid input");
      });
    }
    // The newest counters are kept: tool-999's next call is its attempt 2; tool-0 was forgotten.
    const clock = plugin.options.clock as ReturnType<typeof createFakeClock>;
    const recent = plugin.execute({ toolName: "tool-999", args: {}, scope: "one-run" }, () => "ok");
    await clock.runAll();
    expect((await recent).attempt).toBe(2);
    expect((await plugin.execute({ toolName: "tool-0", args: {}, scope: "one-run" }, () => "ok")).attempt).toBe(1);
  });
});

describe("call.passThrough", () => {
  it("rethrows control-flow errors untouched, without counting them or touching the breaker", async () => {
    const clock = createFakeClock();
    const events: string[] = [];
    for (const observed of [false, true]) {
      const plugin = RetryReflectPlugin.create({
        clock,
        circuitBreakerThreshold: 2,
        observers: observed ? [{ onEvent: (event) => events.push(event.type) }] : [],
      });
      class Interrupt extends Error {}
      const interrupt = new Interrupt("needs human approval");
      const call = { toolName: "t", args: {}, scope: "run", passThrough: (error: unknown) => error instanceof Interrupt };
      await expect(
        plugin.execute(call, () => {
          throw interrupt;
        }),
      ).rejects.toBe(interrupt);
      expect(plugin.circuits.size).toBe(0); // not even one failure counted
      expect(clock.sleeps).toEqual([]);
      expect((await plugin.execute(call, () => "ok")).attempt).toBe(1);
      // Other errors are still failures.
      expect(
        (
          await plugin.execute(call, () => {
            throw new Error("boom");
          })
        ).status,
      ).toBe("reflect");
    }
    expect(events).toEqual(["retry"]); // only the ordinary failure, seen by the observed plugin
  });
});

describe("host calls by adapters (@retry-reflect/core/adapter)", () => {
  it("a host call's success resets a closed circuit's consecutive failures", async () => {
    const clock = createFakeClock();
    const plugin = RetryReflectPlugin.create({ clock, circuitBreakerThreshold: 2, maxRetries: 0 });
    const down = () => {
      throw new Error("upstream exploded");
    };
    await plugin.execute({ toolName: "t", args: {}, scope: "a" }, down);
    plugin.resetScope("a");
    expect(await runToolCall(plugin, { toolName: "t", args: {}, run: () => "ok" })).toEqual({
      status: "success",
      value: "ok",
      attempt: 1,
      replayed: false,
    });
    await plugin.execute({ toolName: "t", args: {}, scope: "b" }, down);
    expect(plugin.circuitState("t")).toBe("closed"); // 1 failure, a success, 1 failure: not 2 in a row
  });

  it("a host call's scope function is asked once per call, whichever stages need the scope", async () => {
    const scopes: string[] = [];
    const seen: string[] = [];
    const plugin = RetryReflectPlugin.create({
      maxRetries: 0,
      isFailure: (result, context) => {
        seen.push(context.scope);
        return result === "bad";
      },
    });
    const scope = () => {
      scopes.push(`run-${scopes.length + 1}`);
      return scopes.at(-1) as string;
    };
    const outcome = await runToolCall(plugin, { toolName: "t", args: {}, scope, run: () => "bad" });
    expect(outcome.status).toBe("failed");
    expect(scopes).toEqual(["run-1"]);
    expect(seen).toEqual(["run-1"]);
  });

  it("a host call's scope is asked once when the breaker key, the tracking scope and the guard all need it (a write)", async () => {
    const asked: string[] = [];
    const keys: string[] = [];
    const plugin = RetryReflectPlugin.create({
      toolEffects: { send: "write" },
      circuitBreakerKey: (call) => {
        keys.push(call.scope ?? "none");
        return `${call.toolName}:${call.scope}`;
      },
    });
    const scope = () => {
      asked.push("scope");
      return `run-${asked.length}`;
    };
    const namespace = () => {
      asked.push("namespace");
      return "tenant-1";
    };
    const call = { toolName: "send", args: { idempotency_key: "k-1" }, scope, namespace, run: () => "sent" };
    expect(await runToolCall(plugin, call)).toMatchObject({ status: "success", value: "sent", replayed: false });
    expect(asked).toEqual(["scope", "namespace"]);
    expect(keys).toEqual(["run-1"]);
    // The same key again, a new call: asked again, once, and replayed.
    expect(await runToolCall(plugin, { ...call })).toMatchObject({ status: "success", value: "sent", replayed: true });
    expect(asked).toEqual(["scope", "namespace", "scope", "namespace"]);
  });

  it("a direct host call's scope is asked once when the breaker key and its failure both need it", async () => {
    const asked: string[] = [];
    const plugin = RetryReflectPlugin.create({ circuitBreakerKey: (call) => `${call.toolName}:${call.scope}` });
    const scope = () => {
      asked.push("scope");
      return "run-1";
    };
    const outcome = await runToolCall(plugin, {
      toolName: "search",
      args: {},
      scope,
      run: () => {
        throw new Error("Invalid query");
      },
    });
    expect(outcome.status).toBe("reflect");
    expect(asked).toEqual(["scope"]);
  });

  it("a direct host call's scope is asked once when isFailure and the success after a parallel failure both need it", async () => {
    const asked: string[] = [];
    const plugin = RetryReflectPlugin.create({ isFailure: (result, context) => result === "bad" && context.scope !== "" });
    const scope = () => {
      asked.push("scope");
      return "run-1";
    };
    let release: (value: string) => void = () => {};
    const slow = runToolCall(plugin, { toolName: "t", args: {}, scope, run: () => new Promise<string>((resolve) => (release = resolve)) });
    // A parallel call of the same tool fails while the first runs: the first's success then clears its scope's counter.
    const failed = await runToolCall(plugin, { toolName: "t", args: {}, scope: "run-1", run: () => "bad" });
    expect(failed.status).not.toBe("success");
    release("ok");
    expect(await slow).toMatchObject({ status: "success", value: "ok" });
    expect(asked).toEqual(["scope"]);
  });

  it("observers that follow calls are told of a host call's start and end; `present` makes the host's result of every outcome", async () => {
    const seen: string[] = [];
    const plugin = RetryReflectPlugin.create({
      observers: [
        {
          onCallStart: (call) => void seen.push(`start ${call.toolName}`),
          onCallEnd: (call, end) => void seen.push(`end ${call.toolName} ${end.status}`),
        },
      ],
    });
    const present = (outcome: { status: string; value?: unknown }) => `presented ${outcome.status} ${String(outcome.value)}`;
    expect(await runToolCall(plugin, { toolName: "t", args: {}, run: () => "ok" }, present)).toBe("presented success ok");
    expect(await runToolCall(plugin, { toolName: "t", args: {}, run: () => "ok" })).toMatchObject({ status: "success", value: "ok" });
    expect(seen).toEqual(["start t", "end t success", "start t", "end t success"]);
  });
});

describe("observers of events alone", () => {
  it("see nothing of a healthy call, and a failure's events with its call", async () => {
    const clock = createFakeClock();
    const events: Array<{ type: string; tool: string | undefined; scope: string | undefined }> = [];
    const plugin = RetryReflectPlugin.create({
      clock,
      observers: [{ onEvent: (event) => void events.push({ type: event.type, tool: event.call?.toolName, scope: event.call?.scope }) }],
    });
    expect(await plugin.execute({ toolName: "search", args: {}, scope: "run-1" }, () => "ok")).toEqual({
      status: "success",
      value: "ok",
      attempt: 1,
      replayed: false,
    });
    expect(events).toEqual([]);
    const failed = await plugin.execute({ toolName: "search", args: {}, scope: "run-1" }, () => {
      throw new Error("Invalid query");
    });
    expect(failed.status).toBe("reflect");
    expect(events).toEqual([{ type: "retry", tool: "search", scope: "run-1" }]);
  });
});
