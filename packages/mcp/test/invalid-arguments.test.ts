import { createFakeClock } from "@retry-reflect/core/testing";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { withRetryReflect } from "../src/index.js";
import { connect, drive, firstText, recordEvents, text } from "./helpers.js";

describe("arguments the server's schema rejects", () => {
  it("come back as a reflection (INVALID_ARGUMENTS, the tool not run), and the corrected call succeeds after the backoff gate", async () => {
    const seen: unknown[] = [];
    const { client } = await connect((server) => {
      server.registerTool(
        "get_weather",
        { inputSchema: { city: z.string(), units: z.enum(["celsius", "fahrenheit"]) }, annotations: { readOnlyHint: true } },
        async (args) => {
          seen.push(args);
          return text('{"temperature":22,"condition":"sunny"}');
        },
      );
    });
    const clock = createFakeClock();
    const recorder = recordEvents();
    const tools = withRetryReflect(client, { clock, observers: [recorder] });

    const first = await drive(clock, tools.callTool({ name: "get_weather", arguments: { city: "nyc", units: "kelvin" } }));

    expect(first.isError).toBe(true);
    expect(seen).toEqual([]); // the server's zod schema refused the call: the handler never ran
    const structured = first.structuredContent as Record<string, unknown>;
    expect(structured).toMatchObject({ error_code: "INVALID_ARGUMENTS", recoverable: true });
    expect(String(structured.message)).toMatch(/^Input validation error: Invalid arguments for tool get_weather: .*units/s);
    expect(firstText(first)).toMatch(
      /^The tool 'get_weather' failed with: "Input validation error: [\s\S]*Analyze what went wrong and provide corrected arguments\./,
    );
    expect(first._meta).toEqual({ "retry-reflect/outcome": { status: "reflect", attempt: 1 } });

    const corrected = await drive(clock, tools.callTool({ name: "get_weather", arguments: { city: "NYC", units: "celsius" } }));

    expect(corrected.isError).toBeUndefined();
    expect(firstText(corrected)).toBe('{"temperature":22,"condition":"sunny"}');
    expect(seen).toEqual([{ city: "NYC", units: "celsius" }]);
    expect(clock.now()).toBe(500); // the corrected call waited out the gate: the model's round trip would count towards it
    expect(recorder.lines().at(-1)).toBe(`INFO retry succeeded tool_name="get_weather" attempt=2`);
  });

  it("treats a thrown McpError InvalidParams (-32602) as INVALID_ARGUMENTS", async () => {
    const { McpError, ErrorCode } = await import("@modelcontextprotocol/sdk/types.js");
    const client = {
      callTool: async () => {
        throw new McpError(ErrorCode.InvalidParams, "Invalid arguments for tool get_weather: units must be celsius or fahrenheit");
      },
      listTools: async () => ({ tools: [] }),
    };
    const clock = createFakeClock();
    const tools = withRetryReflect(client, { clock });

    const result = await tools.callTool({ name: "get_weather", arguments: { units: "kelvin" } });

    expect(result.isError).toBe(true);
    expect(result.structuredContent).toMatchObject({
      error_code: "INVALID_ARGUMENTS",
      message: "Invalid arguments for tool get_weather: units must be celsius or fahrenheit",
    });
  });
});
