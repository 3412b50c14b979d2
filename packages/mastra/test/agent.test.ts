import { Agent } from "@mastra/core/agent";
import { Mastra } from "@mastra/core/mastra";
import { RequestContext } from "@mastra/core/request-context";
import { InMemoryStore } from "@mastra/core/storage";
import { createTool } from "@mastra/core/tools";
import { InMemoryIdempotencyStore, RetryReflectPlugin } from "@retry-reflect/core";
import { createFakeClock, type FakeClock } from "@retry-reflect/core/testing";
import { MockLanguageModelV3 } from "ai/test";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import {
  callTools,
  drive,
  errorText,
  recordEvents,
  reply,
  scriptedModel,
  toolOutputsSeen,
  toolsOffered,
} from "../../ai-sdk/test/helpers.js";
import { availableTools, getToolContext, withRetryReflect } from "../src/index.js";

// Every test runs a real Mastra `Agent` (`agent.generate`) with the AI SDK's mock model; nothing leaves the process.
// The versions these tests pin (package.json devDependencies): @mastra/core 1.71.0, ai 6.0.325.

const REFLECTION =
  "The tool 'get_weather' failed with: \"Invalid units. Supported: celsius, fahrenheit\". Analyze what went wrong and provide corrected arguments.";

function weatherTool(calls: unknown[]) {
  return createTool({
    id: "get_weather",
    description: "Current weather of a city.",
    inputSchema: z.object({ city: z.string(), units: z.string() }),
    execute: async ({ city, units }) => {
      calls.push({ city, units });
      if (units !== "celsius" && units !== "fahrenheit") throw new Error("Invalid units. Supported: celsius, fahrenheit");
      return { temperature: 22, condition: "sunny" };
    },
  });
}

function agentWith(model: ReturnType<typeof scriptedModel>, tools: Record<string, object>): Agent {
  return new Agent({ id: "assistant", name: "assistant", instructions: "Use the tools.", model, tools: tools as never });
}

/** `agent.generate` on the fake clock. */
function generate(clock: FakeClock, agent: Agent, prompt: string, options: Record<string, unknown> = {}) {
  return drive(clock, agent.generate(prompt, { maxSteps: 5, ...options }));
}

describe("a Mastra agent (agent.generate, a mock model) running tools made with createTool", () => {
  it("shows the model the reflection as the tool's error; its corrected call succeeds", async () => {
    const clock = createFakeClock();
    const plugin = RetryReflectPlugin.create({ clock });
    const calls: unknown[] = [];
    const model = scriptedModel(
      callTools({ name: "get_weather", input: { city: "nyc", units: "kelvin" }, id: "call_1" }),
      callTools({ name: "get_weather", input: { city: "NYC", units: "celsius" }, id: "call_2" }),
      reply("It is 22 °C and sunny in NYC."),
    );

    const result = await generate(
      clock,
      agentWith(model, withRetryReflect({ get_weather: weatherTool(calls) }, plugin)),
      "Weather in NYC?",
    );

    expect(result.text).toBe("It is 22 °C and sunny in NYC.");
    expect(calls).toEqual([
      { city: "nyc", units: "kelvin" },
      { city: "NYC", units: "celsius" },
    ]);
    const seen = toolOutputsSeen(model.doGenerateCalls[1]);
    expect(seen).toHaveLength(1);
    expect(seen[0]).toMatchObject({ toolName: "get_weather", toolCallId: "call_1" });
    expect(errorText(seen[0])).toBe(
      `${REFLECTION}\n\n{"error_code":"INVALID_ARGUMENTS","message":"Invalid units. Supported: celsius, fahrenheit","recoverable":true,"suggested_action":"Correct the arguments named in the error and call the tool again.","attempt":1,"max_retries":3}`,
    );
    expect(toolOutputsSeen(model.doGenerateCalls[2])).toMatchObject([
      { toolName: "get_weather", toolCallId: "call_2", output: { type: "json", value: { temperature: 22, condition: "sunny" } } },
    ]);
  });

  it("retries a 503 in place after the backoff, with no extra model step", async () => {
    const clock = createFakeClock();
    const recorder = recordEvents();
    const plugin = RetryReflectPlugin.create({ clock, observers: [recorder] });
    let runs = 0;
    const searchDocs = createTool({
      id: "search_docs",
      description: "Searches the docs.",
      inputSchema: z.object({ query: z.string() }),
      execute: async ({ query }) => {
        runs += 1;
        if (runs < 3) throw Object.assign(new Error("503 Service Unavailable"), { status: 503 });
        return [`result for ${query}`];
      },
    });
    const model = scriptedModel(callTools({ name: "search_docs", input: { query: "retry" }, id: "call_1" }), reply("Found it."));

    const result = await generate(clock, agentWith(model, withRetryReflect({ search_docs: searchDocs }, plugin)), "search");

    expect(result.text).toBe("Found it.");
    expect(runs).toBe(3);
    expect(model.doGenerateCalls).toHaveLength(2);
    expect(toolOutputsSeen(model.doGenerateCalls[1])).toMatchObject([
      { toolName: "search_docs", toolCallId: "call_1", output: { type: "json", value: ["result for retry"] } },
    ]);
    expect(clock.sleeps).toEqual([500, 1000]);
    expect(recorder.events.filter((event) => event.type === "retry").map((event) => event.fields)).toMatchObject([
      { attempt: 1, mode: "in_place", error_code: "TRANSIENT" },
      { attempt: 2, mode: "in_place", error_code: "TRANSIENT" },
    ]);
  });

  function brokenInventory(): { tool: ReturnType<typeof createTool>; runs: () => number } {
    let runs = 0;
    const tool = createTool({
      id: "inventory",
      description: "Stock levels.",
      inputSchema: z.object({ sku: z.string() }),
      execute: async () => {
        runs += 1;
        throw Object.assign(new Error("503 Service Unavailable"), { status: 503 });
      },
    });
    return { tool, runs: () => runs };
  }
  const breakerOptions = { maxRetries: 0, circuitBreakerThreshold: 1, circuitBreakerResetMs: 60_000 };
  const inventoryCall = (id: string) =>
    scriptedModel(callTools({ name: "inventory", input: { sku: "a" }, id }), reply("Inventory is down."));

  it("turns the next run's call away at once while the circuit is open: not run, the model told the tool is temporarily unavailable", async () => {
    const clock = createFakeClock();
    const plugin = RetryReflectPlugin.create({ clock, ...breakerOptions });
    const inventory = brokenInventory();
    const tools = withRetryReflect({ inventory: inventory.tool }, plugin);
    await generate(clock, agentWith(inventoryCall("call_1"), tools), "stock?"); // trips the circuit
    expect(plugin.circuitState("inventory")).toBe("open");

    const model = inventoryCall("call_2");
    const before = clock.now();
    const result = await generate(clock, agentWith(model, tools), "stock?");

    expect(result.text).toBe("Inventory is down.");
    expect(inventory.runs()).toBe(1); // refused by the open circuit
    expect(clock.now()).toBe(before); // 60 s from its probe, beyond the call's patience: no wait
    const refusal = errorText(toolOutputsSeen(model.doGenerateCalls[1])[0]);
    expect(refusal).toMatch(/The tool 'inventory' is temporarily unavailable.*about 60 s: call it again then with the same arguments/);
    expect(refusal).not.toMatch(/do not call/i);
    expect(refusal).toContain('"error_code":"CIRCUIT_OPEN"');
    expect(refusal).toContain('"recoverable":true');
    expect(refusal).toContain('"retry_after_ms":60000');
  });

  it("hides a tool whose circuit is open with availableTools in prepareStep, and offers it again once half-open", async () => {
    const clock = createFakeClock();
    const plugin = RetryReflectPlugin.create({ clock, ...breakerOptions });
    const inventory = brokenInventory();
    const tools = withRetryReflect({ inventory: inventory.tool }, plugin);
    const prepareStep = () => ({ activeTools: availableTools(plugin, tools) });
    await generate(clock, agentWith(inventoryCall("call_1"), tools), "stock?", { prepareStep }); // trips the circuit

    const hidden = inventoryCall("call_2");
    const result = await generate(clock, agentWith(hidden, tools), "stock?", { prepareStep });

    expect(result.text).toBe("Inventory is down.");
    expect(toolsOffered(hidden.doGenerateCalls[0])).toEqual([]); // hidden while open
    expect(inventory.runs()).toBe(1);
    // A model that calls the hidden tool anyway gets Mastra's own text, and the run goes on.
    expect(errorText(toolOutputsSeen(hidden.doGenerateCalls[1])[0])).toContain('Tool "inventory" not found');

    await clock.advance(60_000);
    const probe = inventoryCall("call_3");
    await generate(clock, agentWith(probe, tools), "stock?", { prepareStep });
    expect(toolsOffered(probe.doGenerateCalls[0])).toEqual(["inventory"]); // half-open: offered for its probe
    expect(inventory.runs()).toBe(2);
  });

  it("replays a write across two runs of one tenant sharing a store, and runs it for another tenant", async () => {
    const clock = createFakeClock();
    const store = new InMemoryIdempotencyStore({ clock });
    const plugin = RetryReflectPlugin.create({ clock, idempotency: { store } });
    const sent: unknown[] = [];
    const keys: Array<string | undefined> = [];
    const callIds: Array<string | undefined> = [];
    const sendEmail = createTool({
      id: "send_email",
      description: "Sends an email.",
      inputSchema: z.object({ to: z.string(), body: z.string() }),
      execute: async ({ to, body }, context) => {
        keys.push(getToolContext(context)?.idempotencyKey);
        callIds.push(getToolContext(context)?.callId);
        sent.push({ to, body });
        return { sent: true };
      },
    });
    const tools = withRetryReflect({ send_email: sendEmail }, plugin, {
      toolEffects: { send_email: "write" },
      // The same logical call in two runs (the same tool-call id), one replay per tenant.
      scope: ({ callId }) => `conversation/${callId}`,
      namespace: ({ context }) => String(context?.requestContext?.get("tenant")),
    });
    const call = callTools({ name: "send_email", input: { to: "ops@example.com", body: "hi" }, id: "call_1" });
    const tenant = (id: string) => new RequestContext([["tenant", id]]);

    for (const requestContext of [tenant("a"), tenant("a"), tenant("b")]) {
      const model = scriptedModel(call, reply("Sent."));
      const result = await generate(clock, agentWith(model, tools), "email ops", { requestContext });
      expect(result.text).toBe("Sent.");
      expect(toolOutputsSeen(model.doGenerateCalls[1])).toMatchObject([{ output: { type: "json", value: { sent: true } } }]);
    }

    expect(sent).toHaveLength(2); // tenant a once (its second run replayed), tenant b once
    expect(keys).toHaveLength(2);
    expect(keys[0]).toEqual(expect.any(String));
    expect(keys[1]).not.toBe(keys[0]);
    expect(callIds).toEqual(["call_1", "call_1"]);
  });

  it("keeps a transforming input schema working under a provider's schema compat layer (Mastra validates it once)", async () => {
    // A model Mastra applies its OpenAI schema compat layer for: its builder validates the input and
    // marks that context object; its Tool.execute skips validating again only for that very object.
    const clock = createFakeClock();
    const plugin = RetryReflectPlugin.create({ clock });
    const seen: unknown[] = [];
    const lookup = createTool({
      id: "lookup",
      description: "Looks an order up.",
      inputSchema: z.object({ order: z.string().transform((text) => Number(text)) }),
      execute: async ({ order }) => {
        seen.push(order);
        return { order };
      },
    });
    const turns = [callTools({ name: "lookup", input: { order: "42" }, id: "call_1" }), reply("Found it.")];
    let turn = 0;
    const model = new MockLanguageModelV3({
      provider: "openai.chat",
      modelId: "gpt-4o-mini",
      doGenerate: async () => turns[turn++] as never,
    });

    const result = await generate(clock, agentWith(model as never, withRetryReflect({ lookup }, plugin)), "order 42?");

    expect(result.text).toBe("Found it.");
    expect(seen).toEqual([42]);
    expect(toolOutputsSeen(model.doGenerateCalls[1])).toMatchObject([{ output: { type: "json", value: { order: 42 } } }]);
  });

  it("counts attempts per run by default: a second run starts again at attempt 1", async () => {
    const clock = createFakeClock();
    const recorder = recordEvents();
    const plugin = RetryReflectPlugin.create({ clock, observers: [recorder] });
    const tools = withRetryReflect({ get_weather: weatherTool([]) }, plugin);
    const bad = (id: string) => callTools({ name: "get_weather", input: { city: "x", units: "kelvin" }, id });

    const first = scriptedModel(bad("call_1"), bad("call_2"), reply("Gave up."));
    await generate(clock, agentWith(first, tools), "weather");
    const second = scriptedModel(bad("call_3"), reply("Gave up."));
    await generate(clock, agentWith(second, tools), "weather");

    const attempts = recorder.events.flatMap((event) =>
      event.type === "retry" && event.fields.mode === "reflect" ? [event.fields.attempt] : [],
    );
    expect(attempts).toEqual([1, 2, 1]);
    expect(errorText(toolOutputsSeen(second.doGenerateCalls[1])[0])).toContain('"attempt":1');
  });

  it("leaves approvals untouched: a tool that requires approval suspends the run before it runs", async () => {
    const clock = createFakeClock();
    const plugin = RetryReflectPlugin.create({ clock });
    let runs = 0;
    const deleteFile = createTool({
      id: "delete_file",
      description: "Deletes a file.",
      inputSchema: z.object({ path: z.string() }),
      requireApproval: true,
      execute: async () => {
        runs += 1;
        return { deleted: true };
      },
    });
    const tools = withRetryReflect({ delete_file: deleteFile }, plugin);
    expect(tools.delete_file.requireApproval).toBe(true);
    const model = scriptedModel(callTools({ name: "delete_file", input: { path: "/tmp/a" }, id: "call_1" }), reply("Deleted."));

    const result = await generate(clock, agentWith(model, tools), "delete it");

    expect(runs).toBe(0);
    expect(result.finishReason).toBe("suspended");
    expect(model.doGenerateCalls).toHaveLength(1);
  });

  it("an approved call runs under the plugin: approveToolCallGenerate resumes it, and its 503 is retried in place", async () => {
    const clock = createFakeClock();
    const recorder = recordEvents();
    const plugin = RetryReflectPlugin.create({ clock, observers: [recorder] });
    let runs = 0;
    const deleteFile = createTool({
      id: "delete_file",
      description: "Deletes a file.",
      inputSchema: z.object({ path: z.string() }),
      requireApproval: true,
      execute: async () => {
        runs += 1;
        if (runs === 1) throw Object.assign(new Error("503 Service Unavailable"), { status: 503 });
        return { deleted: true };
      },
    });
    const model = scriptedModel(callTools({ name: "delete_file", input: { path: "/tmp/a" }, id: "call_1" }), reply("Deleted."));
    // Resuming a suspended run needs its snapshot: the agent is registered with a Mastra that has storage.
    const mastra = new Mastra({
      agents: { assistant: agentWith(model, withRetryReflect({ delete_file: deleteFile }, plugin)) },
      storage: new InMemoryStore(),
      logger: false,
    });
    const agent = mastra.getAgent("assistant");

    const suspended = await generate(clock, agent, "delete it");
    expect(suspended.finishReason).toBe("suspended");
    expect(suspended.suspendPayload).toMatchObject({ toolCallId: "call_1", toolName: "delete_file" });
    expect(runs).toBe(0);

    const result = await drive(clock, agent.approveToolCallGenerate({ runId: suspended.runId as string, toolCallId: "call_1" }));

    expect(result.text).toBe("Deleted.");
    expect(runs).toBe(2); // the approved call failed with a 503 and was retried in place
    expect(clock.sleeps).toEqual([500]);
    expect(recorder.types()).toEqual(["retry", "retry_succeeded"]);
    expect(toolOutputsSeen(model.doGenerateCalls[1])).toEqual([
      { toolName: "delete_file", toolCallId: "call_1", output: { type: "json", value: { deleted: true } } },
    ]);
  });

  it("aborts a backoff when the run's abortSignal aborts; the tool ran once", async () => {
    const clock = createFakeClock();
    const plugin = RetryReflectPlugin.create({ clock, initialBackoffMs: 30_000, maxBackoffMs: 30_000 });
    let runs = 0;
    const controller = new AbortController();
    const flaky = createTool({
      id: "flaky",
      description: "Flaky.",
      inputSchema: z.object({}),
      execute: async () => {
        runs += 1;
        queueMicrotask(() => controller.abort(new Error("user cancelled")));
        throw Object.assign(new Error("503 Service Unavailable"), { status: 503 });
      },
    });
    const model = scriptedModel(callTools({ name: "flaky", input: {}, id: "call_1" }), reply("unreachable"));

    const outcome = await generate(clock, agentWith(model, withRetryReflect({ flaky }, plugin)), "go", {
      abortSignal: controller.signal,
    }).then(
      (result) => ({ finishReason: result.finishReason }),
      (error: unknown) => ({ error }),
    );

    expect(runs).toBe(1);
    expect(clock.now()).toBe(0); // the 30 s backoff was never slept through
    expect(model.doGenerateCalls).toHaveLength(1);
    // Mastra ends the run with the call left incomplete (its tool-call step sees the aborted signal).
    expect(outcome).toEqual({ finishReason: "tool-calls" });
  });
});
