import { AIMessage, type BaseMessage, SystemMessage, type ToolMessage } from "@langchain/core/messages";
import { fakeModel } from "@langchain/core/testing";
import { tool } from "@langchain/core/tools";
import { InvalidOptionError, RetryReflectPlugin } from "@retry-reflect/core";
import { isolatedCircuitNote, openCircuitNote } from "@retry-reflect/core/adapter";
import { createFakeClock } from "@retry-reflect/core/testing";
import { createAgent } from "langchain";
import { describe, expect, it, vi } from "vitest";
import { z } from "zod";
import { withoutOpenCircuitTools } from "../src/hide-open-circuits.js";
import { type RetryReflectMiddlewareOptions, retryReflectMiddleware } from "../src/index.js";
import { callTools, drive } from "./helpers.js";

const NOTE_60S =
  "The tool 'broken_api' is temporarily unavailable (its circuit breaker opened after repeated failures), so it is not in your tools for now; it may be available again in about 60 s. Continue without it or tell the user.";
const NOTE_ISOLATED =
  "The tool 'broken_api' has been disabled by an operator, so it is not in your tools until it is re-enabled. Continue without it or tell the user it is unavailable.";

/** An agent over a broken tool and a healthy one, whose model records what it receives: its messages and the tools bound to it. */
function setup(adapter: RetryReflectMiddlewareOptions) {
  const clock = createFakeClock();
  const plugin = RetryReflectPlugin.create({ clock, circuitBreakerThreshold: 1, circuitBreakerResetMs: 60_000 });
  const state = { broken: true, toolCalls: 0 };
  const brokenApi = tool(
    async () => {
      state.toolCalls += 1;
      if (state.broken) throw new Error("upstream exploded");
      return "ok";
    },
    { name: "broken_api", description: "A remote API.", schema: z.object({ id: z.string() }) },
  );
  const search = tool(async () => "found", { name: "search", description: "Search.", schema: z.object({ q: z.string() }) });
  const model = fakeModel();
  const bound = vi.spyOn(model, "bindTools");
  const middleware = retryReflectMiddleware(plugin, adapter);
  const agent = createAgent({ model, tools: [brokenApi, search], systemPrompt: "You are helpful.", middleware: [middleware] });
  const run = async (content: string) =>
    (await drive(clock, agent.invoke({ messages: [{ role: "user", content }] }))).messages as BaseMessage[];
  /** Per model request so far: the names of the tools bound, and the system message's text ("" when none). */
  const requests = () =>
    model.calls.map((call, index) => ({
      tools: (bound.mock.calls[index]?.[0] ?? []).map((each) => (each as { name: string }).name),
      system: SystemMessage.isInstance(call.messages[0]) ? call.messages[0].text : "",
    }));
  return { clock, plugin, state, model, middleware, run, requests };
}

describe("hideOpenCircuitTools", () => {
  it("leaves an open circuit's tool out of the next model request with a note; after resetMs it is back and the probe closes it", async () => {
    const { clock, plugin, state, model, run, requests } = setup({ hideOpenCircuitTools: true });
    model
      .respond(callTools({ name: "broken_api", args: { id: "a" }, id: "call_1" }))
      .respond(new AIMessage("The API is down."))
      .respond(new AIMessage("Still down."));

    const first = await run("call the api");
    // The failure opened the circuit for 60 s: the model is told the tool is temporarily unavailable until then.
    expect((first[2] as ToolMessage).artifact).toMatchObject({ error_code: "TOOL_FAILED", recoverable: true, retry_after_ms: 60_000 });
    expect(String((first[2] as ToolMessage).content)).toMatch(/temporarily unavailable.*about 60 s/);
    expect(plugin.circuitState("broken_api")).toBe("open");
    expect(requests()).toEqual([
      { tools: ["broken_api", "search"], system: "You are helpful." },
      { tools: ["search"], system: `You are helpful.\n\n${NOTE_60S}` },
    ]);

    // The note says about how long is left: 45 s of the 60 s.
    await clock.advance(15_000);
    await run("again");
    expect(requests()[2]).toEqual({ tools: ["search"], system: `You are helpful.\n\n${NOTE_60S.replace("60 s", "45 s")}` });

    await clock.advance(45_000);
    expect(plugin.circuitState("broken_api")).toBe("half-open");
    state.broken = false;
    model.respond(callTools({ name: "broken_api", args: { id: "b" }, id: "call_2" })).respond(new AIMessage("ok now"));
    const probe = await run("try once more");
    expect((probe[2] as ToolMessage).content).toBe("ok");
    expect(state.toolCalls).toBe(2);
    expect(plugin.circuitState("broken_api")).toBe("closed");
    expect(requests().slice(3)).toEqual([
      { tools: ["broken_api", "search"], system: "You are helpful." }, // half-open: offered, for the probe
      { tools: ["broken_api", "search"], system: "You are helpful." },
    ]);
  });

  it("is off by default: the open circuit's tool stays in the request, with no note and no wrapModelCall hook", async () => {
    const { plugin, model, middleware, run, requests } = setup({});
    expect(middleware.wrapModelCall).toBeUndefined();
    model.respond(callTools({ name: "broken_api", args: { id: "a" }, id: "call_1" })).respond(new AIMessage("The API is down."));
    await run("call the api");
    expect(plugin.circuitState("broken_api")).toBe("open");
    expect(requests()).toEqual([
      { tools: ["broken_api", "search"], system: "You are helpful." },
      { tools: ["broken_api", "search"], system: "You are helpful." },
    ]);
    expect(retryReflectMiddleware(plugin, { hideOpenCircuitTools: false }).wrapModelCall).toBeUndefined();
  });

  it("hides a circuit isolated by an operator, saying so, until it is reset", async () => {
    const { plugin, model, run, requests } = setup({ hideOpenCircuitTools: true });
    plugin.circuits.isolate("broken_api");
    model.respond(new AIMessage("I cannot use it.")).respond(new AIMessage("Back."));
    await run("call the api");
    expect(requests()).toEqual([{ tools: ["search"], system: `You are helpful.\n\n${NOTE_ISOLATED}` }]);
    plugin.circuits.reset("broken_api");
    await run("again");
    expect(requests()[1]).toEqual({ tools: ["broken_api", "search"], system: "You are helpful." });
  });

  it("rejects a value that is not a boolean, naming the option and the value", () => {
    const plugin = RetryReflectPlugin.create();
    expect(() => retryReflectMiddleware(plugin, { hideOpenCircuitTools: "yes" as never })).toThrow(InvalidOptionError);
    expect(() => retryReflectMiddleware(plugin, { hideOpenCircuitTools: "yes" as never })).toThrow(/`hideOpenCircuitTools`.*"yes"/);
    expect(() => retryReflectMiddleware({ hideOpenCircuitTools: 1 as never })).toThrow(/`hideOpenCircuitTools`.*1/);
    expect(retryReflectMiddleware({ hideOpenCircuitTools: true }).wrapModelCall).toBeTypeOf("function");
  });
});

describe("withoutOpenCircuitTools", () => {
  const named = (name: string) => ({ name });
  const requestOf = (names: string[], extra: Record<string, unknown> = {}) => ({
    tools: names.map(named),
    systemMessage: new SystemMessage(""),
    ...extra,
  });

  it("returns the same request when no circuit of its tools is open (half-open counts as available)", async () => {
    const clock = createFakeClock();
    const plugin = RetryReflectPlugin.create({ clock, circuitBreakerResetMs: 1000 });
    const request = requestOf(["a", "b"]);
    expect(withoutOpenCircuitTools(plugin, request)).toBe(request);
    plugin.circuits.restore({ version: 1, breakers: { a: { state: "open", failures: 5, remainingMs: 1000 } } });
    expect(withoutOpenCircuitTools(plugin, request)).not.toBe(request);
    await clock.advance(1000);
    expect(plugin.circuitState("a")).toBe("half-open");
    expect(withoutOpenCircuitTools(plugin, request)).toBe(request);
  });

  it("names every hidden tool, one line each; an empty system message becomes the note; a tool forced by toolChoice stays", () => {
    const plugin = RetryReflectPlugin.create({ clock: createFakeClock(), circuitBreakerResetMs: 300_000 });
    plugin.circuits.restore({
      version: 1,
      breakers: { a: { state: "open", failures: 5, remainingMs: 150_000 }, c: { state: "isolated", failures: 0 } },
    });
    const hidden = withoutOpenCircuitTools(plugin, requestOf(["a", "b", "c"]));
    expect(hidden.tools).toEqual([named("b")]);
    expect(hidden.systemMessage.text).toBe(`${openCircuitNote("a", 150_000)}\n${isolatedCircuitNote("c")}`);
    expect(openCircuitNote("a", 150_000)).toContain("in about 3 min");
    expect(openCircuitNote("a", undefined)).toContain("it may be available again later.");

    const forced = withoutOpenCircuitTools(plugin, requestOf(["a", "b"], { toolChoice: { type: "function", function: { name: "a" } } }));
    expect(forced.tools).toEqual([named("a"), named("b")]);
  });

  it("keeps the blocks of a system message (cache control) and adds the note as a text block", () => {
    const plugin = RetryReflectPlugin.create();
    plugin.circuits.isolate("a");
    const systemMessage = new SystemMessage({ content: [{ type: "text", text: "Be brief.", cache_control: { type: "ephemeral" } }] });
    const hidden = withoutOpenCircuitTools(plugin, { tools: [named("a")], systemMessage });
    expect(hidden.systemMessage.content).toEqual([
      { type: "text", text: "Be brief.", cache_control: { type: "ephemeral" } },
      { type: "text", text: `\n\n${isolatedCircuitNote("a")}` },
    ]);
  });
});
