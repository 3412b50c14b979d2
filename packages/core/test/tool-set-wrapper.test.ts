import { describe, expect, it } from "vitest";
import type { ToolSetHost, ToolSetWrap } from "../src/adapter/tool-copy.js";
import { type HostToolCall, RetryReflectToolError, toolSetWrapper } from "../src/adapter.js";
import { InvalidOptionError, RetryReflectPlugin } from "../src/index.js";

// `toolSetWrapper(host)`: the `withRetryReflect` of an adapter over tools by name (the AI SDK's
// `ToolSet`, Mastra's tools), as a host describes its tools once.

interface Binding {
  readonly toolName: string;
  readonly tool: { execute: (input: unknown) => unknown };
  readonly scope: string;
}

class HostTool {
  constructor(readonly execute: ((input: unknown) => unknown) | undefined) {}
}

const KEY = Symbol("test.original-tool");

function hostOf(seen: ToolSetWrap<(call: unknown) => string>[] = []): ToolSetHost<Binding, unknown, (call: unknown) => string> {
  return {
    key: KEY,
    scopePrefix: "test",
    checkTools: (tools) => {
      if (typeof tools !== "object" || tools === null) throw new InvalidOptionError("tools", tools, "an object of tools");
    },
    bind: (toolName, tool, wrap) => {
      seen.push(wrap);
      if (typeof tool.execute !== "function") return undefined;
      return {
        toolName,
        tool: tool as unknown as Binding["tool"],
        scope: (wrap.options.scope as string | undefined) ?? wrap.fallbackScope,
      };
    },
    callOf: (binding, input): HostToolCall<unknown> => ({
      toolName: binding.toolName,
      args: input,
      scope: binding.scope,
      run: (args) => binding.tool.execute(args),
    }),
  };
}

const wrapper = toolSetWrapper<Record<string, object>, { scope?: string }, Binding, unknown, (call: unknown) => string>;

describe("toolSetWrapper", () => {
  it("wraps each tool with execute as a copy (prototype and own properties kept), keeps the others as given, leaves the originals alone", async () => {
    const plugin = RetryReflectPlugin.create({});
    const execute = async (input: unknown) => ({ echoed: input });
    const echo = Object.assign(new HostTool(execute), { description: "Echoes." });
    const clientSide = new HostTool(undefined);
    const wrapped = wrapper(hostOf())({ echo, clientSide }, plugin);

    expect(wrapped.clientSide).toBe(clientSide);
    expect(wrapped.echo).not.toBe(echo);
    expect(wrapped.echo).toBeInstanceOf(HostTool);
    expect((wrapped.echo as { description?: string }).description).toBe("Echoes.");
    expect(echo.execute).toBe(execute);
    await expect((wrapped.echo as HostTool).execute?.({ a: 1 })).resolves.toEqual({ echoed: { a: 1 } });
  });

  it("rejects a failure with a RetryReflectToolError holding the model's text", async () => {
    const plugin = RetryReflectPlugin.create({});
    const broken = new HostTool(() => {
      throw Object.assign(new Error("units must be celsius or fahrenheit"), { code: "INVALID_ARGUMENTS" });
    });
    const wrapped = wrapper(hostOf())({ broken }, plugin);
    const error: unknown = await Promise.resolve((wrapped.broken as HostTool).execute?.({ units: "kelvin" })).then(
      () => undefined,
      (thrown: unknown) => thrown,
    );
    expect(RetryReflectToolError.isInstance(error)).toBe(true);
    expect((error as Error).message).toContain("The tool 'broken' failed");
  });

  it("wrapping wrapped tools again wraps the originals: one plugin run per call, never two", async () => {
    const plugin = RetryReflectPlugin.create({});
    let runs = 0;
    const counted = new HostTool(() => ++runs);
    const make = wrapper(hostOf());
    const once = make({ counted }, plugin);
    const twice = make(once, plugin);
    expect((twice.counted as unknown as Record<symbol, unknown>)[KEY]).toBe(counted);
    await expect((twice.counted as HostTool).execute?.({})).resolves.toBe(1);
    expect(runs).toBe(1);
  });

  it("gives every tool of one wrap the same checked options and random scope, and each wrap its own", () => {
    const seen: ToolSetWrap<(call: unknown) => string>[] = [];
    const make = wrapper(hostOf(seen));
    const plugin = RetryReflectPlugin.create({});
    make({ a: new HostTool(() => 1), b: new HostTool(() => 2) }, plugin);
    make({ c: new HostTool(() => 3) }, plugin, { scope: "run-7" });
    expect(seen).toHaveLength(3);
    const [a, b, c] = seen as [ToolSetWrap<never>, ToolSetWrap<never>, ToolSetWrap<never>];
    expect(a).toBe(b);
    expect(a.fallbackScope).toMatch(/^test\/.+/);
    expect(c.fallbackScope).not.toBe(a.fallbackScope);
    expect(c.options.scope).toBe("run-7");
    expect(a.plugin).toBe(plugin);
  });

  it("checks the tools first, then the adapter options, then the plugin, each error naming its argument and value", () => {
    const make = wrapper(hostOf());
    expect(() => make(null as never, "no plugin" as never, { scope: "" })).toThrow(/tools/);
    expect(() => make({}, "no plugin" as never, { scope: "" })).toThrow(/scope/);
    expect(() => make({}, "no plugin" as never)).toThrow(/pluginOrOptions/);
    expect(() => make({}, { maxRetries: -1 })).toThrow(/maxRetries/);
    // Plugin options make a plugin of their own.
    expect(() => make({ a: new HostTool(() => 1) }, { maxRetries: 2 })).not.toThrow();
  });
});
