import { tool } from "@openai/agents";
import { InvalidOptionError, RetryReflectPlugin } from "@retry-reflect/core";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { withRetryReflect } from "../src/index.js";

const definition = { name: "t", description: "d", parameters: z.object({}), execute: async () => "ok" };

describe("withRetryReflect's arguments", () => {
  const plugin = RetryReflectPlugin.create({});

  it.each([
    ["definitions", () => withRetryReflect({} as never, plugin), "definitions"],
    ["a built tool", () => withRetryReflect([tool(definition)] as never, plugin), "definitions[0]"],
    ["a definition without execute", () => withRetryReflect([{ ...definition, execute: 1 }] as never, plugin), "definitions[0].execute"],
    ["the plugin", () => withRetryReflect([definition], null as never), "pluginOrOptions"],
    ["an unknown adapter option", () => withRetryReflect([definition], plugin, { maxRetries: 1 } as never), "maxRetries"],
    ["scope", () => withRetryReflect([definition], plugin, { scope: "" }), "scope"],
    ["namespace", () => withRetryReflect([definition], plugin, { namespace: 3 as never }), "namespace"],
    ["hideOpenCircuits", () => withRetryReflect([definition], plugin, { hideOpenCircuits: "yes" as never }), "hideOpenCircuits"],
    ["toolEffects", () => withRetryReflect([definition], plugin, { toolEffects: { t: "delete" as never } }), "toolEffects.t"],
  ])("rejects a bad %s with an InvalidOptionError naming it", (_what, wrap, option) => {
    expect(wrap).toThrow(InvalidOptionError);
    expect(wrap).toThrow(`\`${option}\``);
  });

  it("keeps what the definition declares: name, description, parameters, strict, needsApproval", async () => {
    const [wrapped] = withRetryReflect([{ ...definition, name: "send_email", needsApproval: true }], plugin);
    const plain = tool({ ...definition, name: "send_email", needsApproval: true });
    expect(wrapped?.name).toBe("send_email");
    expect(wrapped?.description).toBe("d");
    expect(wrapped?.parameters).toEqual(plain.parameters);
    expect(wrapped?.strict).toBe(true);
    expect(await wrapped?.needsApproval(undefined as never, {} as never)).toBe(true);
  });
});
