import { Agent } from "@mastra/core/agent";
import { createTool } from "@mastra/core/tools";
import { RetryReflectPlugin } from "@retry-reflect/core";
import { createFakeClock } from "@retry-reflect/core/testing";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { callTools, drive, errorText, reply, scriptedModel, toolOutputsSeen, toolsOffered } from "../../ai-sdk/test/helpers.js";
import { RetryReflectToolError, withRetryReflect } from "../src/index.js";

// Any MCP server may name its tools `__proto__` or `constructor`: the wrapped tools hold them as
// tools like any other, never as their prototype.

function unitsTool(id: string, ran: string[]) {
  return createTool({
    id,
    description: "A tool with an unlucky name.",
    inputSchema: z.object({ units: z.string() }),
    execute: async ({ units }) => {
      ran.push(`${id}(${units})`);
      if (units !== "celsius") throw new Error("Invalid units. Supported: celsius");
      return { ok: true };
    },
  });
}

describe("Mastra tools named __proto__ and constructor", () => {
  it("are tools of the wrapped set, each run under the plugin", async () => {
    const clock = createFakeClock();
    const ran: string[] = [];
    // A computed key makes an own property named `__proto__`, as `JSON.parse` of a server's listing does.
    const given = { ["__proto__"]: unitsTool("__proto__", ran), constructor: unitsTool("constructor", ran) };
    const tools = withRetryReflect(given, RetryReflectPlugin.create({ clock }));

    expect(Object.keys(tools)).toEqual(["__proto__", "constructor"]);
    expect(Object.getPrototypeOf(tools)).toBe(Object.prototype);
    for (const name of ["__proto__", "constructor"] as const) {
      const tool = Object.getOwnPropertyDescriptor(tools, name)?.value as {
        execute: (input: unknown, context?: unknown) => Promise<unknown>;
      };
      const failed = await drive(clock, tool.execute({ units: "kelvin" })).catch((error: unknown) => error);
      expect(RetryReflectToolError.isInstance(failed)).toBe(true);
      expect((failed as Error).message).toMatch(new RegExp(`^The tool '${name}' failed with: "Invalid units\\. Supported: celsius"\\.`));
    }
    expect(ran).toEqual(["__proto__(kelvin)", "constructor(kelvin)"]);
  });

  it("constructor is offered to the model by a real Agent.generate and run under the plugin", async () => {
    // (Mastra 1.71.0 itself drops a tool named `__proto__` when it lists an agent's tools: its
    // `ensureToolProperties` assigns them into a plain object. Nothing of ours can offer it there.)
    const clock = createFakeClock();
    const ran: string[] = [];
    const tools = withRetryReflect({ constructor: unitsTool("constructor", ran) }, RetryReflectPlugin.create({ clock }));
    const model = scriptedModel(
      callTools({ name: "constructor", input: { units: "kelvin" }, id: "call_1" }),
      callTools({ name: "constructor", input: { units: "celsius" }, id: "call_2" }),
      reply("Done."),
    );
    const agent = new Agent({ id: "assistant", name: "assistant", instructions: "Use the tools.", model, tools: tools as never });
    const result = await drive(clock, agent.generate("go", { maxSteps: 5 }));

    expect(toolsOffered(model.doGenerateCalls[0])).toEqual(["constructor"]);
    expect(ran).toEqual(["constructor(kelvin)", "constructor(celsius)"]);
    expect(errorText(toolOutputsSeen(model.doGenerateCalls[1])[0])).toMatch(
      /^The tool 'constructor' failed with: "Invalid units\. Supported: celsius"\./,
    );
    expect(result.text).toBe("Done.");
  });
});
