import { ToolMessage } from "@langchain/core/messages";
import { GraphInterrupt } from "@langchain/langgraph";
import type { RetryReflectPlugin as Plugin, ToolEffect } from "@retry-reflect/core";
import { RetryReflectPlugin, ToolError } from "@retry-reflect/core";
import { createFakeClock } from "@retry-reflect/core/testing";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { LangChainHostCall, type ToolContextMode } from "../src/run-tool.js";

interface CallFields {
  readonly args: unknown;
  readonly signal: AbortSignal | undefined;
  readonly effect: ToolEffect | undefined;
  readonly toolContext: ToolContextMode | undefined;
}

/** A host call whose tool is a test function. */
class TestCall<R> extends LangChainHostCall<R> {
  constructor(
    plugin: Plugin,
    fields: CallFields,
    private readonly tool: (args: unknown) => Promise<R>,
  ) {
    const effect = fields.effect ?? plugin.effectOf("tool");
    super(
      plugin,
      { toolName: "tool", effect, scope: "s", namespace: "s" },
      fields.args,
      "call_1",
      fields.signal,
      undefined,
      fields.toolContext,
    );
  }

  protected threadId(): undefined {
    return undefined;
  }

  protected graphState(): undefined {
    return undefined;
  }

  protected ask(): string {
    return "s";
  }

  protected invoke(args: unknown): Promise<R> {
    return this.tool(args);
  }
}

const runLangChainTool = <R>(call: TestCall<R>) => call.outcome();

import { getToolContext } from "../src/tool-context.js";

function setup(options: Parameters<typeof RetryReflectPlugin.create>[0] = {}) {
  const clock = createFakeClock();
  const events: string[] = [];
  const ends: string[] = [];
  const plugin = RetryReflectPlugin.create({
    clock,
    observers: [{ onEvent: (event) => void events.push(event.type), onCallEnd: (_call, end) => void ends.push(end.status) }],
    ...options,
  });
  const call = <R>(invoke: (args: unknown) => Promise<R>, extra: Partial<CallFields> = {}): TestCall<R> =>
    new TestCall(plugin, { args: { a: 1 }, signal: undefined, effect: undefined, toolContext: undefined, ...extra }, invoke);
  return { clock, plugin, events, ends, call };
}

describe("runLangChainTool", () => {
  it("rethrows a GraphInterrupt as the same object: no failure, no event, the call ends 'interrupted'", async () => {
    const { events, ends, call, plugin } = setup({ circuitBreakerThreshold: 1 });
    const pause = new GraphInterrupt([{ id: "i", value: "approve?" }]);
    await expect(runLangChainTool(call(async () => Promise.reject(pause)))).rejects.toBe(pause);
    expect(events).toEqual([]);
    expect(ends).toEqual(["interrupted"]);
    expect(plugin.circuits.size).toBe(0);
  });

  it("rejects with the run's abort reason when the tool fails after the signal aborted, counting nothing", async () => {
    const { call, events } = setup();
    const controller = new AbortController();
    const reason = new Error("stop");
    const thrown = Object.assign(new Error("aborted"), { name: "AbortError" });
    const result = runLangChainTool(
      call(
        async () => {
          controller.abort(reason);
          throw thrown;
        },
        { signal: controller.signal },
      ),
    );
    await expect(result).rejects.toBe(reason);
    expect(events).toEqual([]);
  });

  it("an already aborted run does not run the tool", async () => {
    const { call } = setup();
    const controller = new AbortController();
    const reason = new Error("stop");
    controller.abort(reason);
    let ran = false;
    await expect(
      runLangChainTool(
        call(
          async () => {
            ran = true;
          },
          { signal: controller.signal },
        ),
      ),
    ).rejects.toBe(reason);
    expect(ran).toBe(false);
  });

  it("an out-of-scope tool's error and error result pass through untouched", async () => {
    const { call, events } = setup({ excludeTools: ["tool"] });
    const thrown = new Error("exit");
    await expect(runLangChainTool(call(async () => Promise.reject(thrown)))).rejects.toBe(thrown);
    const errorMessage = new ToolMessage({ content: "nope", tool_call_id: "call_1", status: "error" });
    await expect(runLangChainTool(call(async () => errorMessage))).resolves.toEqual({ status: "passthrough", value: errorMessage });
    expect(events).toEqual([]);
  });

  it("a returned error ToolMessage is a failure: reflect with its text", async () => {
    const { call } = setup();
    const result = await runLangChainTool(
      call(
        async () =>
          new ToolMessage({ content: "Error: nope is not a valid tool, try one of [a, b].", tool_call_id: "call_1", status: "error" }),
      ),
    );
    expect(result.status).toBe("reflect");
    if (result.status === "reflect") expect(result.error.message).toBe("Error: nope is not a valid tool, try one of [a, b].");
  });

  it("a returned error ToolMessage whose artifact is the seed's shape keeps its code", async () => {
    const { call } = setup();
    const artifact = new ToolError({
      code: "RECORD_NOT_FOUND",
      message: "no order 7",
      recoverable: true,
      suggestedAction: "Check the order id.",
    }).toJSON();
    const result = await runLangChainTool(
      call(async () => new ToolMessage({ content: "no order 7", artifact, tool_call_id: "call_1", status: "error" })),
    );
    expect(result.status).toBe("reflect");
    const { suggested_action, ...rest } = artifact;
    if (result.status === "reflect") expect(result.error.toJSON()).toMatchObject({ ...rest, tool_suggested_action: suggested_action });
  });

  it("a ZodError thrown by the tool becomes INVALID_ARGUMENTS naming the field", async () => {
    const { call } = setup();
    const schema = z.object({ units: z.enum(["celsius", "fahrenheit"]) });
    const result = await runLangChainTool(call(async (args) => schema.parse(args), { args: { units: "kelvin" } }));
    expect(result.status).toBe("reflect");
    if (result.status === "reflect") {
      expect(result.error.code).toBe("INVALID_ARGUMENTS");
      expect(result.error.message).toBe("units: expected one of celsius, fahrenheit; received kelvin");
    }
  });

  it("the tool reads its context (attempt, key) through getToolContext()", async () => {
    const { call } = setup();
    const seen: unknown[] = [];
    const result = await runLangChainTool(
      call(async () => seen.push(getToolContext()), { effect: "write", args: { idempotency_key: "k1" } }),
    );
    expect(result.status).toBe("success");
    expect(seen).toEqual([expect.objectContaining({ attempt: 1, idempotencyKey: "k1", toolName: "tool", callId: "call_1" })]);
  });

  it("sets getToolContext() for write tools by default, and for every tool with toolContext 'all'", async () => {
    const { call } = setup();
    const seen: unknown[] = [];
    await runLangChainTool(call(async () => seen.push(getToolContext())));
    await runLangChainTool(call(async () => seen.push(getToolContext()), { toolContext: "all" }));
    expect(seen).toEqual([undefined, expect.objectContaining({ attempt: 1, toolName: "tool", callId: "call_1" })]);
  });
});

describe("a returned ToolMessage read as a success or a failure", () => {
  const report = JSON.stringify({ error_code: "UPSTREAM_DOWN", message: "down", recoverable: false, suggested_action: "stop" });
  const outcomeOf = (content: string) => {
    const plugin = RetryReflectPlugin.create({ clock: createFakeClock() });
    const fields = { args: {}, signal: undefined, effect: undefined, toolContext: undefined };
    return runLangChainTool(new TestCall(plugin, fields, async () => new ToolMessage({ content, tool_call_id: "call_1" })));
  };

  it("a structured error report in the text is a failure wherever the JSON starts after white space", async () => {
    for (const content of [report, ` ${report}`, `\n\t${report}`, `\u00a0${report}`, `\u3000${report}`]) {
      const outcome = await outcomeOf(content);
      expect(outcome.status, JSON.stringify(content.slice(0, 3))).toBe("failed");
      expect(outcome.status === "failed" && outcome.error.code).toBe("UPSTREAM_DOWN");
    }
  });

  it("plain text, empty text and non-ASCII text are successes", async () => {
    for (const content of ["ok", "", "été 22 °C", `say ${report}`]) expect((await outcomeOf(content)).status).toBe("success");
  });
});
