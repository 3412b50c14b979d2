import { InvalidOptionError, RetryReflectPlugin } from "@retry-reflect/core";
import { createFakeClock } from "@retry-reflect/core/testing";
import { generateText, stepCountIs, type ToolSet, tool } from "ai";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { availableTools, RetryReflectToolError, withRetryReflect } from "../src/index.js";
import { callTools, drive, errorText, recordEvents, reply, scriptedModel, toolOutputsSeen } from "./helpers.js";

const noop = tool({ description: "Does nothing.", inputSchema: z.object({}), execute: async () => "ok" });

describe("invalid inputs", () => {
  it("fail at once with InvalidOptionError, naming the option and the value", () => {
    const plugin = RetryReflectPlugin.create();
    const expectInvalid = (make: () => unknown, pattern: RegExp) => {
      expect(make).toThrow(InvalidOptionError);
      expect(make).toThrow(pattern);
    };
    expectInvalid(() => withRetryReflect(null as never, plugin), /`tools`.*null/);
    expectInvalid(() => withRetryReflect([noop] as never, plugin), /`tools`.*an array/);
    expectInvalid(() => withRetryReflect({ noop: "x" } as never, plugin), /`tools\.noop`.*"x"/);
    expectInvalid(() => withRetryReflect({ noop: { execute: 5 } } as never, plugin), /`tools\.noop\.execute`.*5/);
    expectInvalid(() => withRetryReflect({ noop }, 42 as never), /`pluginOrOptions`.*42/);
    expectInvalid(() => withRetryReflect({ noop }, undefined as never), /`pluginOrOptions`.*undefined/);
    expectInvalid(() => withRetryReflect({ noop }, { maxRetries: -1 }), /`maxRetries`.*-1/);
    expectInvalid(() => withRetryReflect({ noop }, plugin, { scope: "" }), /`scope`.*""/);
    expectInvalid(() => withRetryReflect({ noop }, plugin, { scope: 3 as never }), /`scope`.*3/);
    expectInvalid(() => withRetryReflect({ noop }, plugin, { toolEffects: { noop: "delete" as never } }), /`toolEffects\.noop`.*"delete"/);
    expectInvalid(() => withRetryReflect({ noop }, plugin, { toolEffects: ["write"] as never }), /`toolEffects`.*an array/);
    expectInvalid(
      () => withRetryReflect({ noop }, plugin, { toolEffect: {} } as never),
      /`toolEffect`.*adapter option \(one of scope, namespace, toolEffects, trustAnnotations\)/,
    );
    expectInvalid(() => withRetryReflect({ noop }, plugin, "run-1" as never), /`adapterOptions`.*"run-1"/);
    expectInvalid(() => availableTools({} as never, { noop }), /`plugin`.*object/);
    expectInvalid(() => availableTools(plugin, null as never), /`tools`.*null/);
  });
});

describe("the wrapped ToolSet", () => {
  it("keeps every tool's own properties, replaces `execute` only, and passes tools without execute through unchanged", () => {
    const plugin = RetryReflectPlugin.create();
    const clientSide = tool({ description: "Asks the user to confirm.", inputSchema: z.object({ question: z.string() }) });
    const tools = { noop, confirm: clientSide } satisfies ToolSet;
    const wrapped = withRetryReflect(tools, plugin);
    expect(Object.keys(wrapped)).toEqual(["noop", "confirm"]);
    expect(wrapped.confirm).toBe(clientSide);
    expect(wrapped.noop).not.toBe(noop);
    expect(wrapped.noop.description).toBe("Does nothing.");
    expect(wrapped.noop.inputSchema).toBe(noop.inputSchema);
    expect(wrapped.noop.execute).not.toBe(noop.execute);
    expect(tools.noop.execute).toBe(noop.execute); // the input is not changed
  });

  it("wrapping a wrapped ToolSet again wraps the originals: retry layers never stack", async () => {
    const clock = createFakeClock();
    // No patience: a transient failure gets exactly `maxRetries` in-place retries.
    const plugin = RetryReflectPlugin.create({ clock, maxRetries: 1, patienceMs: 0 });
    let runs = 0;
    const flaky = tool({
      inputSchema: z.object({}),
      execute: async (): Promise<string> => {
        runs += 1;
        throw Object.assign(new Error("HTTP 503"), { status: 503 });
      },
    });
    const twice = withRetryReflect(withRetryReflect({ flaky }, plugin), plugin);
    const model = scriptedModel(callTools({ name: "flaky", input: {}, id: "c1" }), reply("down"));
    await drive(clock, generateText({ model, tools: twice, stopWhen: stepCountIs(3), prompt: "go" }));
    expect(runs).toBe(2); // 1 + maxRetries, not (1 + maxRetries)²
  });

  it("leaves schema failures to the AI SDK: the tool does not run and the plugin sees nothing", async () => {
    const recorder = recordEvents();
    const plugin = RetryReflectPlugin.create({ observers: [recorder] });
    let runs = 0;
    const getWeather = tool({
      inputSchema: z.object({ city: z.string(), units: z.enum(["celsius", "fahrenheit"]) }),
      execute: async () => {
        runs += 1;
        return "sunny";
      },
    });
    const model = scriptedModel(callTools({ name: "get_weather", input: { city: "nyc", units: "kelvin" }, id: "c1" }), reply("?"));
    const result = await generateText({
      model,
      tools: withRetryReflect({ get_weather: getWeather }, plugin),
      stopWhen: stepCountIs(3),
      prompt: "?",
    });
    expect(runs).toBe(0);
    expect(recorder.events).toEqual([]);
    const part = result.steps[0]?.content.find((each) => each.type === "tool-error");
    expect(part?.type === "tool-error" && RetryReflectToolError.isInstance(part.error)).toBe(false);
    const [seen] = toolOutputsSeen(model.doGenerateCalls[1]);
    expect(seen?.output).toMatchObject({ type: "error-text" });
    expect(errorText(seen)).toMatch(/^Invalid input for tool get_weather/);
  });

  it("passes an excluded tool's own error to the AI SDK untouched", async () => {
    const plugin = RetryReflectPlugin.create({ excludeTools: ["exit_loop"] });
    const failure = new Error("cannot exit yet");
    const exitLoop = tool({
      inputSchema: z.object({}),
      execute: async (): Promise<string> => {
        throw failure;
      },
    });
    const model = scriptedModel(callTools({ name: "exit_loop", input: {}, id: "c1" }), reply("ok"));
    const result = await generateText({
      model,
      tools: withRetryReflect({ exit_loop: exitLoop }, plugin),
      stopWhen: stepCountIs(3),
      prompt: "?",
    });
    const part = result.steps[0]?.content.find((each) => each.type === "tool-error");
    expect(part?.type === "tool-error" ? part.error : undefined).toBe(failure);
    expect(toolOutputsSeen(model.doGenerateCalls[1])).toEqual([
      { toolName: "exit_loop", toolCallId: "c1", output: { type: "error-text", value: "cannot exit yet" } },
    ]);
  });

  it("treats a returned error result (the structured shape, MCP's isError) as a failure", async () => {
    const plugin = RetryReflectPlugin.create();
    const lookup = tool({
      inputSchema: z.object({ id: z.string() }),
      execute: async () => ({ isError: true, content: [{ type: "text", text: "no such record: r9" }] }),
    });
    const model = scriptedModel(callTools({ name: "lookup", input: { id: "r9" }, id: "c1" }), reply("?"));
    await generateText({ model, tools: withRetryReflect({ lookup }, plugin), stopWhen: stepCountIs(3), prompt: "?" });
    const [seen] = toolOutputsSeen(model.doGenerateCalls[1]);
    expect(seen?.output).toMatchObject({ type: "error-text" });
    expect(errorText(seen)).toContain("The tool 'lookup' failed with: \"no such record: r9\"");
  });

  it("runs a streaming tool (an async iterable execute) to its final value", async () => {
    const plugin = RetryReflectPlugin.create();
    const progress = tool({
      inputSchema: z.object({}),
      execute: async function* () {
        yield "working";
        yield "done";
      },
    });
    const model = scriptedModel(callTools({ name: "progress", input: {}, id: "c1" }), reply("ok"));
    await generateText({ model, tools: withRetryReflect({ progress }, plugin), stopWhen: stepCountIs(3), prompt: "?" });
    expect(toolOutputsSeen(model.doGenerateCalls[1])).toEqual([
      { toolName: "progress", toolCallId: "c1", output: { type: "text", value: "done" } },
    ]);
  });
});

describe("toolEffects is a map of tool names, nothing more", () => {
  it("a tool named toString gets the default effect, not Object.prototype's member", async () => {
    const effects: unknown[] = [];
    const plugin = RetryReflectPlugin.create({ observers: [{ onCallStart: (call) => void effects.push(call.effect) }] });
    const tools = withRetryReflect({ toString: noop, send: noop }, plugin, { toolEffects: { send: "idempotent" } });
    await (tools.toString.execute as (input: unknown, options: unknown) => Promise<unknown>)({}, { toolCallId: "c1", messages: [] });
    await (tools.send.execute as (input: unknown, options: unknown) => Promise<unknown>)({}, { toolCallId: "c2", messages: [] });
    expect(effects).toEqual(["read", "idempotent"]);
  });
});
