import { Agent, type RunContext, RunToolApprovalItem, run, setSensitiveDataLoggingEnabled, setTracingDisabled, tool } from "@openai/agents";
import { assistantMessage, functionCall, ScriptedModel } from "@openai/agents/testing";
import { InMemoryIdempotencyStore, RetryReflectPlugin } from "@retry-reflect/core";
import { createFakeClock, drive, recordEvents } from "@retry-reflect/core/testing";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { getToolContext, SDK_DEFAULT_ERROR_TEXT, withRetryReflect } from "../src/index.js";
import { WITHHELD_INPUT_MESSAGE } from "../src/rejected-input.js";

// Every test runs the SDK's real runner (`run`) with its own test model; nothing leaves the process.
setTracingDisabled(true);

// The versions these tests pin (package.json devDependencies): @openai/agents 0.20.0.

type Input = ScriptedModel["calls"][number]["request"]["input"];

/** The text the model was shown for the tool call `callId`, in the request of model call `index`. */
function outputSeen(model: ScriptedModel, index: number, callId: string): string {
  const input = model.calls[index]?.request.input as Input;
  const items = Array.isArray(input) ? input : [];
  for (const item of items) {
    const result = item as { type?: string; callId?: string; output?: { type?: string; text?: string } | string };
    if (result.type === "function_call_result" && result.callId === callId) {
      return typeof result.output === "string" ? result.output : (result.output?.text ?? "");
    }
  }
  throw new Error(`no output for ${callId} in model call ${index}`);
}

/** The tool names offered to the model in call `index`. */
function toolsOffered(model: ScriptedModel, index: number): string[] {
  return (model.calls[index]?.request.tools ?? []).map((offered) => (offered as { name: string }).name);
}

const http = (status: number, message: string) => Object.assign(new Error(message), { status });

/** A tool definition whose every call throws `error`; `runs()` counts its executions. */
function failing(name: string, error: () => Error) {
  let runs = 0;
  const definition = {
    name,
    description: `${name}, failing`,
    parameters: z.object({}),
    execute: async (): Promise<string> => {
      runs += 1;
      throw error();
    },
  };
  return { definition, runs: () => runs };
}

describe("withRetryReflect inside the OpenAI Agents SDK runner", () => {
  it("hands the model a reflection prompt as the tool's output when its arguments are wrong, and the corrected call succeeds", async () => {
    const clock = createFakeClock();
    const plugin = RetryReflectPlugin.create({ clock });
    const seen: unknown[] = [];
    const tools = withRetryReflect(
      [
        {
          name: "get_weather",
          description: "The weather in a city",
          parameters: z.object({ city: z.string() }),
          execute: async ({ city }: { city: string }) => {
            seen.push(city);
            if (city !== "Paris") throw http(404, `unknown city '${city}'`);
            return "sunny";
          },
        },
      ],
      plugin,
    );
    const model = new ScriptedModel([
      [functionCall("get_weather", { city: "Pariss" }, { callId: "c1" })],
      [functionCall("get_weather", { city: "Paris" }, { callId: "c2" })],
      [assistantMessage("It is sunny.")],
    ]);
    const result = await drive(clock, run(new Agent({ name: "a", instructions: "help", model, tools }), "weather?"));

    expect(result.finalOutput).toBe("It is sunny.");
    const text = outputSeen(model, 1, "c1");
    expect(text).toContain("The tool 'get_weather' failed");
    expect(text).toContain('"error_code"');
    expect(text).not.toBe(SDK_DEFAULT_ERROR_TEXT);
    expect(outputSeen(model, 2, "c2")).toBe("sunny");
    expect(seen).toEqual(["Pariss", "Paris"]);
  });

  it("retries a 503 in place after a backoff on the clock: the model sees only the result", async () => {
    const clock = createFakeClock();
    const recorder = recordEvents();
    const plugin = RetryReflectPlugin.create({ clock, observers: [recorder] });
    let runs = 0;
    const tools = withRetryReflect(
      [
        {
          name: "search",
          description: "Search",
          parameters: z.object({ q: z.string() }),
          execute: async () => {
            runs += 1;
            if (runs < 3) throw http(503, "HTTP 503 Service Unavailable");
            return "3 results";
          },
        },
      ],
      plugin,
    );
    const model = new ScriptedModel([[functionCall("search", { q: "x" }, { callId: "c1" })], [assistantMessage("done")]]);
    const result = await drive(clock, run(new Agent({ name: "a", instructions: "help", model, tools }), "go"));

    expect(result.finalOutput).toBe("done");
    expect(runs).toBe(3);
    expect(model.calls).toHaveLength(2);
    expect(outputSeen(model, 1, "c1")).toBe("3 results");
    expect(recorder.types()).toEqual(["retry", "retry", "retry_succeeded"]);
    expect(clock.sleeps).toHaveLength(2);
  });

  it("once the circuit opens, the next run's call is not run: the model is told the tool is temporarily unavailable", async () => {
    const clock = createFakeClock();
    const plugin = RetryReflectPlugin.create({ clock, circuitBreakerThreshold: 2, circuitBreakerResetMs: 60_000 }); // open for 60 s, beyond a call's patience
    const flaky = failing("flaky", () => new Error("upstream exploded"));
    const tools = withRetryReflect([flaky.definition], plugin);
    const first = new ScriptedModel([
      [functionCall("flaky", {}, { callId: "c1" })],
      [functionCall("flaky", {}, { callId: "c2" })],
      [assistantMessage("it is down")],
    ]);
    await drive(clock, run(new Agent({ name: "a", instructions: "help", model: first, tools }), "go", { maxTurns: 6 }));
    expect(plugin.circuitState("flaky")).toBe("open");
    expect(flaky.runs()).toBe(2);
    // The failure that opened the circuit: temporary, until the circuit's probe.
    expect(outputSeen(first, 2, "c2")).toMatch(/The tool 'flaky' is temporarily unavailable.*about 60 s/);

    const model = new ScriptedModel([[functionCall("flaky", {}, { callId: "d1" })], [assistantMessage("gave up")]]);
    const before = clock.now();
    const result = await drive(clock, run(new Agent({ name: "a", instructions: "help", model, tools }), "go", { maxTurns: 6 }));

    expect(result.finalOutput).toBe("gave up");
    expect(flaky.runs()).toBe(2); // rejected by the open circuit without running
    expect(clock.now()).toBe(before); // no wait: the probe is 60 s away
    const refused = outputSeen(model, 1, "d1");
    expect(refused).toMatch(/The tool 'flaky' is temporarily unavailable.*about 60 s: call it again then with the same arguments/);
    expect(refused).not.toMatch(/do not call/i);
    expect(refused).toContain('"error_code":"CIRCUIT_OPEN"');
    expect(refused).toContain('"recoverable":true');
    expect(toolsOffered(model, 1)).toEqual(["flaky"]); // hideOpenCircuits is off by default
  });

  it("with hideOpenCircuits, hides the tool from the next turn while its circuit is open; the other tools stay", async () => {
    const clock = createFakeClock();
    const plugin = RetryReflectPlugin.create({ clock, circuitBreakerThreshold: 2, circuitBreakerResetMs: 60_000 });
    const flaky = failing("flaky", () => new Error("upstream exploded"));
    const tools = withRetryReflect(
      [flaky.definition, { name: "other", description: "Fine", parameters: z.object({}), execute: async () => "ok" }],
      plugin,
      { hideOpenCircuits: true },
    );
    const model = new ScriptedModel([
      [functionCall("flaky", {}, { callId: "c1" })],
      [functionCall("flaky", {}, { callId: "c2" })],
      [functionCall("other", {}, { callId: "c3" })],
      [assistantMessage("used the other")],
    ]);
    const result = await drive(clock, run(new Agent({ name: "a", instructions: "help", model, tools }), "go", { maxTurns: 6 }));

    expect(result.finalOutput).toBe("used the other");
    expect(plugin.circuitState("flaky")).toBe("open");
    expect(flaky.runs()).toBe(2);
    expect(toolsOffered(model, 0)).toEqual(["flaky", "other"]);
    expect(toolsOffered(model, 1)).toEqual(["flaky", "other"]);
    expect(toolsOffered(model, 2)).toEqual(["other"]);
    expect(toolsOffered(model, 3)).toEqual(["other"]);
    await clock.advance(60_000); // past the reset time: half-open, offered again for its probe
    const next = new ScriptedModel([[assistantMessage("hi")]]);
    await run(new Agent({ name: "a", instructions: "help", model: next, tools }), "go");
    expect(toolsOffered(next, 0)).toEqual(["flaky", "other"]);
  });

  it("replays a write across two runs sharing a store and a namespace from the run's context: it runs once", async () => {
    const clock = createFakeClock();
    const store = new InMemoryIdempotencyStore({ clock });
    const plugin = RetryReflectPlugin.create({ clock, idempotency: { store }, toolEffects: { send_email: "write" } });
    const sent: Array<string | undefined> = [];
    const definitions = [
      {
        name: "send_email",
        description: "Send an email",
        parameters: z.object({ to: z.string(), body: z.string(), idempotency_key: z.string() }),
        execute: async ({ to }: { to: string }, _runContext?: RunContext<{ tenant: string }>, details?: unknown) => {
          sent.push(getToolContext(details)?.idempotencyKey);
          return `sent to ${to}`;
        },
      },
    ];
    const tools = withRetryReflect<{ tenant: string }>(definitions, plugin, {
      namespace: (_call, runContext) => `tenant:${runContext?.context.tenant}`,
    });
    // The same request, retried by the user as a new run: the model sends the same key.
    const call = () => [functionCall("send_email", { to: "a@example.com", body: "hi", idempotency_key: "invoice-42" }, { callId: "c1" })];
    for (const _ of [1, 2]) {
      const model = new ScriptedModel([call(), [assistantMessage("sent")]]);
      await drive(
        clock,
        run(new Agent<{ tenant: string }>({ name: "a", instructions: "help", model, tools }), "send it", { context: { tenant: "t1" } }),
      );
      expect(outputSeen(model, 1, "c1")).toBe("sent to a@example.com");
    }
    expect(sent).toEqual(["invoice-42"]);

    // Another tenant's identical call is its own write.
    const model = new ScriptedModel([call(), [assistantMessage("sent")]]);
    await drive(
      clock,
      run(new Agent<{ tenant: string }>({ name: "a", instructions: "help", model, tools }), "send it", { context: { tenant: "t2" } }),
    );
    expect(sent).toHaveLength(2);
  });

  it("leaves approvals to the SDK: the run interrupts before the call and, approved, runs it under the plugin", async () => {
    const clock = createFakeClock();
    const plugin = RetryReflectPlugin.create({ clock });
    let runs = 0;
    const tools = withRetryReflect(
      [
        {
          name: "delete_file",
          description: "Delete a file",
          parameters: z.object({ path: z.string() }),
          needsApproval: true,
          execute: async () => {
            runs += 1;
            if (runs === 1) throw http(400, "path must be absolute");
            return "deleted";
          },
        },
      ],
      plugin,
    );
    const model = new ScriptedModel([
      [functionCall("delete_file", { path: "a.txt" }, { callId: "c1" })],
      [functionCall("delete_file", { path: "/a.txt" }, { callId: "c2" })],
      [assistantMessage("deleted")],
    ]);
    const agent = new Agent({ name: "a", instructions: "help", model, tools });
    let result = await drive(clock, run(agent, "delete a.txt"));
    expect(runs).toBe(0);
    expect(result.interruptions).toHaveLength(1);
    expect(result.interruptions[0]).toBeInstanceOf(RunToolApprovalItem);
    result.state.approve(result.interruptions[0] as RunToolApprovalItem);
    result = await drive(clock, run(agent, result.state));
    expect(runs).toBe(1);
    expect(result.interruptions).toHaveLength(1);
    expect(outputSeen(model, 1, "c1")).toContain("The tool 'delete_file' failed");
    result.state.approve(result.interruptions[0] as RunToolApprovalItem);
    result = await drive(clock, run(agent, result.state));
    expect(runs).toBe(2);
    expect(result.finalOutput).toBe("deleted");
  });

  it("aborts a backoff with the run's signal: the run rejects with the abort reason and the tool is not run again", async () => {
    const clock = createFakeClock();
    const plugin = RetryReflectPlugin.create({ clock, initialBackoffMs: 30_000, maxBackoffMs: 30_000 });
    const slow = failing("slow_api", () => http(503, "HTTP 503"));
    const tools = withRetryReflect([slow.definition], plugin);
    const model = new ScriptedModel([[functionCall("slow_api", {}, { callId: "c1" })], [assistantMessage("never")]]);
    const controller = new AbortController();
    const running = run(new Agent({ name: "a", instructions: "help", model, tools }), "go", { signal: controller.signal });
    running.catch(() => undefined);
    for (let round = 0; round < 1000 && clock.pendingSleeps() === 0; round++) await new Promise<void>((resolve) => setImmediate(resolve));
    expect(clock.pendingSleeps()).toBe(1);
    const reason = new Error("the user cancelled");
    controller.abort(reason);

    await expect(running).rejects.toBe(reason);
    expect(slow.runs()).toBe(1);
    expect(clock.pendingSleeps()).toBe(0);
    expect(clock.now()).toBe(0);
    expect(model.calls).toHaveLength(1);
  });

  it("keeps the SDK's own default text for errors the plugin does not own (the same text as the SDK's default errorFunction)", async () => {
    const plain = tool({
      name: "t",
      description: "d",
      parameters: z.object({}),
      execute: async () => {
        throw new Error("x");
      },
    });
    expect(await plain.invoke(undefined as never, "{}")).toBe(SDK_DEFAULT_ERROR_TEXT);

    // A tool the plugin leaves out (excludeTools) fails as the SDK would have it fail.
    const plugin = RetryReflectPlugin.create({ clock: createFakeClock(), excludeTools: ["t"] });
    const [wrapped] = withRetryReflect(
      [{ name: "t", description: "d", parameters: z.object({}), execute: async () => Promise.reject(new Error("x")) }],
      plugin,
    );
    expect(await wrapped?.invoke(undefined as never, "{}")).toBe(SDK_DEFAULT_ERROR_TEXT);
    const [own] = withRetryReflect(
      [
        {
          name: "t",
          description: "d",
          parameters: z.object({}),
          execute: async () => Promise.reject(new Error("x")),
          errorFunction: (_context: unknown, error: unknown) => `own: ${(error as Error).message}`,
        },
      ],
      plugin,
    );
    expect(await own?.invoke(undefined as never, "{}")).toBe("own: x");
  });
});

describe("arguments the SDK's own parser rejects, before execute", () => {
  const weather = (seen: unknown[], errorFunction?: (context: unknown, error: unknown) => string) => ({
    name: "get_weather",
    description: "The weather in a city",
    parameters: z.object({ city: z.string() }),
    execute: async ({ city }: { city: string }) => {
      seen.push(city);
      return "sunny";
    },
    ...(errorFunction === undefined ? {} : { errorFunction }),
  });

  it("reach the model as a reflection (INVALID_ARGUMENTS, the attempt counted), not the SDK's 'Please try again'; the corrected call runs", async () => {
    const clock = createFakeClock();
    const plugin = RetryReflectPlugin.create({ clock });
    const seen: unknown[] = [];
    const ownText: unknown[] = [];
    const tools = withRetryReflect([weather(seen, (_context, error) => String(ownText.push(error)))], plugin);
    const model = new ScriptedModel([
      [functionCall("get_weather", { city: 42 }, { callId: "c1" })],
      [functionCall("get_weather", { city: "Paris" }, { callId: "c2" })],
      [assistantMessage("It is sunny.")],
    ]);
    const result = await drive(clock, run(new Agent({ name: "a", instructions: "help", model, tools }), "weather?"));

    expect(result.finalOutput).toBe("It is sunny.");
    const text = outputSeen(model, 1, "c1");
    expect(text).toContain("The tool 'get_weather' failed with:");
    expect(text).toContain("provide corrected arguments");
    expect(text).toContain('"error_code":"INVALID_ARGUMENTS"');
    // By default the SDK withholds what its parser found (and the arguments): the text says so.
    expect(text).toContain(WITHHELD_INPUT_MESSAGE);
    expect(text).not.toContain(SDK_DEFAULT_ERROR_TEXT);
    expect(seen).toEqual(["Paris"]);
    expect(ownText).toEqual([]); // the plugin owns a schema failure, as in the other adapters
  });

  it("name the fields when the SDK lets its parser's error through (sensitive data logging on)", async () => {
    setSensitiveDataLoggingEnabled(true);
    try {
      const clock = createFakeClock();
      const plugin = RetryReflectPlugin.create({ clock });
      const [wrapped] = withRetryReflect([weather([])], plugin);
      const invoke = async (input: string) => String(await drive(clock, wrapped?.invoke(undefined as never, input) as Promise<unknown>));
      const text = await invoke(JSON.stringify({ city: 42 }));
      expect(text).toContain('"error_code":"INVALID_ARGUMENTS"');
      expect(text).toContain("city: expected string; received number");
      expect(text).not.toContain(WITHHELD_INPUT_MESSAGE);
      const notJson = await invoke("{not json");
      expect(notJson).toContain("The arguments are not valid JSON.");
    } finally {
      setSensitiveDataLoggingEnabled(false);
    }
  });

  it("count against maxRetries: once the budget is spent the model is told to stop", async () => {
    const clock = createFakeClock();
    const plugin = RetryReflectPlugin.create({ clock, maxRetries: 1 });
    const [wrapped] = withRetryReflect([weather([])], plugin);
    const runContext = {} as RunContext<unknown>; // one run: one scope
    const invoke = async (input: string) => String(await drive(clock, wrapped?.invoke(runContext as never, input) as Promise<unknown>));
    const first = await invoke(JSON.stringify({ city: 1 }));
    const second = await invoke(JSON.stringify({ city: 2 }));
    expect(first).toContain("provide corrected arguments");
    expect(second).toContain('"error_code":"RETRIES_EXHAUSTED"');
    expect(second).toContain("Do not call 'get_weather' again");
  });

  it("take the plugin's fallback value as the tool's output once the call fails (here maxRetries: 0), as any failure of the tool would", async () => {
    const plugin = RetryReflectPlugin.create({ clock: createFakeClock(), maxRetries: 0, fallback: () => "no weather today" });
    const [wrapped] = withRetryReflect([weather([])], plugin);
    expect(await wrapped?.invoke(undefined as never, JSON.stringify({ city: 42 }))).toBe("no weather today");
  });

  it("keep the definition's own errorFunction for a tool the plugin leaves out", async () => {
    const plugin = RetryReflectPlugin.create({ clock: createFakeClock(), excludeTools: ["get_weather"] });
    const [wrapped] = withRetryReflect([weather([], (_context, error) => `own: ${(error as Error).message}`)], plugin);
    expect(await wrapped?.invoke(undefined as never, JSON.stringify({ city: 42 }))).toBe("own: Invalid JSON input for tool");
  });
});
