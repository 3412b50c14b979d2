import { InvalidOptionError, RetryReflectPlugin } from "@retry-reflect/core";
import { describe, expect, it } from "vitest";
import { withRetryReflect } from "../src/index.js";

const client = { callTool: async () => ({ content: [] }), listTools: async () => ({ tools: [] }) };

function failure(run: () => unknown): InvalidOptionError {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(InvalidOptionError);
    return error as InvalidOptionError;
  }
  throw new Error("expected an InvalidOptionError");
}

describe("invalid inputs fail at withRetryReflect, naming the option and the value", () => {
  it.each([
    [
      "client",
      () => withRetryReflect(null as never),
      "Invalid option `client`: expected an MCP Client (an object with callTool and listTools), received null",
    ],
    [
      "client",
      () => withRetryReflect({ callTool: () => undefined } as never),
      "Invalid option `client`: expected an MCP Client (an object with callTool and listTools), received object",
    ],
    [
      "maxRetries",
      () => withRetryReflect(client, { maxRetries: -1 }),
      "Invalid option `maxRetries`: expected an integer >= 0, received -1",
    ],
    [
      "scope",
      () => withRetryReflect(client, {}, { scope: 42 as never }),
      "Invalid option `scope`: expected a non-empty string or a function of the call, received 42",
    ],
    [
      "scope",
      () => withRetryReflect(client, {}, { scope: "" }),
      'Invalid option `scope`: expected a non-empty string or a function of the call, received ""',
    ],
    [
      "toolEffects.send_email",
      () => withRetryReflect(client, {}, { toolEffects: { send_email: "delete" as never } }),
      'Invalid option `toolEffects.send_email`: expected one of "read", "idempotent", "write", received "delete"',
    ],
    [
      "toolEffects",
      () => withRetryReflect(client, {}, { toolEffects: [] as never }),
      "Invalid option `toolEffects`: expected an object, received an array",
    ],
    [
      "trustAnnotations",
      () => withRetryReflect(client, {}, { trustAnnotations: "yes" as never }),
      'Invalid option `trustAnnotations`: expected a boolean, received "yes"',
    ],
    [
      "scpoe",
      () => withRetryReflect(client, {}, { scpoe: "run-1" } as never),
      'Invalid option `scpoe`: expected a known adapter option (one of scope, namespace, toolEffects, trustAnnotations); the plugin\'s options go in the second argument, received "run-1"',
    ],
    [
      "adapterOptions",
      () => withRetryReflect(client, {}, "run-1" as never),
      'Invalid option `adapterOptions`: expected an object ({ scope?, namespace?, toolEffects?, trustAnnotations? }), received "run-1"',
    ],
  ])("%s", (option, run, message) => {
    const error = failure(run);
    expect(error.option).toBe(option);
    expect(error.message).toBe(message);
  });

  it("adapter options next to the plugin's options are refused by the plugin (they are the third argument)", () => {
    expect(failure(() => withRetryReflect(client, { scope: "run-1" } as never)).option).toBe("scope");
  });

  it("accepts a plugin, or its options, and exposes the plugin", () => {
    const plugin = RetryReflectPlugin.create({ maxRetries: 1 });
    expect(withRetryReflect(client, plugin).plugin).toBe(plugin);
    expect(withRetryReflect(client, { maxRetries: 2 }).plugin.options.maxRetries).toBe(2);
    expect(withRetryReflect(client).client).toBe(client);
  });
});
