import { AIMessage, type ToolMessage } from "@langchain/core/messages";
import { fakeModel } from "@langchain/core/testing";
import { ToolInputParsingException, tool } from "@langchain/core/tools";
import { RetryReflectPlugin, ToolError } from "@retry-reflect/core";
import { createFakeClock } from "@retry-reflect/core/testing";
import { createAgent } from "langchain";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { z as z3 } from "zod/v3";
import { retryReflectMiddleware, toFailure } from "../src/index.js";
import { callTools, drive, fieldOf, recordEvents } from "./helpers.js";

describe("arguments that fail the tool's zod schema (ToolInputParsingException)", () => {
  it("reach the model as INVALID_ARGUMENTS naming each bad field, its allowed values and what was received", async () => {
    const clock = createFakeClock();
    const recorder = recordEvents();
    const plugin = RetryReflectPlugin.create({ clock, observers: [recorder], circuitBreakerThreshold: 1 });
    let calls = 0;
    const getWeather = tool(
      async ({ city, units }) => {
        calls += 1;
        return `22 ${units} in ${city}`;
      },
      {
        name: "get_weather",
        description: "Current weather of a city.",
        schema: z.object({ city: z.string(), units: z.enum(["celsius", "fahrenheit"]) }),
      },
    );
    const model = fakeModel()
      .respond(callTools({ name: "get_weather", args: { units: "kelvin" }, id: "call_1" }))
      .respond(callTools({ name: "get_weather", args: { city: "NYC", units: "celsius" }, id: "call_2" }))
      .respond(new AIMessage("22 °C"));
    const agent = createAgent({ model, tools: [getWeather], middleware: [retryReflectMiddleware(plugin)] });

    const result = await drive(clock, agent.invoke({ messages: [{ role: "user", content: "weather?" }] }));

    const message = result.messages[2] as ToolMessage;
    expect(message.status).toBe("error");
    const expectedError = "city: expected string; missing\nunits: expected one of celsius, fahrenheit; received kelvin";
    expect(String(message.content).split("\n\n")[0]).toBe(
      `The tool 'get_weather' failed with: ${JSON.stringify(expectedError)}. Analyze what went wrong and provide corrected arguments.`,
    );
    expect(message.artifact).toMatchObject({
      error_code: "INVALID_ARGUMENTS",
      message: expectedError,
      recoverable: true,
      details: {
        fields: [
          { field: "city", expected: "string", received: null },
          { field: "units", allowed: ["celsius", "fahrenheit"], received: "kelvin" },
        ],
      },
    });
    expect(String(message.content)).not.toContain("    at "); // no stack trace reaches the model
    expect(calls).toBe(1); // only the corrected call ran the tool
    expect((result.messages[4] as ToolMessage).content).toBe("22 celsius in NYC");
    // The model erred, not the tool: the breaker (threshold 1 here) does not count it.
    expect(plugin.circuitState("get_weather")).toBe("closed");
    expect(recorder.events.map((event) => [event.type, fieldOf(event, "attempt")])).toEqual([
      ["retry", 1],
      ["waiting_before_retry", undefined],
      ["retry_succeeded", 2],
    ]);
  });

  it("tell the model the type it sent when the schema wanted another", async () => {
    const clock = createFakeClock();
    const plugin = RetryReflectPlugin.create({ clock });
    let calls = 0;
    const pay = tool(
      async ({ amount }) => {
        calls += 1;
        return `paid ${amount}`;
      },
      {
        name: "pay",
        description: "Pays an amount.",
        schema: z.object({
          amount: z.number(),
          confirm: z.boolean(),
          note: z.string(),
          tags: z.array(z.string()),
          units: z.enum(["celsius", "fahrenheit"]),
        }),
      },
    );
    const model = fakeModel()
      .respond(callTools({ name: "pay", args: { amount: "123", confirm: "true", note: 5, tags: { a: 1 }, units: 5 }, id: "call_1" }))
      .respond(callTools({ name: "pay", args: { amount: 123, confirm: true, note: "rent", tags: [], units: "celsius" }, id: "call_2" }))
      .respond(new AIMessage("paid"));
    const agent = createAgent({ model, tools: [pay], middleware: [retryReflectMiddleware(plugin)] });

    const result = await drive(clock, agent.invoke({ messages: [{ role: "user", content: "pay 123" }] }));

    const message = result.messages[2] as ToolMessage;
    expect(message.status).toBe("error");
    const expectedError = [
      'amount: expected number; received string "123"',
      'confirm: expected boolean; received string "true"',
      "note: expected string; received number 5",
      'tags: expected array; received object {"a":1}',
      "units: expected one of celsius, fahrenheit; received number 5",
    ].join("\n");
    expect(String(message.content).split("\n\n")[0]).toBe(
      `The tool 'pay' failed with: ${JSON.stringify(expectedError)}. Analyze what went wrong and provide corrected arguments.`,
    );
    expect(message.artifact).toMatchObject({
      error_code: "INVALID_ARGUMENTS",
      message: expectedError,
      details: {
        fields: [
          { field: "amount", expected: "number", received: 'string "123"' },
          { field: "confirm", expected: "boolean", received: 'string "true"' },
          { field: "note", expected: "string", received: "number 5" },
          { field: "tags", expected: "array", received: 'object {"a":1}' },
          { field: "units", allowed: ["celsius", "fahrenheit"], received: "number 5" },
        ],
      },
    });
    expect(calls).toBe(1);
    expect((result.messages[4] as ToolMessage).content).toBe("paid 123");
  });

  it("a call of a tool that does not exist is reflected to the model with the list of valid tools", async () => {
    const clock = createFakeClock();
    const plugin = RetryReflectPlugin.create({ clock });
    const echo = tool(async ({ text }) => text, { name: "echo", description: "Echo.", schema: z.object({ text: z.string() }) });
    const model = fakeModel()
      .respond(callTools({ name: "ech0", args: { text: "hi" }, id: "call_1" }))
      .respond(new AIMessage("oops"));
    const agent = createAgent({ model, tools: [echo], middleware: [retryReflectMiddleware(plugin)] });
    const result = await drive(clock, agent.invoke({ messages: [{ role: "user", content: "echo hi" }] }));
    const message = result.messages[2] as ToolMessage;
    expect(message.status).toBe("error");
    expect(String(message.content)).toContain("The tool 'ech0' failed with:");
    expect(String(message.content)).toContain("try one of [echo]");
  });
});

describe("toFailure", () => {
  const schema = z.object({ city: z.string(), units: z.enum(["celsius", "fahrenheit"]) });
  const args = { city: "NYC", units: "kelvin" };

  it("names the bad fields of input that did not parse, and keeps what was thrown as the failure's cause", async () => {
    const thrown = new ToolInputParsingException("Received tool input did not match expected schema", JSON.stringify(args));
    const failure = await toFailure(thrown, schema, args);
    expect(ToolError.isInstance(failure)).toBe(true);
    expect(failure).toMatchObject({ code: "INVALID_ARGUMENTS", message: "units: expected one of celsius, fahrenheit; received kelvin" });
    expect((failure as ToolError).cause).toBe(thrown);
  });

  it("parses again synchronously where it can, leaving V8's stack capture as it was", async () => {
    const before = Error.stackTraceLimit;
    const thrown = new ToolInputParsingException("Received tool input did not match expected schema", JSON.stringify(args));
    const failure = await toFailure(thrown, schema, args);
    expect(failure).toMatchObject({ code: "INVALID_ARGUMENTS", message: "units: expected one of celsius, fahrenheit; received kelvin" });
    expect(Error.stackTraceLimit).toBe(before);
    expect(new Error("after").stack).toContain("\n    at ");
  });

  it("names the bad fields of a schema that only parses asynchronously (an async refinement), and of a zod 3 schema", async () => {
    const asyncSchema = z.object({ city: z.string().refine(async (city) => city.length > 0), units: z.enum(["celsius", "fahrenheit"]) });
    expect(() => asyncSchema.safeParse(args)).toThrow(); // zod cannot parse it synchronously
    const thrown = new ToolInputParsingException("Received tool input did not match expected schema", JSON.stringify(args));
    expect(await toFailure(thrown, asyncSchema, args)).toMatchObject({
      code: "INVALID_ARGUMENTS",
      message: "units: expected one of celsius, fahrenheit; received kelvin",
    });
    const v3 = z3.object({ city: z3.string(), units: z3.enum(["celsius", "fahrenheit"]) });
    expect(await toFailure(thrown, v3, args)).toMatchObject({
      code: "INVALID_ARGUMENTS",
      message: "units: expected one of celsius, fahrenheit; received kelvin",
    });
  });

  it("names the bad fields of a ZodError the tool threw itself, the ZodError its cause", async () => {
    const parsed = schema.safeParse(args);
    if (parsed.success) throw new Error("expected a parse failure");
    const failure = await toFailure(parsed.error, schema, args);
    expect(failure).toMatchObject({ code: "INVALID_ARGUMENTS", message: "units: expected one of celsius, fahrenheit; received kelvin" });
    expect((failure as ToolError).cause).toBe(parsed.error);
  });
});
