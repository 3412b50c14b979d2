import { RetryReflectPlugin } from "@retry-reflect/core";
import { createFakeClock } from "@retry-reflect/core/testing";
import { generateText, stepCountIs, tool } from "ai";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { RetryReflectToolError, withRetryReflect } from "../src/index.js";
import { callTools, drive, errorText, reply, scriptedModel, toolOutputsSeen, toolsOffered } from "./helpers.js";

// Any MCP server may name its tools `__proto__` or `constructor`: the wrapped tool set holds them as
// tools like any other, never as its prototype.

describe("tools named __proto__ and constructor", () => {
  it("are offered to the model and run under the plugin", async () => {
    const clock = createFakeClock();
    const plugin = RetryReflectPlugin.create({ clock });
    const ran: string[] = [];
    const failing = tool({
      description: "A tool with an unlucky name.",
      inputSchema: z.object({ units: z.string() }),
      execute: async ({ units }) => {
        ran.push(`__proto__(${units})`);
        if (units !== "celsius") throw new Error("Invalid units. Supported: celsius");
        return "ok";
      },
    });
    const constructorTool = tool({
      description: "Another one.",
      inputSchema: z.object({}),
      execute: async () => {
        ran.push("constructor");
        return "built";
      },
    });
    // A computed key makes an own property named `__proto__`, as `JSON.parse` of a server's listing does.
    const tools = withRetryReflect({ ["__proto__"]: failing, constructor: constructorTool }, plugin);
    expect(Object.keys(tools)).toEqual(["__proto__", "constructor"]);
    expect(Object.getPrototypeOf(tools)).toBe(Object.prototype);

    const model = scriptedModel(
      callTools({ name: "__proto__", input: { units: "kelvin" }, id: "call_1" }, { name: "constructor", input: {}, id: "call_2" }),
      callTools({ name: "__proto__", input: { units: "celsius" }, id: "call_3" }),
      reply("Done."),
    );
    const result = await drive(clock, generateText({ model, tools, stopWhen: stepCountIs(5), prompt: "go" }));

    expect(toolsOffered(model.doGenerateCalls[0])).toEqual(["__proto__", "constructor"]);
    expect(ran).toEqual(["__proto__(kelvin)", "constructor", "__proto__(celsius)"]);
    const [reflected, built] = toolOutputsSeen(model.doGenerateCalls[1]);
    expect(errorText(reflected)).toMatch(/^The tool '__proto__' failed with: "Invalid units\. Supported: celsius"\./);
    expect(built?.output).toEqual({ type: "text", value: "built" });
    expect(result.steps[0]?.content.some((part) => part.type === "tool-error" && RetryReflectToolError.isInstance(part.error))).toBe(true);
    expect(result.text).toBe("Done.");
  });
});
